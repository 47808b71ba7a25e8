// How the commands a worker runs export their spans to the service without its API key (with it,
// an agent under test could read the datasets' expected outputs): a span token, good for span
// export to the key's project and nothing else, in the environment OpenTelemetry's SDKs read.
// Asked for when a command first needs it, and again once half its life has passed.
import type { WorkerProtocol } from './worker-protocol.ts';

/** How long asking for a token may take before a command starts without one. */
const askTimeoutMs = 5_000;
/** After a failed ask, commands start without a token this long before it is asked for again. */
const askAgainAfterMs = 60_000;

export class SpanExport {
  private current: { env: NodeJS.ProcessEnv; renewAt: number } | undefined;
  private asking: Promise<NodeJS.ProcessEnv> | undefined;
  private failedAt: number | undefined;

  /**
   * `ownEndpoint`: the worker's environment names an OTLP endpoint of its own (its spans go
   * there), so the token is passed as OVERMIND_SPAN_TOKEN only.
   */
  constructor(
    private readonly protocol: WorkerProtocol,
    private readonly ownEndpoint: boolean,
    private readonly log: (line: string) => void,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** The variables to add to a command's environment ({} while no token can be had: the command runs without). */
  env(): Promise<NodeJS.ProcessEnv> {
    const now = this.nowMs();
    if (this.current && now < this.current.renewAt) return Promise.resolve(this.current.env);
    if (this.failedAt !== undefined && now < this.failedAt + askAgainAfterMs) return Promise.resolve(this.current?.env ?? {});
    this.asking ??= this.ask().finally(() => (this.asking = undefined));
    return this.asking;
  }

  private async ask(): Promise<NodeJS.ProcessEnv> {
    try {
      const issued = await this.protocol.spanToken(AbortSignal.timeout(askTimeoutMs));
      const expiresAt = Date.parse(issued.expires_at);
      const env: NodeJS.ProcessEnv = { OVERMIND_SPAN_TOKEN: issued.token };
      if (!this.ownEndpoint) {
        env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = this.protocol.tracesUrl;
        env.OTEL_EXPORTER_OTLP_TRACES_HEADERS = `Authorization=Bearer%20${issued.token}`;
      }
      const now = this.nowMs();
      this.current = { env, renewAt: now + (expiresAt - now) / 2 };
      this.failedAt = undefined;
      return env;
    } catch (error) {
      if (this.failedAt === undefined) this.log(`no span token (commands run without one; their spans are not exported; asked again each minute): ${error instanceof Error ? error.message : String(error)}`);
      this.failedAt = this.nowMs();
      return this.current?.env ?? {};
    }
  }
}

/** Whether the worker's environment sends OpenTelemetry traces somewhere of its own. */
export function hasOwnTracesEndpoint(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}
