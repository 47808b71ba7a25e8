// "Now" as the service reads it: an injectable clock (tests set the time), and the one timestamp
// format the API writes.

export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
}

/** The service's timestamp for "now": ISO 8601 in UTC with milliseconds. */
export function timestamp(clock: Clock): string {
  return new Date(clock.nowMs()).toISOString();
}
