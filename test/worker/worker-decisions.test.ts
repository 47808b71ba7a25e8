// The worker's pure decisions: the backoff schedule, what to lease next, lease times and
// heartbeats, completions and what follows a refusal, a command's output made a result, the
// trace context, a handler's answer, and the progress line.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { backoffMs, isRetryableStatus, retryAfterMsMax, retryDelayMs } from '../../src/worker/backoff.ts';
import { handlerOutcome } from '../../src/worker/handler-worker.ts';
import { formatDuration, progressLine, RateWindow } from '../../src/worker/progress.ts';
import { commandOutcome, errorWithTail, fitText, outputFields, type CommandEnd } from '../../src/worker/task-output.ts';
import { traceContextOf } from '../../src/worker/trace-context.ts';
import {
  afterRefusal,
  checkWorkerBounds,
  clockOffsetMs,
  completionChunk,
  heartbeatPeriodMs,
  heartbeatPeriodMsMax,
  heartbeatPeriodMsMin,
  aheadTaskMsMax,
  leaseAhead,
  leaseRidesWithResults,
  rideAlongSize,
  leaseSize,
  leaseTimes,
  orphanedLeases,
  unsentMax,
} from '../../src/worker/worker-decisions.ts';
import type { WorkerCounts } from '../../src/worker/worker-loop.ts';

const policy = { baseMs: 100, maxMs: 10_000 };

test('backoff doubles from its base up to its cap, half of each step random', () => {
  assert.equal([0, 1, 2, 3].map((attempt) => backoffMs(attempt, policy, 0)), [50, 100, 200, 400]);
  assert.equal([0, 1, 2, 3].map((attempt) => backoffMs(attempt, policy, 0.999999)).map(Math.round), [100, 200, 400, 800]);
  assert.is(backoffMs(7, policy, 0), 5000, 'the cap: 12,800 ms capped at 10,000, half of it fixed');
  assert.is(backoffMs(1000, policy, 1), 10_000, 'no overflow however many tries');
  assert.is(backoffMs(-1, policy, 0), 50);
});

test('a Retry-After the service names is honoured (seconds or a date), bounded; otherwise the backoff', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.is(retryDelayMs(0, '3', now, policy, 0.5), 3000);
  assert.is(retryDelayMs(0, 'Thu, 01 Jan 2026 00:00:02 GMT', now, policy, 0.5), 2000);
  assert.is(retryDelayMs(0, '86400', now, policy, 0.5), retryAfterMsMax);
  assert.is(retryDelayMs(2, undefined, now, policy, 0), 200);
  assert.is(retryDelayMs(2, 'soon', now, policy, 0), 200, 'an unreadable header is no header');
});

test('answers worth asking again: timeouts, busy, proxies, a service stopping itself; never a refusal', () => {
  assert.equal([408, 429, 500, 502, 503, 504].map(isRetryableStatus), [true, true, true, true, true, true]);
  assert.equal([200, 201, 204, 400, 401, 403, 404, 409, 413].map(isRetryableStatus), [false, false, false, false, false, false, false, false, false]);
});

test('a lease asks for one task per free slot and place ahead, at most a batch, and none while results pile up', () => {
  assert.is(leaseSize({ concurrency: 4, batch: 4, held: 0, unsent: 0, ahead: 0 }), 4);
  assert.is(leaseSize({ concurrency: 4, batch: 2, held: 0, unsent: 0, ahead: 0 }), 2);
  assert.is(leaseSize({ concurrency: 4, batch: 4, held: 3, unsent: 0, ahead: 0 }), 1);
  assert.is(leaseSize({ concurrency: 4, batch: 4, held: 4, unsent: 0, ahead: 0 }), 0);
  assert.is(leaseSize({ concurrency: 4, batch: 4, held: 4, unsent: 0, ahead: 4 }), 4, 'leased ahead while four run');
  assert.is(leaseSize({ concurrency: 4, batch: 4, held: 8, unsent: 0, ahead: 4 }), 0);
  assert.is(unsentMax(4, 2), 6);
  assert.is(leaseSize({ concurrency: 4, batch: 2, held: 0, unsent: 5, ahead: 0 }), 2);
  assert.is(leaseSize({ concurrency: 4, batch: 2, held: 0, unsent: 6, ahead: 2 }), 0, 'memory stays bounded by concurrency and batch');
});

test('tasks are leased ahead (up to a batch, at most the concurrency) only once a few have shown they are short', () => {
  assert.is(leaseAhead([], 4, 4), 0, 'nothing known yet');
  assert.is(leaseAhead([5, 5, 5], 4, 4), 0);
  assert.is(leaseAhead([5, 5, 5, 5], 4, 4), 4);
  assert.is(leaseAhead([5, 5, 5, 5], 4, 100), 4);
  assert.is(leaseAhead([5, 5, 5, 5], 8, 2), 2);
  assert.is(leaseAhead([5, 5, 2000, 2000, 2000], 4, 4), 0, 'long tasks: a task leased ahead would wait long');
  assert.is(leaseAhead([aheadTaskMsMax, 1, 1, 9999], 1, 1), 1, 'the median decides');
});

test('a lease rides with results about to be sent, or on their way with one; not with results already on their way alone, nor while sending is paused', () => {
  const traffic = { unsent: 1, sending: 0, flushPaused: false, riding: false };
  assert.ok(leaseRidesWithResults(traffic));
  assert.ok(leaseRidesWithResults({ ...traffic, unsent: 0, sending: 3, riding: true }));
  assert.not.ok(leaseRidesWithResults({ ...traffic, unsent: 0 }), 'nothing to send: it leases alone');
  assert.not.ok(leaseRidesWithResults({ ...traffic, sending: 2 }), 'a completion without a lease is on its way: it leases alone');
  assert.not.ok(leaseRidesWithResults({ ...traffic, flushPaused: true }));
});

test('a completion carries as many tasks as a lease would ask, with the results it carries not counted as waiting; none while stopping, draining, counting leases or leasing alone', () => {
  const clear = { stopping: false, draining: false, checkingLeases: false, leaseInFlight: false };
  const occupancy = { concurrency: 4, batch: 2, held: 3, unsent: 0, ahead: 0 };
  assert.is(rideAlongSize(clear, occupancy), 1);
  assert.is(rideAlongSize(clear, { ...occupancy, held: 1 }), 2, 'at most a batch');
  assert.is(rideAlongSize(clear, { ...occupancy, held: 4 }), 0);
  for (const blocker of ['stopping', 'draining', 'checkingLeases', 'leaseInFlight'] as const) assert.is(rideAlongSize({ ...clear, [blocker]: true }, occupancy), 0, blocker);
});

test('concurrency and batch: integers from 1 to 1000', () => {
  checkWorkerBounds(1, 1);
  checkWorkerBounds(1000, 1000);
  assert.throws(() => checkWorkerBounds(0, 1), /concurrency must be an integer from 1 to 1000, not 0/);
  assert.throws(() => checkWorkerBounds(1.5, 1), /concurrency/);
  assert.throws(() => checkWorkerBounds(4, 1001), /batch must be an integer from 1 to 1000, not 1001/);
});

test('the service\'s clock: an offset within the Date header\'s rounding is none; a larger one is measured', () => {
  const now = Date.parse('2026-01-01T00:00:10.300Z');
  assert.is(clockOffsetMs('Thu, 01 Jan 2026 00:00:10 GMT', now), 0);
  assert.is(clockOffsetMs('Thu, 01 Jan 2026 00:00:11 GMT', now), 0, 'a second ahead could be rounding');
  assert.is(clockOffsetMs('Thu, 01 Jan 2026 00:01:10 GMT', now), 60_200);
  assert.is(clockOffsetMs('Thu, 01 Jan 2026 00:00:00 GMT', now), -9_800);
  assert.is(clockOffsetMs(undefined, now), 0);
  assert.is(clockOffsetMs('not a date', now), 0);
});

test('a lease\'s deadline on this machine\'s clock, and its length measured from the answer (a lower bound)', () => {
  const received = Date.parse('2026-01-01T00:00:00.250Z');
  assert.equal(leaseTimes('2026-01-01T00:01:00.000Z', received, 0), { deadlineMs: Date.parse('2026-01-01T00:01:00.000Z'), leaseMs: 59_750 });
  assert.equal(leaseTimes('2026-01-01T00:02:00.000Z', received, 60_000), { deadlineMs: Date.parse('2026-01-01T00:01:00.000Z'), leaseMs: 59_750 }, 'the service a minute ahead');
  assert.is(leaseTimes('2025-12-31T23:59:59.000Z', received, 0).leaseMs, 1000, 'expired on arrival: its length unknown, at least a second');
});

test('heartbeats at a third of the shortest lease held, within bounds; none with nothing held', () => {
  assert.is(heartbeatPeriodMs([60_000, 3000]), 1000);
  assert.is(heartbeatPeriodMs([1000]), 333);
  assert.is(heartbeatPeriodMs([30]), heartbeatPeriodMsMin);
  assert.is(heartbeatPeriodMs([3_600_000]), heartbeatPeriodMsMax);
  assert.is(heartbeatPeriodMs([]), null);
});

test('leases the service holds beyond those the worker knows are lost ones', () => {
  assert.is(orphanedLeases(5, 3), 2);
  assert.is(orphanedLeases(3, 3), 0);
  assert.is(orphanedLeases(1, 3), 0, 'fewer: completions landed meanwhile');
});

test('a completion carries at most its items and bytes, and at least one item', () => {
  assert.is(completionChunk([10, 10, 10], 2, 1000), 2);
  assert.is(completionChunk([10, 10, 10], 1000, 22), 2, 'each item with its comma');
  assert.is(completionChunk([5000, 10], 1000, 100), 1, 'an item larger than the bound goes alone');
  assert.is(completionChunk([], 1000, 100), 0);
  assert.is(completionChunk(Array.from({ length: 1500 }, () => 1)), 1000);
});

test('after a refusal: an error result saying why, once (a refused score too: it is never dropped to get a result in); then nothing', () => {
  const item = { task: 't', lease: 'l', output: { a: 1 }, score: 0.5, passed: true, trace_id: 'a'.repeat(32), latency_ms: 12 };
  const badScore = afterRefusal({ ...item, score: 'high' as unknown as number }, { score: ['A valid number is required.'] }, 0);
  assert.equal(badScore, { task: 't', lease: 'l', status: 'error', error: 'the service refused this result: {"score":["A valid number is required."]}', output: { a: 1 }, trace_id: 'a'.repeat(32), latency_ms: 12 }, 'the bad score is the command\'s error, its output and trace kept');
  const missing = afterRefusal({ task: 't', lease: 'l', output: 'text', latency_ms: 3 }, { score: ['This field is required.'] }, 0);
  assert.equal(missing, { task: 't', lease: 'l', status: 'error', error: 'the service refused this result: {"score":["This field is required."]}', output: 'text', latency_ms: 3 }, 'no score to drop: an error result, the output kept');
  const tooLarge = afterRefusal(item, { output: ['too long'] }, 0)!;
  assert.is(tooLarge.status, 'error');
  assert.not.ok('output' in tooLarge, 'the refused output is not sent again');
  assert.is(afterRefusal(missing!, { error: ['too long'] }, 1), null, 'a refused error result: nothing more');
  assert.is(afterRefusal(item, { score: ['x'] }, 2), null);
  assert.is(afterRefusal({ task: 't', lease: 'l', status: 'rate_limited' }, { status: ['x'] }, 0), null);
  assert.is(afterRefusal(item, { task: ['Invalid pk "t" - object does not exist.'] }, 0), null, 'a task the service does not know');
  const long = afterRefusal({ task: 't', lease: 'l' }, { output: ['x'.repeat(20_000)] }, 0)!;
  assert.is((long as { error: string }).error.length, 16_384);
});

const ended = (fields: Partial<CommandEnd>): CommandEnd => ({ code: 0, signal: null, timedOutAfterS: null, stdout: '', stdoutBytesDropped: 0, stderrTail: '', latencyMs: 12.5, stopSignal: null, ...fields });

test('a command\'s JSON answer with an output: the output and the scores it carries; other keys ignored', () => {
  const stdout = '  {"output": {"label": "spam"}, "score": 0.5, "passed": false, "dimension_scores": {"a": 1}, "cost": 0.01, "other": 1}\n';
  assert.equal(commandOutcome(ended({ stdout })), { kind: 'result', fields: { output: { label: 'spam' }, score: 0.5, passed: false, dimension_scores: { a: 1 }, cost: 0.01, latency_ms: 12.5 } });
  assert.equal(commandOutcome(ended({ stdout: '{"output": null}' })), { kind: 'result', fields: { output: null, latency_ms: 12.5 } });
});

test('any other standard output is the output as text, trailing newlines dropped: plain text, invalid JSON, JSON without output, an array', () => {
  const text = (stdout: string) => (commandOutcome(ended({ stdout })) as { fields: { output: unknown } }).fields.output;
  assert.is(text('hello\nworld\n\n'), 'hello\nworld');
  assert.is(text('{"output": broken\n'), '{"output": broken');
  assert.is(text('{"answer": 1}'), '{"answer": 1}');
  assert.is(text('[{"output": 1}]'), '[{"output": 1}]');
  assert.is(text(''), '');
});

test('output past the capture: text cut to the service\'s output limit as JSON, marked with the bytes printed', () => {
  const fields = outputFields('{"output": "' + 'x'.repeat(200) + '"}', 1000, 100);
  assert.ok(typeof fields.output === 'string' && fields.output.endsWith('\n[output truncated: 1214 bytes in all]'));
  assert.ok(JSON.stringify(fields.output).length <= 100, 'a truncated JSON answer is text: it cannot be whole');
  const tooLarge = outputFields(JSON.stringify({ output: 'y'.repeat(200) }), 0, 100);
  assert.equal(tooLarge, { status: 'error', error: "the command's output is 202 characters as JSON; the service keeps at most 100" });
});

test('text within the capture but past the output limit: cut to the limit and marked too, with the bytes printed', () => {
  const fields = outputFields('x'.repeat(200), 0, 100);
  assert.ok(typeof fields.output === 'string' && fields.output.endsWith('\n[output truncated: 200 bytes in all]'), String(fields.output));
  assert.ok(JSON.stringify(fields.output).length <= 100);
  assert.is(outputFields('x'.repeat(98) + '\n', 0, 100).output, 'x'.repeat(98), 'text that fits is kept whole, unmarked');
});

test('exits: 75 is rate_limited; another code or a signal an error with the tail of stderr; a timeout says so; the worker\'s own stop signal is no result', () => {
  assert.equal(commandOutcome(ended({ code: 75, stdout: 'ignored' })), { kind: 'rate_limited' });
  assert.equal(commandOutcome(ended({ code: 2, stderrTail: 'Traceback...\nValueError: bad\n' })), { kind: 'result', fields: { status: 'error', error: 'exit code 2\nTraceback...\nValueError: bad', latency_ms: 12.5 } });
  assert.equal(commandOutcome(ended({ code: null, signal: 'SIGSEGV' })), { kind: 'result', fields: { status: 'error', error: 'killed by SIGSEGV', latency_ms: 12.5 } });
  assert.equal(commandOutcome(ended({ code: null, signal: 'SIGKILL', timedOutAfterS: 30 })), { kind: 'result', fields: { status: 'error', error: 'timed out after 30 s', latency_ms: 12.5 } });
  // The worker's own stop signal, reaching a command spawned at that moment: no result, the task runs again elsewhere.
  assert.equal(commandOutcome(ended({ code: null, signal: 'SIGTERM', stopSignal: 'SIGTERM' })), { kind: 'interrupted' });
  assert.equal(commandOutcome(ended({ code: null, signal: 'SIGTERM' })), { kind: 'result', fields: { status: 'error', error: 'killed by SIGTERM', latency_ms: 12.5 } }, 'not stopping: the task failed');
  assert.equal(commandOutcome(ended({ code: null, signal: 'SIGKILL', stopSignal: 'SIGTERM' })), { kind: 'result', fields: { status: 'error', error: 'killed by SIGKILL', latency_ms: 12.5 } }, 'another signal: the task failed');
  assert.equal(commandOutcome(ended({ code: 1, stopSignal: 'SIGTERM' })).kind, 'result', 'an exit of its own while the worker stops: its result');
});

test('an error keeps the whole 8 KiB tail of stderr (a result keeps 16,384 characters), its end past that', () => {
  const kept = errorWithTail('exit code 1', `${'a'.repeat(8192)}the end`);
  assert.is(kept, `exit code 1\n${'a'.repeat(8192)}the end`);
  const tail = `${'a'.repeat(20_000)}the end`;
  const error = errorWithTail('exit code 1', tail);
  assert.is(error.length, 16_384);
  assert.ok(error.startsWith('exit code 1\n…a'));
  assert.ok(error.endsWith('the end'));
  assert.is(errorWithTail('exit code 1', '  \n'), 'exit code 1');
});

test('text fits the output limit as JSON: escapes counted, a surrogate pair never split', () => {
  assert.is(fitText('abc', 5), 'abc');
  assert.is(fitText('abcdef', 5), 'abc');
  assert.is(fitText('"""', 6), '""', 'each quote is two characters as JSON');
  assert.is(fitText('\u0000\u0000', 8), '\u0000', 'a control character is six');
  assert.is(fitText('a😀b', 4), 'a', 'the emoji would need both halves');
  assert.is(fitText('a😀b', 5), 'a😀');
});

test('a trace context: version 00, sampled, ids of the bytes given, never all zero', () => {
  const bytes = Uint8Array.from({ length: 24 }, (_, i) => i + 1);
  const context = traceContextOf(bytes);
  assert.is(context.traceId, '0102030405060708090a0b0c0d0e0f10');
  assert.is(context.spanId, '1112131415161718');
  assert.is(context.traceparent, '00-0102030405060708090a0b0c0d0e0f10-1112131415161718-01');
  const zero = traceContextOf(new Uint8Array(24));
  assert.equal([zero.traceId, zero.spanId], [`${'0'.repeat(31)}1`, `${'0'.repeat(15)}1`]);
  assert.throws(() => traceContextOf(new Uint8Array(8)));
});

test('a handler\'s answer: its result fields, its time and the task\'s trace unless it names them; anything else is the output', () => {
  const trace = traceContextOf(new Uint8Array(24).fill(1));
  assert.equal(handlerOutcome({ output: 'x', score: 1, unknown: 2 } as never, 5, trace), { kind: 'result', fields: { latency_ms: 5, trace_id: trace.traceId, span_id: trace.spanId, output: 'x', score: 1 } });
  assert.equal(handlerOutcome({ status: 'rate_limited' }, 5, trace), { kind: 'rate_limited' });
  assert.equal(handlerOutcome('plain', 5, trace), { kind: 'result', fields: { latency_ms: 5, trace_id: trace.traceId, span_id: trace.spanId, output: 'plain' } });
  assert.equal(handlerOutcome(undefined, 5, trace), { kind: 'result', fields: { latency_ms: 5, trace_id: trace.traceId, span_id: trace.spanId, output: null } });
  const own = handlerOutcome({ output: 1, score: 0, trace_id: "b".repeat(32), latency_ms: 99 }, 5, trace) as unknown as { fields: Record<string, unknown> };
  assert.equal([own.fields.trace_id, own.fields.latency_ms], ['b'.repeat(32), 99]);
});

const counts = (fields: Partial<WorkerCounts>): WorkerCounts => ({ leased: 0, running: 0, done: 0, errors: 0, rateLimited: 0, stale: 0, cancelled: 0, refused: 0, stopped: 0, ...fields });
const runState = (done: number, total: number, status = 'running') => ({ id: 'r', status, counts: { total, queued: total - done, leased: 0, done, dead: 0, skipped: 0, cancelled: 0 } });

test('the progress line: done of total, rate, time left, errors; without a run, what this worker did', () => {
  assert.is(progressLine({ counts: counts({ done: 40, errors: 2, running: 4 }), run: runState(100, 400), perSecond: 25 }), '100 of 400 tasks (25%) · 25.0/s · ~12 s left · 2 errors · 4 running · run running');
  assert.is(progressLine({ counts: counts({ done: 9, errors: 1, running: 1, rateLimited: 3 }), run: undefined, perSecond: null }), '10 tasks done · 1 error · 3 rate limited · 1 running');
  assert.is(progressLine({ counts: counts({}), run: runState(0, 0, 'completed'), perSecond: 0 }), '0 of 0 tasks (100%) · 0.0/s · 0 errors · 0 running · run completed');
  assert.equal([formatDuration(0.2), formatDuration(59.5), formatDuration(150), formatDuration(7260), formatDuration(Infinity)], ['1 s', '60 s', '3 min', '2 h 1 min', '?']);
});

test('the rate over a sliding window', () => {
  const rate = new RateWindow(10_000, 64);
  rate.add(0, 0);
  assert.is(rate.perSecond(), null, 'one sample: no rate yet');
  rate.add(1000, 10);
  assert.is(rate.perSecond(), 10);
  for (let at = 2000; at <= 20_000; at += 1000) rate.add(at, 10 + (at / 1000 - 1) * 2);
  assert.is(rate.perSecond(), 2, 'the early burst has left the window');
});

test.run();
