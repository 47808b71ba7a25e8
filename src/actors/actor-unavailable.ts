// Why an actor (or the span writer) cannot take or finish a message; the HTTP layer answers 503.
/** Thrown to a sender when the actor cannot take or finish its message (HTTP 503). */
export class ActorUnavailable extends Error {
  constructor(readonly reason: 'mailbox_full' | 'store_failed' | 'stopped', readonly retryAfterSeconds: number) {
    super(
      reason === 'mailbox_full'
        ? 'Too many requests are waiting for this record; try again shortly.'
        : reason === 'stopped'
          ? 'The service is shutting down; try again shortly.'
          : 'The store could not complete the write; try again shortly.',
    );
    this.name = 'ActorUnavailable';
  }
}
