// Why the service cannot take or finish a piece of work right now: an actor's mailbox or a
// writer's queue is full, the service is stopping, the store failed a commit, or too many heavy
// answers are being computed. Every one of them is the caller's to retry shortly: the HTTP layer
// answers 503 with Retry-After. It lives below every layer that refuses work (actors, the store's
// writers, the compute pool), so that none of them borrows another's error.
const messages = {
  /** An actor's mailbox, or a store writer's queue, is at its bound. */
  queue_full: 'Too many requests are waiting for this record; try again shortly.',
  stopped: 'The service is shutting down; try again shortly.',
  store_failed: 'The store could not complete the write; try again shortly.',
  busy: 'Too many heavy tasks (comparisons, diffs, summaries, long OTLP/JSON exports) are being computed; try again shortly.',
} as const;

export type UnavailableReason = keyof typeof messages;

/** Thrown to a caller whose work cannot be taken or finished now (HTTP 503 with Retry-After). */
export class Unavailable extends Error {
  constructor(readonly reason: UnavailableReason, readonly retryAfterSeconds: number) {
    super(messages[reason]);
    this.name = 'Unavailable';
  }
}
