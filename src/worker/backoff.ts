// When to try the service again after it could not be reached (or was restarting, or busy): a
// pure schedule, so tests can hold it to its numbers. Exponential from `baseMs`, capped at `maxMs`,
// with half of each delay random ("equal jitter"): workers that lost the service together do not
// all come back in the same millisecond, and none waits less than half its step.

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

export const defaultBackoff: BackoffPolicy = { baseMs: 100, maxMs: 10_000 };

/** A Retry-After the service names is honoured up to this (a longer one is taken as this). */
export const retryAfterMsMax = 60_000;

/** The delay before retry number `attempt` (0 for the first retry); `random` is in [0, 1). */
export function backoffMs(attempt: number, policy: BackoffPolicy, random: number): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(0, attempt), 30));
  return ceiling / 2 + (ceiling / 2) * random;
}

/**
 * The delay before the next try: the service's Retry-After (seconds, or an HTTP date, as of
 * `nowMs`) when it names one, bounded; else the backoff's.
 */
export function retryDelayMs(attempt: number, retryAfter: string | undefined, nowMs: number, policy: BackoffPolicy, random: number): number {
  const named = retryAfterMs(retryAfter, nowMs);
  return named === undefined ? backoffMs(attempt, policy, random) : Math.min(named, retryAfterMsMax);
}

function retryAfterMs(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * Whether an answer is worth waiting for and asking again: the request timed out (408), the
 * service is busy (429, 503), a proxy could not reach it (502, 504), or it failed and stops
 * itself to be restarted (500: a broken invariant ends the process). Any other answer is final.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
}

/**
 * Whether a retryable answer may come after the service acted on the request: it failed while
 * handling it (500), or a proxy forwarded it and lost or did not wait for the answer (502, 504).
 * A busy or timed-out refusal (408, 429, 503) is answered before anything is done.
 */
export function mayHaveActed(status: number): boolean {
  return status === 500 || status === 502 || status === 504;
}
