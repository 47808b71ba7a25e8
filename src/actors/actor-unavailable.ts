// Why an actor (or the span writer) cannot take or finish a message; the HTTP layer answers 503.
const messages = {
  mailbox_full: 'Too many requests are waiting for this record; try again shortly.',
  stopped: 'The service is shutting down; try again shortly.',
  store_failed: 'The store could not complete the write; try again shortly.',
  busy: 'Too many heavy answers (comparisons, diffs, summaries) are being computed; try again shortly.',
} as const;

/** Thrown to a sender when the actor cannot take or finish its message (HTTP 503). */
export class ActorUnavailable extends Error {
  constructor(readonly reason: 'mailbox_full' | 'store_failed' | 'stopped' | 'busy', readonly retryAfterSeconds: number) {
    super(messages[reason]);
    this.name = 'ActorUnavailable';
  }
}
