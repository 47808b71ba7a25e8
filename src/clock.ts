// "Now" as the service reads it: an injectable clock (tests set the time), and the one timestamp
// format the API writes.

export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
}

/** The service's timestamp for "now": ISO 8601 in UTC with milliseconds. */
export function timestamp(clock: Clock): string {
  const ms = clock.nowMs();
  // Writes arrive thousands a second: requests of the same millisecond share its formatting.
  if (ms !== lastFormatted.ms) lastFormatted = { ms, text: new Date(ms).toISOString() };
  return lastFormatted.text;
}

let lastFormatted = { ms: Number.NaN, text: '' };
