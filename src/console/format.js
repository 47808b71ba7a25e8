// How numbers, times and JSON values read on the page. Missing values read as an em dash.

/** What a missing value reads as. */
export const dash = '—';
const scoreFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 });
const countFormat = new Intl.NumberFormat('en-US');
const dateFormat = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'medium' });

/** @param {number | null | undefined} value */
export function score(value) {
  return typeof value === 'number' ? scoreFormat.format(value) : dash;
}

/** A change with its sign, e.g. "+0.12" or "−0.03". @param {number | null | undefined} value */
export function delta(value) {
  if (typeof value !== 'number') return dash;
  if (value === 0) return '±0';
  return `${value > 0 ? '+' : '−'}${scoreFormat.format(Math.abs(value))}`;
}

/** @param {number | null | undefined} value */
export function count(value) {
  return typeof value === 'number' ? countFormat.format(value) : dash;
}

/** @param {string | null | undefined} iso */
export function dateTime(iso) {
  if (!iso) return dash;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateFormat.format(date);
}

/** A duration in nanoseconds, in the unit that reads best. @param {number} nanos */
export function duration(nanos) {
  if (nanos === 0) return '0';
  const ms = nanos / 1e6;
  if (ms < 1) return `${scoreFormat.format(nanos / 1e3)} µs`;
  if (ms < 1000) return `${ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : Math.round(ms)} ms`;
  const seconds = ms / 1000;
  return seconds < 60 ? `${seconds.toFixed(2)} s` : `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/**
 * Any JSON value on one line, for a table cell (strings as they are).
 * @param {unknown} value
 */
export function jsonInline(value) {
  if (value === null || value === undefined || value === '') return dash;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Tags as a reader writes them ("support, prod"); anything but a list of strings as JSON.
 * @param {unknown} tags
 */
export function tagList(tags) {
  if (Array.isArray(tags) && tags.length > 0 && tags.every((tag) => typeof tag === 'string')) return tags.join(', ');
  return jsonInline(tags);
}

/**
 * A long id cut in the middle ("0af76519…b9c7c11d"): ids differ anywhere, often only at one end.
 * @param {string} id
 */
export function shortId(id) {
  return id.length > 17 ? `${id.slice(0, 8)}…${id.slice(-8)}` : id;
}

/**
 * Any JSON value, indented, for a block of text.
 * @param {unknown} value
 */
export function jsonBlock(value) {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** @param {string | null | undefined} text */
export function text(text) {
  return text ? text : dash;
}

const meanFormat = new Intl.NumberFormat('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 });
const percentFormat = new Intl.NumberFormat('en-US', { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** @typedef {import('./api-types.js').Interval} Interval */

/** A mean as a summary shows it, to three decimals. @param {number | null | undefined} value */
export function mean(value) {
  return typeof value === 'number' ? meanFormat.format(value) : dash;
}

/**
 * A mean with its 95% interval, e.g. "0.734 ± 0.021": the half-width when the interval is
 * symmetric about the mean (a t interval is), else the bounds ("0.734 [0.713, 0.760]").
 * @param {number | null | undefined} value
 * @param {Interval | null | undefined} ci
 */
export function meanInterval(value, ci) {
  if (typeof value !== 'number') return dash;
  if (!ci) return meanFormat.format(value);
  const half = (ci.high - ci.low) / 2;
  const symmetric = Math.abs(value - ci.low - half) <= 1e-9 * Math.max(1, Math.abs(value));
  return symmetric ? `${meanFormat.format(value)} ± ${meanFormat.format(half)}` : `${meanFormat.format(value)} ${interval(ci)}`;
}

/** An interval's bounds, e.g. "[0.713, 0.755]". @param {Interval} ci */
export function interval(ci) {
  return `[${meanFormat.format(ci.low)}, ${meanFormat.format(ci.high)}]`;
}

/** A share as a percentage, e.g. "72.5%". @param {number | null | undefined} value */
export function percent(value) {
  return typeof value === 'number' ? percentFormat.format(value) : dash;
}

/** A milliseconds figure in the unit that reads best. @param {number | null | undefined} ms */
export function millis(ms) {
  return typeof ms === 'number' ? duration(ms * 1e6) : dash;
}

/**
 * A change of means with its sign, to three decimals as means are shown, e.g. "+0.042" or
 * "−0.013", and "0.000" with no sign when it rounds to nothing (an interval's bounds around a
 * change read the same way).
 * @param {number | null | undefined} value
 */
export function meanDelta(value) {
  if (typeof value !== 'number') return dash;
  const text = meanFormat.format(Math.abs(value));
  if (Number(text) === 0) return text;
  return `${value > 0 ? '+' : '−'}${text}`;
}

/** An interval around a change, e.g. "[−0.012, +0.066]". @param {Interval} ci */
export function deltaInterval(ci) {
  return `[${meanDelta(ci.low)}, ${meanDelta(ci.high)}]`;
}

/** A p-value to three decimals, or "< 0.001" below that. @param {number | null | undefined} value */
export function pValue(value) {
  if (typeof value !== 'number') return dash;
  return value < 0.001 ? '< 0.001' : meanFormat.format(value);
}

/** "p = 0.034", or "p < 0.001". @param {number | null | undefined} value */
export function pStatement(value) {
  const text = pValue(value);
  return text.startsWith('<') ? `p ${text}` : `p = ${text}`;
}

const confidenceFormat = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 });

/** A confidence level as an interval's label says it, e.g. "95%" or "99.9%". @param {number} value */
export function confidenceLevel(value) {
  return confidenceFormat.format(value);
}

/**
 * A time left, in the two largest units that matter, e.g. "45 s", "3 min 20 s", "2 h 5 min".
 * @param {number | null | undefined} seconds
 */
export function timeLeft(seconds) {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return dash;
  const whole = Math.max(0, Math.round(seconds));
  if (whole < 60) return `${whole} s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return whole % 60 === 0 ? `${minutes} min` : `${minutes} min ${whole % 60} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  return `${countFormat.format(Math.round(hours / 24))} days`;
}

/**
 * Tasks per second as a person reads it: "12 tasks/s", "2.5 tasks/s", or per minute when slow.
 * @param {number | null | undefined} perSecond
 */
export function taskRate(perSecond) {
  if (typeof perSecond !== 'number' || !Number.isFinite(perSecond)) return dash;
  if (perSecond === 0) return '0 tasks/s';
  if (perSecond < 0.1) return `${scoreFormat.format(Math.round(perSecond * 600) / 10)} tasks/min`;
  return `${perSecond < 10 ? (Math.round(perSecond * 10) / 10).toFixed(1) : countFormat.format(Math.round(perSecond))} tasks/s`;
}

/**
 * How long ago a time was, from `now`: "just now", "12 s ago", "3 min ago", "5 h ago", then the date.
 * @param {string | null | undefined} iso
 * @param {number} [now] milliseconds since the epoch
 */
export function ago(iso, now = Date.now()) {
  if (!iso) return dash;
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 48 * 3600) return `${Math.floor(seconds / 3600)} h ago`;
  return dateTime(iso);
}

/**
 * An error's most telling line, for a one-line cell: a multi-line error (a summary such as "exit
 * code 1" and the end of a command's stderr, a Python traceback's last line the exception) as
 * its first line and its last. The whole is the cell's title.
 * @param {string} error
 */
export function errorHeadline(error) {
  const lines = error.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  if (lines.length <= 1) return lines[0] ?? error;
  return `${lines[0]} · ${lines[lines.length - 1]}`;
}
