// GET /api/events/: the change feed as server-sent events. A stream shows what the caller's lists
// would show (the projects it can see, an API key's own only), narrowed by `project`, `agent`,
// `job` and `types`. `Last-Event-ID` resumes after that event while the feed's log still holds
// what followed it; otherwise the stream opens with `event: reset` (reload what you show). A
// heartbeat comment keeps proxies from closing an idle stream and checks that the credentials
// still hold; a reader that lets too many bytes pile up is disconnected rather than buffered.
import type { ServerResponse } from 'node:http';
import type { Authenticator, Principal } from '../../auth/authenticate.ts';
import type { Limits } from '../../config.ts';
import { changeTypes, type ChangeType } from '../../events/changes.ts';
import type { ChangeFeed, FeedEvent, Subscriber } from '../../events/change-feed.ts';
import { invalid } from '../../domain/rejection.ts';
import type { Tenancy } from '../../tenancy.ts';
import { canonicalUuid } from '../../validation/validator.ts';
import { fail } from '../errors.ts';
import type { ApiContext, Route } from '../route.ts';

/** What a stream narrows the feed to; null means any. */
export interface StreamFilter {
  project: string | null;
  agent: string | null;
  job: string | null;
  types: ReadonlySet<ChangeType> | null;
}

const knownTypes: ReadonlySet<string> = new Set(changeTypes);

/** Comments are ignored by clients; the retry field tells EventSource how soon to reconnect. */
const opening = 'retry: 3000\n: stream open\n\n';
const heartbeat = ': heartbeat\n\n';
const reset = 'event: reset\ndata: {}\n\n';

/** What these routes use. */
export interface EventCollaborators {
  /** The feed streams follow. */
  changes: ChangeFeed;
  /** Which events a caller may see. */
  tenancy: Tenancy;
  /** Asked again at each heartbeat: a stream lasts only while its credentials hold. */
  authenticator: Authenticator;
  limits: Limits;
}

export function eventRoutes(collaborators: EventCollaborators): Route[] {
  const { limits } = collaborators;
  const openByUser = new Map<number, number>();

  return [
    {
      method: 'GET',
      path: '/api/events',
      auth: true,
      query: 'events.stream-query',
      summary:
        'Every committed change the caller may see, as server-sent events (id, event type, data: the record as the API answers it). ' +
        'Send Last-Event-ID to resume; `event: reset` means some events were missed.',
      responses: { 200: { media: { 'text/event-stream': null } } },
      errors: [429],
      async handle(ctx) {
        const filter = streamFilter(ctx.state.query);
        const principal = ctx.state.principal;
        const userId = principal.user.id;
        const open = openByUser.get(userId) ?? 0;
        if (open >= limits.eventStreamsPerUserMax) {
          throw fail.throttled(limits.eventHeartbeatSeconds, `At most ${limits.eventStreamsPerUserMax} event streams may be open per user.`);
        }
        openByUser.set(userId, open + 1);
        try {
          await streamTo(ctx, collaborators, principal, filter);
        } finally {
          const left = (openByUser.get(userId) ?? 1) - 1;
          if (left > 0) openByUser.set(userId, left);
          else openByUser.delete(userId);
        }
      },
    },
  ];
}

function streamFilter(query: Record<string, unknown>): StreamFilter {
  const uuid = (value: unknown) => (typeof value === 'string' ? canonicalUuid(value) : null);
  let types: Set<ChangeType> | null = null;
  if (typeof query.types === 'string') {
    const named = query.types.split(',').map((type) => type.trim()).filter(Boolean);
    const unknown = named.find((type) => !knownTypes.has(type));
    if (unknown !== undefined) throw invalid({ types: [`Select a valid choice. ${unknown} is not one of the available choices.`] });
    types = new Set(named as ChangeType[]);
  }
  return { project: uuid(query.project), agent: uuid(query.agent), job: uuid(query.job), types };
}

/** Answers the stream and resolves once it has ended, for whatever reason. */
function streamTo(ctx: ApiContext, collaborators: EventCollaborators, principal: Principal, filter: StreamFilter): Promise<void> {
  const { changes: feed, tenancy, authenticator, limits } = collaborators;
  ctx.status = 200;
  ctx.respond = false; // the stream is written here, not by Koa
  const res = ctx.res;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    'X-Accel-Buffering': 'no',
  });
  // A HEAD request gets the headers and nothing more: its answer has no body to stream.
  if (ctx.method === 'HEAD') {
    res.end();
    return Promise.resolve();
  }
  res.flushHeaders();
  const visible = (event: FeedEvent) =>
    event.audience
      ? event.audience.includes(principal.user.id) && (!principal.apiKey || principal.apiKey.project === event.project)
      : tenancy.canSee(principal, event.project);
  const stream = new EventStream(res, (event) => matches(filter, event) && visible(event), limits.eventStreamBufferBytesMax);
  stream.write(opening);
  const lastEventId = ctx.get('Last-Event-ID').trim();
  if (lastEventId === '') {
    stream.startAfter(feed.lastSeq);
  } else {
    const missed = /^\d+$/.test(lastEventId) ? feed.since(Number(lastEventId)) : null;
    if (missed === null) {
      stream.write(reset);
      stream.startAfter(feed.lastSeq);
    } else {
      stream.startAfter(Number(lastEventId));
      stream.deliver(missed);
    }
  }
  const unsubscribe = feed.subscribe(stream);
  // Each beat also asks whether the credentials still hold: a revoked key or an expired token
  // ends the stream, as it would refuse the next request.
  const beat = setInterval(() => {
    stream.write(heartbeat);
    stillAuthenticated(authenticator, ctx).then((ok) => ok || stream.close(), () => stream.close());
  }, limits.eventHeartbeatSeconds * 1000);
  return new Promise((resolve) => {
    res.once('close', () => {
      clearInterval(beat);
      unsubscribe();
      resolve();
    });
  });
}

async function stillAuthenticated(authenticator: Authenticator, ctx: ApiContext): Promise<boolean> {
  try {
    await authenticator.authenticate(ctx.headers);
    return true;
  } catch {
    return false;
  }
}

export function matches(filter: StreamFilter, event: FeedEvent): boolean {
  return (
    (filter.project === null || filter.project === event.project) &&
    (filter.agent === null || filter.agent === event.agent) &&
    (filter.job === null || filter.job === event.job) &&
    (filter.types === null || filter.types.has(event.type))
  );
}

/** One open stream: sends the events it is shown, in order, each at most once. */
class EventStream implements Subscriber {
  private after = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly shows: (event: FeedEvent) => boolean,
    private readonly bufferBytesMax: number,
  ) {}

  /** Events up to `seq` have been sent (or are not for this stream). */
  startAfter(seq: number): void {
    this.after = seq;
  }

  deliver(events: readonly FeedEvent[]): void {
    let chunk = '';
    for (const event of events) {
      if (event.seq <= this.after) continue;
      this.after = event.seq;
      if (this.shows(event)) chunk += event.frame;
    }
    if (chunk !== '') this.write(chunk);
  }

  /**
   * Writes, unless more than the limit is still waiting from earlier writes: that reader has
   * fallen too far behind, and its stream is cut rather than buffered without end.
   */
  write(text: string): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    if (this.res.writableLength > this.bufferBytesMax) this.res.destroy();
    else this.res.write(text);
  }

  close(): void {
    if (!this.res.writableEnded) this.res.end();
  }
}
