// The worker loop's decisions, pure: how many tasks to ask for, when a lease runs out by this
// machine's clock, how often to heartbeat, how many results one completion carries, what to send
// after the service refused a result, whether the service holds leases the worker lost track of.
// worker-loop.ts does the asking and the timing; everything it decides is decided here.
import type { CompletionItem } from './worker-task.ts';
import { errorCharsMax } from './worker-task.ts';

/** Tasks a worker runs at once, and asks for in one lease, at most: the service's default tasksPerLeaseMax (a heartbeat names at most 10,000 tasks). */
export const concurrencyMax = 1000;
export const batchMax = 1000;
/** Heartbeats come at a third of the shortest lease held: two may be lost before a lease runs out. */
export const heartbeatsPerLease = 3;
/** However short a lease, heartbeats are at least this far apart; however long, at most this. */
export const heartbeatPeriodMsMin = 50;
export const heartbeatPeriodMsMax = 20_000;
/** Items in one completion: the service's default `completionItemsMax`. */
export const completionItemsMax = 1000;
/** Bytes of one completion's body: well under the service's default `completionBodyBytesMax` (32 MiB). */
export const completionBytesMax = 8 * 1024 * 1024;

export interface Occupancy {
  concurrency: number;
  batch: number;
  /** Tasks leased and not yet finished (waiting or running). */
  held: number;
  /** Finished tasks whose results the service has not yet accepted or refused. */
  unsent: number;
  /** Tasks that may wait for a slot, leased ahead (leaseAhead). */
  ahead: number;
}

/** Tasks are leased ahead only while they are this short (the median of the last few). */
export const aheadTaskMsMax = 1000;
/** Finished tasks the median is taken over, and the fewest it needs. */
export const recentTasksMax = 16;
const recentTasksMin = 4;

/**
 * How many tasks to lease ahead of the free slots, so that a slot that frees starts its next task
 * at once instead of after a lease's round trip (one commit, at least, on the service). Only while
 * tasks are short: a task leased ahead waits behind the running ones, which another worker might
 * have run sooner, and with tasks of a second or less that wait is short. Up to a batch (at most
 * the concurrency), none before a few tasks have shown how long they take.
 */
export function leaseAhead(recentTaskMs: readonly number[], concurrency: number, batch: number): number {
  if (recentTaskMs.length < recentTasksMin) return 0;
  const sorted = [...recentTaskMs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]! <= aheadTaskMsMax ? Math.min(batch, concurrency) : 0;
}

/** Throws a RangeError naming a concurrency or batch out of bounds. */
export function checkWorkerBounds(concurrency: number, batch: number): void {
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > concurrencyMax) throw new RangeError(`concurrency must be an integer from 1 to ${concurrencyMax}, not ${concurrency}`);
  if (!Number.isInteger(batch) || batch < 1 || batch > batchMax) throw new RangeError(`batch must be an integer from 1 to ${batchMax}, not ${batch}`);
}

/**
 * Results waiting to be accepted, at most, before the worker stops asking for more tasks: memory
 * stays bounded by concurrency and batch (tasks held: at most concurrency + batch; results waiting:
 * at most this) while the service is slow to take them or unreachable.
 */
export function unsentMax(concurrency: number, batch: number): number {
  return concurrency + batch;
}

/** How many tasks to ask for now: one per free slot (and per place ahead), at most a batch; none while results pile up. */
export function leaseSize({ concurrency, batch, held, unsent, ahead }: Occupancy): number {
  if (unsent >= unsentMax(concurrency, batch)) return 0;
  return Math.max(0, Math.min(batch, concurrency + ahead - held));
}

/** What the leasing and sending loops know of each other, for the ride-along lease. */
export interface LeaseTraffic {
  /** Results waiting to be sent, and being sent now. */
  unsent: number;
  sending: number;
  /** Sending is paused (leases are being counted). */
  flushPaused: boolean;
  /** A completion on its way carries the next lease. */
  riding: boolean;
}

/**
 * Whether the leasing loop leaves its lease to results: those about to be sent (the sending loop
 * idle, about to take them) carry it, or a completion on its way does. One call, and one commit
 * on the service, then does for both.
 */
export function leaseRidesWithResults({ unsent, sending, flushPaused, riding }: LeaseTraffic): boolean {
  return riding || (unsent > 0 && sending === 0 && !flushPaused);
}

/** What keeps a completion from carrying a lease: the worker stopping, draining, counting its leases, or a lease of its own on its way. */
export interface RideBlockers {
  stopping: boolean;
  draining: boolean;
  checkingLeases: boolean;
  leaseInFlight: boolean;
}

/**
 * How many tasks a completion sent now leases with it (0: none): one per free slot and place
 * ahead, as a lease of its own would ask (the results it carries no longer count as waiting).
 */
export function rideAlongSize(blockers: RideBlockers, occupancy: Occupancy): number {
  if (blockers.stopping || blockers.draining || blockers.checkingLeases || blockers.leaseInFlight) return 0;
  return leaseSize(occupancy);
}

/**
 * The service's clock minus this machine's, from an answer's Date header (whole seconds). An
 * offset within the header's rounding cannot be told from it and is taken as none.
 */
export function clockOffsetMs(dateHeader: string | undefined, receivedAtMs: number): number {
  const serverMs = dateHeader ? Date.parse(dateHeader) : Number.NaN;
  if (Number.isNaN(serverMs)) return 0;
  const offset = serverMs + 500 - receivedAtMs;
  return Math.abs(offset) < 1500 ? 0 : offset;
}

export interface LeaseTimes {
  /** When the lease runs out, on this machine's clock. */
  deadlineMs: number;
  /** How long a lease of its run lasts: a heartbeat sent at t keeps it until at least t + leaseMs. */
  leaseMs: number;
}

/** The shortest lease a run has (`lease_seconds` is at least 1). */
export const leaseMsMin = 1000;

/**
 * A new lease's deadline and length. The service started it between the request and its answer,
 * so the length measured from the answer is a lower bound (the heartbeats it sets come early,
 * never late), and never less than the shortest lease a run has (a lease that arrived late says
 * nothing of its length).
 */
export function leaseTimes(expiresAt: string, receivedAtMs: number, offsetMs: number): LeaseTimes {
  const deadlineMs = Date.parse(expiresAt) - offsetMs;
  return { deadlineMs, leaseMs: Math.max(leaseMsMin, deadlineMs - receivedAtMs) };
}

/** The time between heartbeats while these leases are held (null: none held, no heartbeat needed). */
export function heartbeatPeriodMs(leaseMs: Iterable<number>): number | null {
  let shortest = Infinity;
  for (const ms of leaseMs) shortest = Math.min(shortest, ms);
  if (shortest === Infinity) return null;
  return Math.min(heartbeatPeriodMsMax, Math.max(heartbeatPeriodMsMin, Math.floor(shortest / heartbeatsPerLease)));
}

/**
 * Leases the service says the worker holds beyond those it knows (a lease whose answer was lost
 * on the way). Heartbeats extend every lease a worker holds, so such tasks would stay leased and
 * never run: the worker finishes what it has, says goodbye (which gives them back) and registers again.
 */
export function orphanedLeases(serviceHolds: number, known: number): number {
  return Math.max(0, serviceHolds - known);
}

/**
 * How many of the results waiting (their JSON sizes, in order) go in the next completion: at
 * most `itemsMax` and `bytesMax` bytes, and at least one (an item larger than that alone is sent
 * alone: the service judges it).
 */
export function completionChunk(sizes: readonly number[], itemsMax = completionItemsMax, bytesMax = completionBytesMax): number {
  let bytes = 0;
  let count = 0;
  for (const size of sizes) {
    if (count >= itemsMax || (count > 0 && bytes + size + 1 > bytesMax)) break;
    bytes += size + 1;
    count++;
  }
  return count;
}

/**
 * What to send after the service refused an item as invalid (`refusals` times before this one),
 * or null to send nothing more (its lease then runs out and the task is leased again).
 * - The first time: an error result saying why (with the output, unless the output was refused), so the
 *   task is tried again or ends dead with the reason as its result rather than waiting for its
 *   lease to run out. (A score the command gives is never dropped to get a result accepted: a run
 *   the service scores says so on each task it hands out, and its results are sent without them
 *   from the start; on any other run a refused score is the command's error.)
 * - That error result refused too, a refused rate_limited item, or an item of a task the service
 *   does not know: nothing.
 */
export function afterRefusal(item: CompletionItem, errors: unknown, refusals: number): CompletionItem | null {
  if (refusals >= 1 || item.status === 'rate_limited') return null;
  const named = errors && typeof errors === 'object' ? Object.keys(errors) : [];
  if (named.includes('task') || named.includes('lease')) return null;
  const error = fitError(`the service refused this result: ${JSON.stringify(errors ?? {})}`);
  // What it answered stays with the error (unless the output was what was refused), its trace and time too.
  const kept: Record<string, unknown> = { task: item.task, lease: item.lease, status: 'error', error };
  const given = item as unknown as Record<string, unknown>;
  for (const field of ['output', 'trace_id', 'span_id', 'latency_ms', 'cost'] as const) {
    if (given[field] !== undefined && !named.includes(field)) kept[field] = given[field];
  }
  return kept as CompletionItem;
}

/** `text` cut to the characters a result's `error` keeps, its end marked when cut. */
export function fitError(text: string): string {
  return text.length <= errorCharsMax ? text : `${text.slice(0, errorCharsMax - 1)}…`;
}

/** Whether a run's status says it has ended (it hands out no more tasks). */
export function hasEnded(status: string): boolean {
  return status === 'completed' || status === 'cancelled' || status === 'failed';
}
