// A job: its status and scores first, then the score curve of every iteration (the job progress
// endpoint, one request for the job and up to 10,000 iterations: the job's own answer would carry
// every iteration's code), the iterations table with each iteration's results (coverage, and the
// mean score with its interval: one request for every iteration's summary, asked once the table's
// first page is in and the page is idle, and filled into the table when it comes, so that neither
// the chart nor the table waits for it; then, as results are written, the summary of each
// iteration written to), and a way to pick
// two iterations to compare. While the page is open it follows the job's events, so a running
// job's new iterations and results appear as they land, without polling or reloading.
//
// A job's runs (iterations evaluated as leased work by workers) are listed on its page with their
// progress, each linked to its own page (run-page.js), which draws a run's tasks with the same bar
// and reads the job and its iterations' names as this page does (both exported from here).
import { call, withQuery } from './api.js';
import { badge, clipped, coalesce, facts, h, link, pageHead, replace, section, stat } from './dom.js';
import { count, dateTime, delta, score, text } from './format.js';
import { followLive } from './live.js';
import { jobTitle, toneOf } from './project-page.js';
import { coverageCell, coverageOf, meanCell } from './results-page.js';
import { navigate } from './router.js';
import { scoreChart } from './score-chart.js';
import { pagedTable } from './table.js';

/**
 * @typedef {import('./api-types.js').ProgressPoint} ProgressPoint
 * @typedef {import('./api-types.js').JobListItem} Job the job as its progress names it
 * @typedef {import('./api-types.js').Iteration} Iteration
 * @typedef {import('./api-types.js').JobProgress} ProgressPage
 * @typedef {import('./api-types.js').ResultsSummary} Summary
 * @typedef {import('./api-types.js').Coverage} Coverage
 */

const progressPageSize = 10_000;
const liveTypes = ['iteration.created', 'iteration.updated', 'iteration.deleted', 'job.updated', 'job.deleted', 'results.written', 'run.created', 'run.progress', 'run.finished'];

/** @param {import('./router.js').PageContext} context */
export async function jobPage({ params, signal }) {
  const id = params.id ?? '';
  let { job, points } = await loadProgress(id, signal);
  /** @type {HTMLElement | null} the iterations table, once made */
  let tableElement = null;
  const summaries = resultSummaries(id, signal, () => {
    for (const slot of tableElement?.querySelectorAll('[data-results]') ?? []) fillResults(/** @type {HTMLElement} */ (slot));
    showHeadline();
    showChart();
  });
  /** @type {import('./api-types.js').Project} */
  const project = await call(`/api/projects/${job.project}/`, { signal });
  /** @type {string[]} the picked iterations, oldest pick first */
  let picked = [];

  const headline = h('div', { class: 'stats' });
  const title = h('div', {});
  const pickedSlot = h('div', { class: 'compare-bar' });
  const chart = scoreChart({ points, baseline: job.baseline_score, signal, onPick: (point) => pick(point.id) });
  /** Says what the chart plots when it is not each iteration's avg_score, or why it is empty. */
  const chartNote = h('p', { class: 'muted chart-note' });
  /** What the chart last drew: redrawn only when that changes (a redraw resets a zoom). */
  let drawn = { plotted: points, baseline: job.baseline_score };
  /** Draws the chart and its note from the points (and, for a job its runs evaluated, the summaries). */
  const showChart = () => {
    const { plotted, byResults } = plottedPoints(points, summaries.of);
    if (plotted !== drawn.plotted || job.baseline_score !== drawn.baseline) {
      drawn = { plotted, baseline: job.baseline_score };
      chart.update(plotted, job.baseline_score, byResults ? 'mean of results' : 'avg_score');
    }
    const reported = plotted.filter((point) => point.avg_score !== null).length;
    replace(chartNote, chartNoteOf(byResults, reported, points.length, summaries.loaded));
    // A legend of series with no value reads as bare labels ("discard: keep:"): shown once a point is.
    chart.element.classList.toggle('nothing-plotted', reported === 0);
  };
  const iterations = pagedTable({
    key: 'iterations',
    pageSize: 25,
    signal,
    searchLabel: 'Search iterations by name or description',
    empty: 'No iterations yet.',
    /** @returns {Promise<import('./table.js').Page<Iteration>>} */
    load: (page, search) => call(withQuery('/api/job-iterations/', { job: id, page, page_size: 25, search }), { signal }).finally(summaries.begin),
    rowClass: (iteration) => (picked.includes(iteration.id) ? 'picked-row' : ''),
    columns: [
      { label: 'Compare', cell: (iteration) => h('input', { type: 'checkbox', 'aria-label': `Compare ${iteration.iteration_name}`, checked: picked.includes(iteration.id), onchange: () => pick(iteration.id) }) },
      { label: '#', numeric: true, cell: (iteration) => (iteration.order === null ? '—' : String(iteration.order)) },
      { label: 'Iteration', cell: (iteration) => clipped(iteration.iteration_name, 'strong narrow') },
      { label: 'avg_score', numeric: true, cell: (iteration) => score(iteration.avg_score) },
      { label: 'vs baseline', numeric: true, cell: (iteration) => versusBaseline(iteration.avg_score) },
      { label: 'Mean (95% CI)', numeric: true, cell: (iteration) => resultsSlot('mean', iteration) },
      { label: 'Coverage', cell: (iteration) => resultsSlot('coverage', iteration) },
      { label: 'Decision', cell: (iteration) => (iteration.status ? badge(iteration.status) : badge('none', 'neutral')) },
      { label: 'Description', cell: (iteration) => clipped(text(iteration.description), 'muted short') },
      { label: 'Created', cell: (iteration) => dateTime(iteration.created_at) },
    ],
  });

  tableElement = iterations.element;
  const runs = jobRuns(id, (iteration) => points.find((point) => point.id === iteration)?.iteration_name ?? iteration, signal);

  /**
   * A cell of the iteration's results, filled from the summaries now and again whenever they change.
   * @param {'mean' | 'coverage'} kind
   * @param {Iteration} iteration
   */
  function resultsSlot(kind, iteration) {
    return fillResults(h('span', { dataset: { results: kind, iteration: iteration.id, name: iteration.iteration_name } }));
  }

  /** @param {HTMLElement} slot */
  function fillResults(slot) {
    const { results: kind, iteration = '', name = '' } = slot.dataset;
    if (!summaries.loaded) {
      slot.dataset.pending = 'true';
      replace(slot, h('span', { class: 'muted', title: 'Reading the results…' }, '…'));
    } else {
      delete slot.dataset.pending;
      replace(slot, kind === 'mean' ? meanCell(summaries.of(iteration)) : coverageCell(summaries.of(iteration), name));
    }
    return slot;
  }

  /** @param {number | null} value */
  function versusBaseline(value) {
    const change = typeof value === 'number' && typeof job.baseline_score === 'number' ? value - job.baseline_score : null;
    return h('span', { class: toneOf(change) }, delta(change));
  }

  /** @param {string} iterationId */
  function pick(iterationId) {
    picked = picked.includes(iterationId) ? picked.filter((other) => other !== iterationId) : [...picked, iterationId].slice(-2);
    showPicked();
    void iterations.reload();
  }

  function showPicked() {
    const names = picked.map((pickedId) => points.find((point) => point.id === pickedId)?.iteration_name ?? pickedId);
    const [from, to] = picked;
    replace(pickedSlot,
      h('span', { class: 'muted' }, picked.length === 0 ? 'Pick two iterations (in the table or on the chart) to compare them.' : 'Compare '),
      names.map((name, index) => [index > 0 ? ' with ' : null, clipped(name, 'strong pick')]),
      h('button', { type: 'button', class: 'button primary', disabled: !(from && to), onclick: () => navigate(`/console/job-iterations/${from}/compare/${to}`) }, 'Compare →'));
  }

  function showHeadline() {
    const counts = countDecisions(points);
    const best = bestPoint(points);
    // A job whose iterations were only evaluated by runs has results but no avg_score: its best
    // is then the best mean of results, said so.
    const bestByResults = best ? undefined : bestMean(points, summaries.of);
    const bestScore = job.best_score ?? best?.avg_score ?? bestByResults?.mean ?? null;
    // The job's own improvement when it states one, else what its best iteration gained.
    const improvement = job.improvement ?? (bestScore !== null && job.baseline_score !== null ? bestScore - job.baseline_score : null);
    replace(title, pageHead({
      trail: [['/', 'Projects'], [`/console/projects/${job.project}`, project.name], ...(job.agent ? /** @type {[string, string][]} */ ([[`/console/agents/${job.agent}`, job.agent_display_name ?? 'Agent']]) : [])],
      title: jobTitle(job),
      kind: 'Job',
      actions: [live.element, badge(job.status)],
    }));
    replace(headline,
      stat('Best score', score(bestScore),
        best ? ['at ', clipped(best.iteration_name)] : bestByResults ? ['mean of results, at ', clipped(bestByResults.name)] : 'no scored iteration yet', 'primary'),
      stat('Improvement', h('span', { class: toneOf(improvement) }, delta(improvement)), `over baseline ${score(job.baseline_score)}`),
      stat('Baseline', score(job.baseline_score)),
      stat('Iterations', count(points.length), decisions(counts)));
  }

  /** Redraws what depends on the iterations, once per burst of events. */
  /** The job's own fields, shown again as its updates arrive (its runs move its status and updated_at). */
  const jobFacts = h('div', {});
  const showFacts = () => replace(jobFacts, facts([
    ['Agent', job.agent ? link(`/console/agents/${job.agent}`, clipped(job.agent_display_name ?? job.agent)) : '—'],
    ['Type', text(job.job_type)],
    ['Prompt', clipped(text(job.prompt_slug), 'mono')],
    ['Analyzer model', clipped(text(job.analyzer_model), 'mono')],
    ['Started', dateTime(job.created_at)],
    ['Updated', dateTime(job.updated_at)],
  ]));

  const refresh = coalesce(() => {
    showHeadline();
    showFacts();
    showChart();
    void iterations.reload();
  });

  /** @param {import('./event-stream.js').StreamEvent} event */
  async function onEvent(event) {
    if (event.type === 'results.written') return summaries.reload(JSON.parse(event.data).iteration);
    if (event.type === 'run.progress') return runs.progressed(JSON.parse(event.data));
    if (event.type === 'run.created' || event.type === 'run.finished') return runs.reload();
    if (event.type === 'reset') {
      summaries.reloadAll();
      void runs.reload();
      ({ job, points } = await loadProgress(id, signal));
    } else if (event.type === 'job.updated') {
      job = { ...job, ...JSON.parse(event.data) };
    } else if (event.type === 'job.deleted') {
      return live.ended('Deleted');
    } else if (event.type.startsWith('iteration.')) {
      points = applyIteration(points, event.type, JSON.parse(event.data), id);
    }
    refresh();
  }

  const live = followLive(withQuery('/api/events/', { job: id, types: liveTypes.join(',') }), { signal, onEvent: (event) => void onEvent(event) });
  showHeadline();
  showFacts();
  showChart();
  showPicked();

  return h('div', { class: 'job-page' },
    title,
    headline,
    runs.element,
    section('Score per iteration', chartNote, chart.element),
    section('Iterations', pickedSlot, iterations.element),
    section('Job', jobFacts));
}

/**
 * The job, and every iteration of it in order with the best score so far, from the progress
 * endpoint.
 * @param {string} id
 * @param {AbortSignal} signal
 * @returns {Promise<{ job: Job, points: ProgressPoint[] }>}
 */
export async function loadProgress(id, signal) {
  /** @type {ProgressPoint[]} */
  const points = [];
  for (let page = 1; ; page++) {
    /** @type {ProgressPage} */
    const answer = await call(withQuery(`/api/jobs/${id}/progress/`, { page, page_size: progressPageSize }), { signal });
    points.push(...answer.results);
    if (!answer.next) return { job: answer.job, points };
  }
}

/**
 * What the note above the chart says: what it plots when that is not every iteration's avg_score,
 * or why it is empty (nothing until the results' summaries have come, which may fill it).
 * @param {boolean} byResults it plots the means of results
 * @param {number} plotted iterations with a point
 * @param {number} total iterations
 * @param {boolean} summariesLoaded
 */
function chartNoteOf(byResults, plotted, total, summariesLoaded) {
  if (total === 0 || !summariesLoaded) return '';
  if (byResults) {
    return plotted > 0 ? 'No iteration reports an avg_score: the chart plots the mean of each iteration\'s results (as the table below does).'
      : 'No iteration has an avg_score or a result yet: the chart plots the score each iteration reports, or else the mean of its results.';
  }
  if (plotted === total) return '';
  return `The chart plots the avg_score each iteration reports: ${count(plotted)} of ${count(total)} report one (the means of every iteration's results are in the table below).`;
}

/**
 * What the chart plots: each iteration's avg_score; when none reports one (a job its runs
 * evaluated: a run writes results, not avg_score), the mean of each iteration's results instead,
 * as the headline's best score does. Never the two mixed on one axis.
 * @param {ProgressPoint[]} points
 * @param {(iteration: string) => Coverage | undefined} summaryOf
 * @returns {{ plotted: ProgressPoint[], byResults: boolean }}
 */
function plottedPoints(points, summaryOf) {
  if (points.length === 0 || points.some((point) => point.avg_score !== null)) return { plotted: points, byResults: false };
  return { plotted: withBestSoFar(points.map((point) => ({ ...point, avg_score: summaryOf(point.id)?.mean_score ?? null }))), byResults: true };
}

/**
 * The iteration whose results have the highest mean, if any has a mean.
 * @param {ProgressPoint[]} points
 * @param {(iteration: string) => Coverage | undefined} summaryOf
 * @returns {{ name: string, mean: number } | undefined}
 */
function bestMean(points, summaryOf) {
  /** @type {{ name: string, mean: number } | undefined} */
  let best;
  for (const point of points) {
    const mean = summaryOf(point.id)?.mean_score;
    if (typeof mean === 'number' && (!best || mean > best.mean)) best = { name: point.iteration_name, mean };
  }
  return best;
}

/** Iterations written to in one burst whose summaries are read one by one; more, and the job's are read whole. */
export const summariesOneByOneMax = 8;

/**
 * Every iteration's results summary, by iteration id: the job's (one request, once `begin()` is
 * called) first, then each iteration's that results are written to (`reload(iteration)`).
 * `changed` is told each time answers are in. Reloads are coalesced: those asked for in one frame,
 * or while answers are awaited, are read together next.
 * @param {string} jobId
 * @param {AbortSignal} signal
 * @param {() => void} changed
 */
function resultSummaries(jobId, signal, changed) {
  /** @type {Map<string, Coverage>} */
  let byIteration = new Map();
  let loaded = false;
  let loading = false;
  /** @type {Set<string> | 'all'} what to read next */
  let stale = 'all';
  let begun = false;

  async function load() {
    begun = true;
    loading = true;
    while (!signal.aborted && (stale === 'all' || stale.size > 0)) {
      const wanted = stale;
      stale = new Set();
      try {
        if (wanted === 'all' || wanted.size > summariesOneByOneMax) {
          /** @type {import('./api-types.js').JobResultsSummary} */
          const answer = await call(`/api/jobs/${jobId}/results-summary/`, { signal });
          byIteration = new Map(answer.iterations.map((summary) => [summary.iteration, summary]));
        } else {
          /** @type {(Summary | null)[]} */
          const answers = await Promise.all([...wanted].map((iteration) => call(`/api/job-iterations/${iteration}/results/summary/`, { signal }).catch(() => null)));
          for (const summary of answers) if (summary) byIteration.set(summary.iteration, coverageOf(summary));
        }
      } catch {
        // Results add to the table: without them its cells keep what they showed ("—" at first).
      }
      if (signal.aborted) return;
      loaded = true;
      changed();
    }
    loading = false;
  }
  const start = coalesce(() => {
    if (!loading) void load();
  });

  return {
    /**
     * Asks for the job's summaries, the first time only, once the page is idle: the chart and the
     * table need not wait for them.
     */
    begin() {
      if (begun || loading) return;
      begun = true;
      requestIdleCallback(() => {
        if (!loading) void load();
      }, { timeout: 500 });
    },
    get loaded() {
      return loaded;
    },
    /** @param {string} iteration */
    of: (iteration) => byIteration.get(iteration),
    /** @param {string} iteration one whose results were written */
    reload(iteration) {
      if (stale !== 'all') stale.add(iteration);
      start();
    },
    reloadAll() {
      stale = 'all';
      start();
    },
  };
}

/**
 * The iterations after an iteration event, in the API's order (order, then created_at; no order
 * last), with the best score so far recomputed from the first one that moved.
 * @param {ProgressPoint[]} points
 * @param {string} type
 * @param {Iteration | { id: string }} data
 * @param {string} jobId
 */
export function applyIteration(points, type, data, jobId) {
  const rest = points.filter((point) => point.id !== data.id);
  if (type === 'iteration.deleted' || !('job' in data) || data.job !== jobId) return withBestSoFar(rest);
  const point = { id: data.id, order: data.order, iteration_name: data.iteration_name, avg_score: data.avg_score, status: data.status, created_at: data.created_at, best_so_far: null };
  let at = rest.length;
  while (at > 0 && comesBefore(point, /** @type {ProgressPoint} */ (rest[at - 1]))) at--;
  rest.splice(at, 0, point);
  return withBestSoFar(rest);
}

/**
 * @param {ProgressPoint} a
 * @param {ProgressPoint} b
 */
function comesBefore(a, b) {
  if (a.order !== b.order) return b.order === null ? a.order !== null : a.order !== null && a.order < b.order;
  if (a.created_at !== b.created_at) return a.created_at < b.created_at;
  return a.id < b.id;
}

/** @param {ProgressPoint[]} points */
function withBestSoFar(points) {
  /** @type {number | null} */
  let best = null;
  return points.map((point) => {
    if (typeof point.avg_score === 'number' && (best === null || point.avg_score > best)) best = point.avg_score;
    return point.best_so_far === best ? point : { ...point, best_so_far: best };
  });
}

/** @param {ProgressPoint[]} points */
function countDecisions(points) {
  const counts = { keep: 0, discard: 0, unset: 0 };
  for (const point of points) counts[point.status ?? 'unset']++;
  return counts;
}

/** @param {ProgressPage['counts']} counts */
function decisions({ keep, discard, unset }) {
  return [`${count(keep)} keep`, `${count(discard)} discard`, unset > 0 ? `${count(unset)} undecided` : ''].filter(Boolean).join(' · ');
}

/** @param {ProgressPoint[]} points */
function bestPoint(points) {
  /** @type {ProgressPoint | undefined} */
  let best;
  for (const point of points) {
    if (typeof point.avg_score === 'number' && (!best || point.avg_score > /** @type {number} */ (best.avg_score))) best = point;
  }
  return best;
}

// ---- Runs ----

/**
 * @typedef {import('./api-types.js').Run} Run
 * @typedef {import('./api-types.js').RunCounts} RunCounts
 * @typedef {import('./api-types.js').RunStatus} RunStatus
 * @typedef {{ run: string, job: string, status: RunStatus, reason: import('./api-types.js').RunReason, counts: RunCounts, finished: number, total: number, rate: number | null, eta_seconds: number | null }} RunProgress
 *   what a run.progress event says (src/runs/run-progress.ts): tasks ended of total, the rate over
 *   the last seconds and the time left at it (null until measured)
 */

/** Task states as the bar draws them, left to right: ended (done, dead, skipped, cancelled), leased, then queued (the empty track). */
export const taskStates = /** @type {const} */ (['done', 'dead', 'skipped', 'cancelled', 'leased', 'queued']);
/** A run's statuses while it can still move. */
export const liveStatuses = ['queued', 'running'];

/** A run's tasks ended: those that ran and those that will not. @param {RunCounts} counts */
export function endedOf(counts) {
  return ranOf(counts) + notRunOf(counts);
}

/**
 * Tasks that ran to an end (done or dead): what a run did, where endedOf counts those skipped
 * and cancelled too (a cancelled run has every task ended, yet ran few).
 * @param {RunCounts} counts
 */
export function ranOf(counts) {
  return counts.done + counts.dead;
}

/** Tasks that ended without running (skipped by a budget or a race, or cancelled). @param {RunCounts} counts */
export function notRunOf(counts) {
  return counts.skipped + counts.cancelled;
}

/** @param {RunStatus} status */
export function runBadge(status) {
  return badge(status, status === 'queued' ? 'pending' : status);
}

/**
 * Iteration names as a sentence lists them: "a", "a and b", "a, b and c", "a, b and 3 more".
 * @param {string[]} names
 */
export function iterationList(names) {
  if (names.length <= 1) return names[0] ?? '';
  if (names.length <= 3) return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return `${names.slice(0, 2).join(', ')} and ${names.length - 2} more`;
}

/**
 * A run's tasks as a bar: each ended state and the leased tasks their share of the width, the
 * queued ones the empty track. A progressbar of the tasks ended, to assistive technology.
 * @param {RunCounts} counts
 * @param {string} label its accessible name
 * @param {string} [className]
 */
export function taskBar(counts, label, className = '') {
  const ended = endedOf(counts);
  return h('div', {
    class: `task-bar ${className}`.trim(), role: 'progressbar', 'aria-label': label,
    'aria-valuemin': 0, 'aria-valuemax': counts.total, 'aria-valuenow': ended, 'aria-valuetext': `${count(ended)} of ${count(counts.total)} tasks ended`,
  }, taskStates.filter((state) => state !== 'queued' && counts[state] > 0).map((state) => {
    const part = h('span', { class: `task-bar-part state-${state}`, dataset: { state } });
    // Set through the CSSOM: the console's policy allows no style attribute.
    part.style.width = `${(counts[state] / counts.total) * 100}%`;
    return part;
  }));
}

/**
 * A run's progress for a table cell: a small bar, tasks run of total, the dead ones, and those
 * that will not run (skipped, cancelled).
 * @param {RunCounts} counts
 * @param {string} label the bar's accessible name
 */
function runProgressCell(counts, label) {
  const notRun = notRunOf(counts);
  return [
    taskBar(counts, label, 'small'),
    h('span', { class: 'task-bar-text', title: 'Tasks run (done or dead) of all the run\'s tasks' }, `${count(ranOf(counts))} / ${count(counts.total)}`),
    counts.dead > 0 ? [' ', h('span', { class: 'cell-note error-text' }, `${count(counts.dead)} dead`)] : null,
    notRun > 0 ? [' ', h('span', { class: 'cell-note' }, `${count(notRun)} not run`)] : null,
  ];
}

/**
 * A job's runs, newest first, each linked to its page; the section shows once the job has one.
 * Live: `reload()` after run.created and run.finished, `progressed()` redraws a run's row.
 * @param {string} jobId
 * @param {(iteration: string) => string} nameOf an iteration's name
 * @param {AbortSignal} signal
 */
function jobRuns(jobId, nameOf, signal) {
  const pageSize = 5;
  /** @param {Run} run */
  const labelOf = (run) => iterationList(run.iterations.map(nameOf));
  const runs = pagedTable({
    key: 'runs',
    pageSize,
    signal,
    empty: 'No runs.',
    /** @returns {Promise<import('./table.js').Page<Run>>} */
    load: async (page) => {
      /** @type {import('./table.js').Page<Run>} */
      const answer = await call(withQuery(`/api/jobs/${jobId}/runs/`, { page, page_size: pageSize }), { signal });
      element.hidden = answer.count === 0;
      return answer;
    },
    columns: [
      { label: 'Run', cell: (run) => h('a', { href: `/console/runs/${run.id}`, title: `Run ${run.id}` }, clipped(labelOf(run), 'strong wide')) },
      { label: 'Status', cell: (run) => h('span', { dataset: { runStatus: run.id, ...(run.finished_at ? { ended: '' } : {}) } }, runStatusCell(run.status, run.reason)) },
      { label: 'Progress', cell: (run) => h('span', { class: 'run-progress', dataset: { runProgress: run.id, label: `Tasks ended of ${labelOf(run)}` } }, runProgressCell(run.counts, `Tasks ended of ${labelOf(run)}`)) },
      { label: 'Created', cell: (run) => dateTime(run.created_at) },
      { label: 'Finished', cell: (run) => dateTime(run.finished_at) },
    ],
  });
  const element = section('Runs', runs.element);
  element.hidden = true;
  element.dataset.runs = '';
  return {
    element,
    reload: runs.reload,
    /** @param {RunProgress} progress */
    progressed(progress) {
      // A run shown as ended that is live again (retried) has its row made anew: its finish is gone.
      const reopened = liveStatuses.includes(progress.status) && element.querySelector(`[data-run-status="${CSS.escape(progress.run)}"][data-ended]`);
      if (reopened) {
        void runs.reload();
        return;
      }
      for (const slot of element.querySelectorAll(`[data-run-progress="${CSS.escape(progress.run)}"]`)) {
        replace(slot, runProgressCell(progress.counts, /** @type {HTMLElement} */ (slot).dataset.label ?? 'Tasks ended'));
      }
      for (const slot of element.querySelectorAll(`[data-run-status="${CSS.escape(progress.run)}"]`)) replace(slot, runStatusCell(progress.status, progress.reason ?? null));
    },
  };
}

/**
 * @param {RunStatus} status
 * @param {import('./api-types.js').RunReason} reason
 */
function runStatusCell(status, reason) {
  // A reason that only repeats the status (cancelled, cancelled) is left out.
  const note = reason && reason !== status && !(status === 'completed' && reason === 'all_done') ? reason.replaceAll('_', ' ') : null;
  return [runBadge(status), note ? [' ', h('span', { class: 'cell-note muted' }, note)] : null];
}
