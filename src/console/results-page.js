// An iteration's results: how the candidate did on each datapoint of the dataset version it was
// run on. Its summary first (mean score and pass rate with their 95% intervals, coverage, errors,
// missing datapoints, each dimension), then the rows, paged, filtered (failed, errors) and sorted
// (datapoint order, score), each linked to its datapoint and to its trace's waterfall. The filter
// and the sort live in the query string, with the table's page. While the page is open it follows
// its job's events: results written to the iteration redraw the summary and the rows' page, the
// first ones replacing "no results yet", and the iteration's own changes redraw the head.
import { call, withQuery } from './api.js';
import { badge, clipped, coalesce, errorClip, facts, h, link, pageHead, replace, section, stat } from './dom.js';
import { count, dateTime, interval, mean, meanInterval, millis, percent, score } from './format.js';
import { followLive } from './live.js';
import { jobTitle } from './project-page.js';
import { setQuery } from './router.js';
import { pagedTable, table } from './table.js';

/**
 * @typedef {import('./api-types.js').Interval} Interval
 * @typedef {import('./api-types.js').DimensionSummary} DimensionSummary
 * @typedef {import('./api-types.js').ResultsSummary} Summary
 * @typedef {import('./api-types.js').Coverage} Coverage an iteration's results as a job's summary lists them
 * @typedef {import('./api-types.js').Result} Result
 * @typedef {import('./api-types.js').Iteration} Iteration
 */

const pageSize = 25;
/** What the page follows while open: its job's events, of which those about this iteration count. */
const liveTypes = ['results.written', 'iteration.updated', 'iteration.deleted'];

/** The filters: what the segmented control says, and the list filter it sends. */
const filters = /** @type {const} */ ([
  ['', 'All', {}, 'No results.'],
  ['failed', 'Failed', { passed: 'false' }, 'No result failed.'],
  ['errors', 'Errors', { status: 'error' }, 'No result is an error.'],
]);

const sorts = /** @type {const} */ ([
  ['', 'Datapoint order'],
  ['score', 'Score, lowest first'],
  ['-score', 'Score, highest first'],
]);

/** @param {import('./router.js').PageContext} context */
export async function resultsPage({ params, query, signal }) {
  const id = params.id ?? '';
  /** @type {[Iteration, Summary]} */
  let [iteration, summary] = await Promise.all([
    call(`/api/job-iterations/${id}/`, { signal }),
    call(`/api/job-iterations/${id}/results/summary/`, { signal }),
  ]);
  // The job as the job list shows it: its own answer would carry every iteration's code.
  /** @type {import('./api-types.js').JobProgress} */
  const { job } = await call(withQuery(`/api/jobs/${iteration.job}/progress/`, { page_size: 1 }), { signal });
  /** @type {import('./api-types.js').Project} */
  const project = await call(`/api/projects/${job.project}/`, { signal });

  const head = h('div', {});
  const summarySlot = h('div', {});
  const rowsSlot = h('div', {});
  /** @type {{ element: HTMLElement, reload: () => Promise<void> } | null} the rows, made with the first results (their dataset version is then fixed) */
  let rows = null;

  /** Draws the head and the summary, and makes the rows' table with the first results. */
  function show() {
    replace(head, pageHead({
      trail: [['/', 'Projects'], [`/console/projects/${job.project}`, project.name], [`/console/jobs/${job.id}`, jobTitle(job)]],
      title: iteration.iteration_name,
      kind: 'Iteration results',
      id: iteration.id,
      actions: [live.element, iteration.status ? badge(iteration.status) : badge('undecided', 'neutral')],
    }));
    if (summary.results === 0 || !summary.dataset) {
      replace(summarySlot, section('Results',
        h('p', { class: 'empty' }, 'This iteration has no results yet.'),
        h('p', { class: 'hint' }, `An evaluation harness writes them per datapoint: POST /api/job-iterations/${iteration.id}/results/, or spans that report overmind.eval.score.`)));
      replace(rowsSlot);
      rows = null;
      return;
    }
    replace(summarySlot, summaryView(summary, iteration));
    if (!rows) {
      rows = resultRows(id, summary, query, signal);
      replace(rowsSlot, rows.element);
    }
  }

  // Results written while the page is open: the summary and the rows' page asked for again, the
  // answers of the last asking shown (an earlier one may come back later).
  let asked = 0;
  const reloadSummary = coalesce(async () => {
    const mine = ++asked;
    try {
      const answer = await call(`/api/job-iterations/${id}/results/summary/`, { signal });
      if (mine !== asked) return;
      const shown = rows;
      summary = answer;
      show();
      if (shown) void shown.reload();
    } catch {
      // Aborted (the page was left), or the iteration is gone: its event says so.
    }
  });

  /** @param {import('./event-stream.js').StreamEvent} event */
  function onEvent(event) {
    if (event.type === 'reset') return reloadSummary();
    const data = JSON.parse(event.data);
    if (event.type === 'results.written' && data.iteration === id) reloadSummary();
    else if (event.type === 'iteration.updated' && data.id === id) {
      iteration = data;
      show();
    } else if (event.type === 'iteration.deleted' && data.id === id) live.ended('Deleted');
  }
  const live = followLive(withQuery('/api/events/', { job: iteration.job, types: liveTypes.join(',') }), { signal, onEvent });

  show();
  return h('div', {}, head, summarySlot, rowsSlot);
}

/**
 * The summary's headline numbers, its dimensions and the run's facts.
 * @param {Summary} summary an iteration's, with results
 * @param {Iteration} iteration
 */
function summaryView(summary, iteration) {
  const dataset = /** @type {NonNullable<Summary['dataset']>} */ (summary.dataset);
  const judged = summary.passed + summary.failed;
  return h('div', {},
    h('div', { class: 'stats' },
      stat('Mean score', mean(summary.mean_score), lines(
        summary.score_ci95 ? `95% CI ${interval(summary.score_ci95)}` : 'no interval',
        `over ${count(summary.scored)} scored ${plural(summary.scored, 'datapoint')}`), 'primary'),
      stat('Pass rate', percent(summary.pass_rate), lines(
        summary.pass_rate_ci95 ? `95% CI ${percentRange(summary.pass_rate_ci95)}` : 'no interval',
        judged === 0 ? 'no result says passed or not' : `${count(summary.passed)} of ${count(judged)} passed`)),
      stat('Coverage', `${count(summary.scored)} / ${count(summary.datapoints)}`, lines('datapoints scored', `of dataset v${dataset.version}`)),
      stat('Errors', count(summary.errors), lines(`${plural(summary.errors, 'datapoint')} with only errors`, `${count(summary.error_results)} error ${plural(summary.error_results, 'row')} in all`), summary.errors > 0 ? 'tone-error' : ''),
      stat('Missing', count(summary.missing.count), lines(`${plural(summary.missing.count, 'datapoint')} without a result`))),
    h('div', { class: 'columns wide-first' },
      section('Dimensions', summary.dimensions.length === 0
        ? h('p', { class: 'empty' }, 'No result has dimension scores.')
        : table([
          { label: 'Dimension', cell: (dimension) => clipped(dimension.name, 'strong') },
          { label: 'n', numeric: true, cell: (dimension) => count(dimension.n) },
          { label: 'Mean', numeric: true, cell: (dimension) => mean(dimension.mean) },
          { label: '95% CI', numeric: true, cell: (dimension) => (dimension.ci95 ? interval(dimension.ci95) : '—') },
        ], summary.dimensions)),
      section('Run', facts([
        ['Dataset', link(`/console/datasets/${dataset.id}`, `v${dataset.version}`)],
        ['Results', `${count(summary.results)} rows${summary.attempts_max > 1 ? `, up to ${count(summary.attempts_max)} attempts a datapoint` : ''}`],
        ['avg_score', score(iteration.avg_score)],
        ['Created', dateTime(iteration.created_at)],
      ]))));
}

/**
 * The rows, paged, with the filter and the sort (both kept in the query string, with the page).
 * @param {string} id the iteration's
 * @param {Summary} summary its summary when its first results were shown
 * @param {URLSearchParams} query
 * @param {AbortSignal} signal
 */
function resultRows(id, summary, query, signal) {
  const dataset = /** @type {NonNullable<Summary['dataset']>} */ (summary.dataset);
  let filter = filters.some(([value]) => value && value === query.get('filter')) ? /** @type {string} */ (query.get('filter')) : '';
  let sort = sorts.some(([value]) => value && value === query.get('sort')) ? /** @type {string} */ (query.get('sort')) : '';
  const current = () => filters.find(([value]) => value === filter) ?? filters[0];

  const rows = pagedTable({
    key: 'results',
    pageSize,
    signal,
    empty: () => current()[3],
    /** @returns {Promise<import('./table.js').Page<Result>>} */
    load: (page) => call(withQuery(`/api/job-iterations/${id}/results/`, { ...current()[2], ordering: sort, page, page_size: pageSize }), { signal }),
    rowClass: (result) => (result.status === 'error' ? 'error-row' : ''),
    columns: resultColumns(dataset.id, summary.attempts_max > 1),
  });

  const filterControl = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Show results' },
    filters.map(([value, label]) => h('button', { type: 'button', class: 'segment', 'aria-pressed': String(value === filter), dataset: { filter: value }, onclick: (event) => {
      filter = value;
      for (const button of filterControl.querySelectorAll('button')) button.setAttribute('aria-pressed', String(button === event.currentTarget));
      setQuery({ filter, results_page: null });
      void rows.reload();
    } }, label)));
  const sortControl = h('select', { name: 'sort', onchange: () => {
    sort = sortControl.value;
    setQuery({ sort, results_page: null });
    void rows.reload();
  } }, sorts.map(([value, label]) => h('option', { value, selected: value === sort }, label)));

  return {
    element: section('Results', h('div', { class: 'toolbar inline-form' }, filterControl, h('label', {}, 'Sort by', sortControl)), rows.element),
    reload: rows.reload,
  };
}

/**
 * @param {string} datasetId
 * @param {boolean} attempts whether datapoints have several attempts (links then name theirs)
 * @returns {import('./table.js').Column<Result>[]}
 */
function resultColumns(datasetId, attempts) {
  /** @param {Result} result */
  const which = (result) => `datapoint ${result.datapoint_order}${attempts ? `, attempt ${result.attempt}` : ''}`;
  return [
    { label: 'Datapoint', numeric: true, cell: (result) => h('a', { href: withQuery(`/console/datasets/${datasetId}`, { datapoint: result.datapoint }), title: `Datapoint ${result.datapoint}`, 'aria-label': `Datapoint #${result.datapoint_order}` }, `#${result.datapoint_order}`) },
    { label: 'Attempt', numeric: true, cell: (result) => String(result.attempt) },
    { label: 'Score', numeric: true, cell: (result) => h('span', { class: 'strong' }, score(result.score)) },
    { label: 'Passed', cell: (result) => (result.passed === null ? '—' : result.passed ? badge('passed', 'keep') : badge('failed')) },
    { label: 'Status', cell: (result) => (result.status === 'error' ? [badge('error'), ' ', errorClip(result.error)] : badge('ok', 'neutral')) },
    { label: 'Latency', numeric: true, cell: (result) => millis(result.latency_ms) },
    { label: 'Trace', cell: (result) => (result.trace_id ? h('a', { href: `/console/traces/${result.trace_id}`, title: `Trace ${result.trace_id}`, 'aria-label': `Trace of ${which(result)}` }, 'Trace') : '—') },
  ];
}

/** @param {Interval} ci */
function percentRange(ci) {
  return `[${percent(ci.low)}, ${percent(ci.high)}]`;
}

/**
 * A stat's note of several lines.
 * @param {...string} texts
 */
function lines(...texts) {
  return texts.map((text) => h('span', { class: 'note-line' }, text));
}

/**
 * @param {number} n
 * @param {string} word
 */
function plural(n, word) {
  return n === 1 ? word : `${word}s`;
}

/**
 * An iteration's summary as a job's summary lists it: no dimensions, the missing datapoints counted.
 * @param {Summary} summary
 * @returns {Coverage}
 */
export function coverageOf({ missing, dimensions: _dimensions, ...rest }) {
  return { ...rest, missing: missing.count };
}

/**
 * An iteration's coverage for a table cell: scored / datapoints, linked to its results page,
 * with its errors beside it; a dash while it has no results.
 * @param {Coverage | undefined} summary
 * @param {string} name the iteration's name, for the link's description
 */
export function coverageCell(summary, name) {
  if (!summary || summary.results === 0) return h('span', { class: 'muted' }, '—');
  const description = `Results of ${name}: ${count(summary.scored)} scored, ${count(summary.errors)} errors, ${count(summary.missing)} missing of ${count(summary.datapoints)} datapoints${summary.dataset ? ` (dataset v${summary.dataset.version})` : ''}`;
  return h('span', {},
    h('a', { href: `/console/job-iterations/${summary.iteration}/results`, title: description }, `${count(summary.scored)} / ${count(summary.datapoints)}`),
    summary.errors > 0 ? [' ', h('span', { class: 'cell-note error-text' }, `${count(summary.errors)} ${summary.errors === 1 ? 'error' : 'errors'}`)] : null);
}

/**
 * An iteration's mean score with its interval for a table cell; the interval whole in the title.
 * @param {Coverage | undefined} summary
 */
export function meanCell(summary) {
  if (!summary || summary.mean_score === null) return h('span', { class: 'muted' }, '—');
  const title = summary.score_ci95
    ? `Mean ${score(summary.mean_score)}, 95% CI ${score(summary.score_ci95.low)} to ${score(summary.score_ci95.high)} (t interval over ${count(summary.scored)} scored datapoints)`
    : `Mean ${score(summary.mean_score)} of ${count(summary.scored)} scored datapoint: no interval`;
  return h('span', { title }, meanInterval(summary.mean_score, summary.score_ci95));
}
