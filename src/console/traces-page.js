// Traces: one row per trace (its root span), filtered by service, errors and duration as the
// span filters of the API do. The filters live in the query string.
import { call, withQuery } from './api.js';
import { badge, clipped, h, link, pageHead, section } from './dom.js';
import { count, dateTime, duration, shortId, text } from './format.js';
import { setQuery } from './router.js';
import { pagedTable } from './table.js';

/** @typedef {import('./api-types.js').Span} Span */

const filterNames = ['service_name', 'has_error', 'min_duration_ms', 'max_duration_ms'];

/** @param {import('./router.js').PageContext} context */
export async function tracesPage({ query, signal }) {
  /** @type {import('./table.js').Page<import('./api-types.js').ServiceName>} */
  const services = await call(withQuery('/api/traces/services/', { page_size: 100 }), { signal });
  /** @type {Record<string, string>} */
  const filters = Object.fromEntries(filterNames.map((name) => [name, query.get(name) ?? '']));

  const traces = pagedTable({
    key: 'traces',
    pageSize: 25,
    signal,
    empty: 'No traces match these filters.',
    /** @returns {Promise<import('./table.js').Page<Span>>} */
    load: (page) => call(withQuery('/api/traces/', { ...filters, page, page_size: 25 }), { signal }),
    rowClass: (span) => (span.status_code === 2 ? 'error-row' : ''),
    columns: [
      { label: 'Trace', cell: (span) => link(`/console/traces/${span.trace_id}`, clipped(span.name || '(unnamed span)', 'strong')) },
      { label: 'Service', cell: (span) => clipped(text(span.service_name), 'narrow') },
      { label: 'Type', cell: (span) => text(span.span_type) },
      { label: 'Started', cell: (span) => dateTime(new Date(span.start_time_ns / 1e6).toISOString()) },
      { label: 'Duration', numeric: true, cell: (span) => duration(span.duration_ns) },
      { label: 'Tokens', numeric: true, cell: (span) => count(span.total_tokens) },
      { label: 'Status', cell: (span) => (span.status_code === 2 ? badge('error') : badge('ok', 'neutral')) },
      { label: 'Trace id', cell: (span) => h('span', { class: 'mono muted', title: span.trace_id }, shortId(span.trace_id)) },
    ],
  });

  const service = h('select', { name: 'service_name' },
    h('option', { value: '' }, 'All services'),
    services.results.map((name) => h('option', { value: name, selected: name === filters.service_name }, name)));
  const errorsOnly = h('input', { type: 'checkbox', name: 'has_error', checked: filters.has_error === 'true' });
  const minimum = h('input', { type: 'number', name: 'min_duration_ms', min: '0', step: 'any', placeholder: 'min', value: filters.min_duration_ms ?? '' });
  const maximum = h('input', { type: 'number', name: 'max_duration_ms', min: '0', step: 'any', placeholder: 'max', value: filters.max_duration_ms ?? '' });
  const form = h('form', { class: 'filters', onchange: apply, onsubmit: (event) => {
    event.preventDefault();
    apply();
  } },
    h('label', {}, 'Service', service),
    h('label', { class: 'check' }, errorsOnly, 'Errors only'),
    h('label', {}, 'Duration (ms)', h('span', { class: 'range' }, minimum, '–', maximum)));

  function apply() {
    Object.assign(filters, {
      service_name: service.value,
      has_error: errorsOnly.checked ? 'true' : '',
      min_duration_ms: minimum.value,
      max_duration_ms: maximum.value,
    });
    setQuery({ ...filters, traces_page: null });
    void traces.reload();
  }

  return h('div', {},
    pageHead({ trail: [['/', 'Projects']], title: 'Traces', kind: 'Spans' }),
    section('Filters', form),
    section('Traces', traces.element));
}
