// Whether the store can take writes. A failed commit marks it unhealthy; any later successful
// commit, or a probe write from the health check, marks it healthy again.
import type { Kv } from './kv.ts';

export class StoreHealth {
  private healthy = true;
  private lastError: string | null = null;

  constructor(private readonly kv: Kv) {}

  get isHealthy(): boolean {
    return this.healthy;
  }

  get reason(): string | null {
    return this.lastError;
  }

  record(ok: boolean, error?: unknown): void {
    this.healthy = ok;
    this.lastError = ok ? null : error instanceof Error ? error.message : String(error);
  }

  /** Tries a tiny durable write; the answer is whether the store can serve now. */
  async probe(atMs: number): Promise<boolean> {
    try {
      await this.kv.write([{ db: this.kv.db('meta'), key: ['probe'], value: atMs }]);
      this.record(true);
    } catch (error) {
      this.record(false, error);
    }
    return this.healthy;
  }
}
