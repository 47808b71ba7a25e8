// What a command's run comes to, pure: its exit, its standard output and the tail of its standard
// error made into the result the worker sends. Standard output that is a JSON object with an
// `output` key gives the output and any of score, passed, dimension_scores and cost it carries;
// any other standard output is the output as text (trailing newlines dropped, as the shell's
// `$(...)` drops them). Exit code 75 (EX_TEMPFAIL) means the agent's provider refused for now.
import { trimWhere } from '../trim.ts';
import { fitError } from './worker-decisions.ts';
import { errorCharsMax, type ResultFields, type TaskOutcome } from './worker-task.ts';
import type { Json } from '../domain/records.ts';

/** sysexits.h's EX_TEMPFAIL: the command says "try again later" (rate limited). */
export const exitTempFail = 75;
/** Bytes of standard error kept: its tail, for an error result. */
export const stderrTailBytes = 8 * 1024;
/** Characters of a result's output as JSON: the service's default `resultOutputCharsMax`. */
export const outputCharsMaxDefault = 64 * 1024;
/**
 * Bytes of standard output kept for each character of the output limit, and beyond them: a JSON
 * answer whose `output` is within the limit fits however it was printed (an escape such as
 * \u00e9 takes six bytes for a character, a surrogate pair twelve; the slack is for the other
 * fields and whitespace). At most `stdoutCaptureBytesMax`, however large the limit.
 */
const stdoutBytesPerChar = 12;
const stdoutCaptureSlackBytes = 64 * 1024;
export const stdoutCaptureBytesMax = 16 * 1024 * 1024;
/** Fields of a JSON answer besides `output` that a result takes. */
const carriedFields = ['score', 'passed', 'dimension_scores', 'cost'] as const;

export interface CommandEnd {
  code: number | null;
  signal: string | null;
  /** The timeout, in seconds, when the command was killed for running past it. */
  timedOutAfterS: number | null;
  /** Standard output as captured (its first bytes). */
  stdout: string;
  /** Bytes of standard output past what was captured (read and dropped). */
  stdoutBytesDropped: number;
  stderrTail: string;
  latencyMs: number;
  /** The signal the worker is stopping on, if it is (a command that dies of it was cut short by the stop). */
  stopSignal: string | null;
}

/** Bytes of standard output a command's run keeps (the rest is read and dropped). */
export function stdoutCaptureBytes(outputCharsMax: number): number {
  return Math.min(stdoutCaptureBytesMax, outputCharsMax * stdoutBytesPerChar + stdoutCaptureSlackBytes);
}

/** The result of one command's run (trace ids are added by the caller). */
export function commandOutcome(end: CommandEnd, outputCharsMax = outputCharsMaxDefault): TaskOutcome {
  const latency_ms = Math.max(0, end.latencyMs);
  if (end.timedOutAfterS !== null) return failed(`timed out after ${end.timedOutAfterS} s`, end.stderrTail, latency_ms);
  if (end.code === exitTempFail) return { kind: 'rate_limited' };
  // The worker's stop signal, sent to its process group, reaches a command spawned at that moment
  // (before it has left the group): the stop's doing, not the task's failure.
  if (end.signal !== null && end.signal === end.stopSignal) return { kind: 'interrupted' };
  if (end.code !== 0) {
    const summary = end.signal ? `killed by ${end.signal}` : `exit code ${end.code}`;
    return failed(summary, end.stderrTail, latency_ms);
  }
  return { kind: 'result', fields: { ...outputFields(end.stdout, end.stdoutBytesDropped, outputCharsMax), latency_ms } };
}

function failed(summary: string, stderrTail: string, latency_ms: number): TaskOutcome {
  return { kind: 'result', fields: { status: 'error', error: errorWithTail(summary, stderrTail), latency_ms } };
}

/** `summary`, then as much of the end of `tail` as a result's error keeps. */
export function errorWithTail(summary: string, tail: string): string {
  // trimEnd, not /\s+$/ (the same whitespace), which backtracks in quadratic time over a long inner run.
  const trimmed = tail.trimEnd();
  if (trimmed === '') return fitError(summary);
  // Room for the tail after the summary, a newline and the mark of a cut.
  const room = errorCharsMax - summary.length - 2;
  if (room <= 0) return fitError(summary);
  return trimmed.length <= room + 1 ? `${summary}\n${trimmed}` : `${summary}\n…${trimmed.slice(trimmed.length - room)}`;
}

/** The output (and any scores it carries) from a successful command's standard output. */
export function outputFields(stdout: string, bytesDropped: number, outputCharsMax: number): ResultFields {
  const answer = bytesDropped === 0 ? jsonAnswer(stdout) : undefined;
  if (answer) {
    const chars = JSON.stringify(answer.output).length;
    if (chars > outputCharsMax) {
      return { status: 'error', error: `the command's output is ${chars} characters as JSON; the service keeps at most ${outputCharsMax}` };
    }
    const fields: ResultFields = { output: answer.output };
    for (const field of carriedFields) if (field in answer) (fields as Record<string, unknown>)[field] = answer[field];
    return fields;
  }
  const text = trimWhere(stdout, (code) => code === 0x0a, 'end');
  if (bytesDropped === 0 && JSON.stringify(text).length <= outputCharsMax) return { output: text };
  // Cut text (past the capture, or past the limit within it) says so, and how much there was.
  const marker = `\n[output truncated: ${Buffer.byteLength(stdout) + bytesDropped} bytes in all]`;
  return { output: fitText(text, outputCharsMax - (JSON.stringify(marker).length - 2)) + marker };
}

/** Standard output that is a JSON object with an `output` key. */
function jsonAnswer(stdout: string): ({ output: Json } & Record<string, Json>) | undefined {
  const trimmed = stdout.trim();
  if (!trimmed.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || !Object.hasOwn(parsed, 'output')) return undefined;
  return parsed as { output: Json } & Record<string, Json>;
}

/** The longest start of `text` whose JSON string form is at most `charsMax` characters. */
export function fitText(text: string, charsMax: number): string {
  if (JSON.stringify(text).length <= charsMax) return text;
  // A start never ends on half of a surrogate pair (JSON would escape the half: six characters).
  const start = (length: number) => text.slice(0, isHighSurrogate(text.charCodeAt(length - 1)) ? length - 1 : length);
  let low = 0;
  let high = Math.min(text.length, Math.max(0, charsMax));
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (JSON.stringify(start(middle)).length <= charsMax) low = middle;
    else high = middle - 1;
  }
  return start(low);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
