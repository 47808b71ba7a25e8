// One trace: its totals, the waterfall of its spans, and the picked span's attributes.
import { ApiError, callText } from './api.js';
import { h, pageHead, stat } from './dom.js';
import { count, duration } from './format.js';
import { waterfall } from './waterfall.js';

/**
 * @typedef {Omit<import('./api-types.js').Span, 'start_time_ns' | 'end_time_ns'> & { start_time_ns: bigint, end_time_ns: bigint }} ExactSpan a span as parseTrace reads it: exact times
 * @typedef {Omit<import('./api-types.js').Trace, 'root' | 'spans'> & { root: ExactSpan, spans: ExactSpan[] }} Trace a trace as parseTrace reads it
 */

/** @param {import('./router.js').PageContext} context */
export async function tracePage({ params, signal }) {
  let text;
  try {
    text = await callText(`/api/traces/${params.trace_id}/`, { signal });
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    // A result names its trace whether or not the agent sent spans: say what that means.
    return h('div', {},
      pageHead({ trail: [['/', 'Projects'], ['/console/traces', 'Traces']], title: 'No spans yet', kind: 'Trace', id: params.trace_id ?? '' }),
      h('p', { class: 'lead' }, 'No span of this trace has reached the service (or none of a project you can see).'),
      h('p', { class: 'hint' }, 'A result names the trace its worker started for the task; its spans arrive only when the agent exports them over OTLP (the worker command hands each command OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and a span token for that). Spans sent later show here.'));
  }
  const trace = parseTrace(text);
  const errors = trace.spans.filter((span) => span.status_code === 2).length;
  const services = new Set(trace.spans.map((span) => span.service_name).filter(Boolean));
  const tokens = trace.spans.reduce((sum, span) => sum + (span.total_tokens ?? 0), 0);
  const chart = waterfall(trace.spans);
  return h('div', {},
    pageHead({ trail: [['/', 'Projects'], ['/console/traces', 'Traces']], title: trace.root.name || '(unnamed span)', kind: 'Trace', id: trace.trace_id }),
    h('div', { class: 'stats' },
      stat('Duration', duration(chart.totalNs), null, 'primary'),
      stat('Spans', count(trace.span_count), trace.span_count > trace.spans.length ? `${count(trace.spans.length)} shown` : null),
      stat('Errors', count(errors), null, errors > 0 ? 'tone-error' : ''),
      stat('Services', count(services.size), [...services].slice(0, 3).join(', ')),
      stat('Tokens', count(tokens))),
    chart.element);
}

/**
 * Span times are nanoseconds since 1970, past 2^53: JSON.parse would round them. Where the
 * browser gives the reviver the number's source text, a span's times become exact BigInts;
 * elsewhere they are rounded to a few hundred nanoseconds, which a waterfall cannot show anyway.
 * @param {string} text
 * @returns {Trace}
 */
export function parseTrace(text) {
  /**
   * @this {Record<string, unknown>} the object that holds `key`
   * @param {string} key
   * @param {unknown} value
   * @param {{ source?: string }} [context]
   */
  function exactTimes(key, value, context) {
    const isSpanTime = (key === 'start_time_ns' || key === 'end_time_ns') && typeof value === 'number' && 'span_id' in this;
    return isSpanTime ? BigInt(context?.source ?? Math.round(/** @type {number} */ (value))) : value;
  }
  return JSON.parse(text, /** @type {(this: unknown, key: string, value: unknown) => unknown} */ (exactTimes));
}
