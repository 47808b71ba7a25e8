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
// progress, and each has a page of its own (`runPage`, below): how far it is, how fast it goes and
// how long it has left, its tasks by state, the workers of its project, its errors and its
// iterations' results, followed live from the same events. (It lives in this module because the
// service serves the console's files from a fixed list, src/http/resources/console.ts.)
import { call, withQuery } from './api.js';
import { badge, clipped, coalesce, facts, h, link, pageHead, replace, section, stat } from './dom.js';
import { ago, count, dateTime, delta, score, taskRate, text, timeLeft } from './format.js';
import { followLive } from './live.js';
import { jobTitle, toneOf } from './project-page.js';
import { coverageCell, coverageOf, meanCell } from './results-page.js';
import { navigate } from './router.js';
import { scoreChart } from './score-chart.js';
import { pagedTable, table } from './table.js';

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
  });
  /** @type {import('./api-types.js').Project} */
  const project = await call(`/api/projects/${job.project}/`, { signal });
  /** @type {string[]} the picked iterations, oldest pick first */
  let picked = [];

  const headline = h('div', { class: 'stats' });
  const title = h('div', {});
  const pickedSlot = h('div', { class: 'compare-bar' });
  const chart = scoreChart({ points, baseline: job.baseline_score, signal, onPick: (point) => pick(point.id) });
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
    const bestScore = job.best_score ?? best?.avg_score ?? null;
    // The job's own improvement when it states one, else what its best iteration gained.
    const improvement = job.improvement ?? (bestScore !== null && job.baseline_score !== null ? bestScore - job.baseline_score : null);
    replace(title, pageHead({
      trail: [['/', 'Projects'], [`/console/projects/${job.project}`, project.name], ...(job.agent ? /** @type {[string, string][]} */ ([[`/console/agents/${job.agent}`, job.agent_display_name ?? 'Agent']]) : [])],
      title: jobTitle(job),
      kind: 'Job',
      actions: [live.element, badge(job.status)],
    }));
    replace(headline,
      stat('Best score', score(bestScore), best ? ['at ', clipped(best.iteration_name)] : 'no scored iteration yet', 'primary'),
      stat('Improvement', h('span', { class: toneOf(improvement) }, delta(improvement)), `over baseline ${score(job.baseline_score)}`),
      stat('Baseline', score(job.baseline_score)),
      stat('Iterations', count(points.length), decisions(counts)));
  }

  /** Redraws what depends on the iterations, once per burst of events. */
  const refresh = coalesce(() => {
    showHeadline();
    chart.update(points, job.baseline_score);
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
  showPicked();

  return h('div', { class: 'job-page' },
    title,
    headline,
    runs.element,
    section('Score per iteration', chart.element),
    section('Iterations', pickedSlot, iterations.element),
    section('Job', facts([
      ['Agent', job.agent ? link(`/console/agents/${job.agent}`, clipped(job.agent_display_name ?? job.agent)) : '—'],
      ['Type', text(job.job_type)],
      ['Prompt', clipped(text(job.prompt_slug), 'mono')],
      ['Analyzer model', clipped(text(job.analyzer_model), 'mono')],
      ['Started', dateTime(job.created_at)],
      ['Updated', dateTime(job.updated_at)],
    ])));
}

/**
 * The job, and every iteration of it in order with the best score so far, from the progress
 * endpoint.
 * @param {string} id
 * @param {AbortSignal} signal
 * @returns {Promise<{ job: Job, points: ProgressPoint[] }>}
 */
async function loadProgress(id, signal) {
  /** @type {ProgressPoint[]} */
  const points = [];
  for (let page = 1; ; page++) {
    /** @type {ProgressPage} */
    const answer = await call(withQuery(`/api/jobs/${id}/progress/`, { page, page_size: progressPageSize }), { signal });
    points.push(...answer.results);
    if (!answer.next) return { job: answer.job, points };
  }
}

/** Iterations written to in one burst whose summaries are read one by one; more, and the job's are read whole. */
const summariesOneByOneMax = 8;

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
 * @typedef {import('./api-types.js').Task} Task
 * @typedef {import('./api-types.js').Worker} Worker
 * @typedef {{ run: string, job: string, status: RunStatus, counts: RunCounts, finished: number, total: number, rate: number | null, eta_seconds: number | null }} RunProgress
 *   what a run.progress event says (src/runs/run-progress.ts): tasks ended of total, the rate over
 *   the last seconds and the time left at it (null until measured)
 */

/** What a run's page follows: its job's events, of which those about this run (and its iterations' results) count. */
const runLiveTypes = ['run.progress', 'run.finished', 'results.written', 'job.updated', 'job.deleted'];
/** Task states as the bar draws them, left to right: ended (done, dead, skipped, cancelled), leased, then queued (the empty track). */
const taskStates = /** @type {const} */ (['done', 'dead', 'skipped', 'cancelled', 'leased', 'queued']);
const liveStatuses = ['queued', 'running'];
const errorsPageSize = 10;
const workersPageSize = 10;
/** Workers have no events: while a run is live its page asks for them again this often (and after progress, at most this often). */
const workersRefreshMs = 10_000;
const workersAfterProgressMs = 2_000;
/** A run's own answer (what it spent, when it started) is asked again after progress at most this often. */
const runRefreshMs = 250;
/** The window run.progress measures its rate over (src/runs/run-progress.ts): with no event for that long, no task ended in it. */
const stalledMs = 10_000;

/** @type {Record<string, string>} why a run ended, in words (another reason reads as its name) */
const reasonWords = { all_done: 'every task ended', budget: 'its budget was reached', cancelled: 'cancelled', failed: 'it could not go on', decided: 'every candidate of its race was decided' };

/** @param {RunCounts} counts */
function endedOf(counts) {
  return counts.done + counts.dead + counts.skipped + counts.cancelled;
}

/** @param {RunStatus} status */
function runBadge(status) {
  return badge(status, status === 'queued' ? 'pending' : status);
}

/**
 * Iteration names as a sentence lists them: "a", "a and b", "a, b and c", "a, b and 3 more".
 * @param {string[]} names
 */
function iterationList(names) {
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
function taskBar(counts, label, className = '') {
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
 * A run's progress for a table cell: a small bar, tasks ended of total, and the dead ones.
 * @param {RunCounts} counts
 * @param {string} label the bar's accessible name
 */
function runProgressCell(counts, label) {
  return [
    taskBar(counts, label, 'small'),
    h('span', { class: 'task-bar-text' }, `${count(endedOf(counts))} / ${count(counts.total)}`),
    counts.dead > 0 ? [' ', h('span', { class: 'cell-note error-text' }, `${count(counts.dead)} dead`)] : null,
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
      { label: 'Status', cell: (run) => h('span', { dataset: { runStatus: run.id } }, runStatusCell(run.status, run.reason)) },
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
      for (const slot of element.querySelectorAll(`[data-run-progress="${CSS.escape(progress.run)}"]`)) {
        replace(slot, runProgressCell(progress.counts, /** @type {HTMLElement} */ (slot).dataset.label ?? 'Tasks ended'));
      }
      for (const slot of element.querySelectorAll(`[data-run-status="${CSS.escape(progress.run)}"]`)) replace(slot, runStatusCell(progress.status, null));
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

/**
 * The results summaries of some iterations of a job, by iteration: each its own when they are
 * few, else the job's (one request) cut down to them.
 * @param {string} jobId
 * @param {readonly string[]} iterations
 * @param {AbortSignal} signal
 * @returns {Promise<Map<string, Coverage>>}
 */
async function readCoverage(jobId, iterations, signal) {
  if (iterations.length <= summariesOneByOneMax) {
    /** @type {(Summary | null)[]} */
    const answers = await Promise.all(iterations.map((iteration) => call(`/api/job-iterations/${iteration}/results/summary/`, { signal }).catch(() => null)));
    return new Map(answers.filter((summary) => summary !== null).map((summary) => [summary.iteration, coverageOf(summary)]));
  }
  /** @type {import('./api-types.js').JobResultsSummary} */
  const answer = await call(`/api/jobs/${jobId}/results-summary/`, { signal });
  const wanted = new Set(iterations);
  return new Map(answer.iterations.filter((summary) => wanted.has(summary.iteration)).map((summary) => [summary.iteration, summary]));
}

/**
 * Runs `action` now, or, when it ran less than `ms` ago, once when `ms` have passed (however
 * often it is asked for meanwhile).
 * @param {() => unknown} action
 * @param {number} ms
 * @param {AbortSignal} signal
 */
function throttled(action, ms, signal) {
  let last = -Infinity;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  return () => {
    if (timer !== undefined || signal.aborted) return;
    const wait = last + ms - performance.now();
    timer = setTimeout(() => {
      timer = undefined;
      last = performance.now();
      if (!signal.aborted) action();
    }, Math.max(0, wait));
  };
}

/**
 * What a run's status means, in a sentence.
 * @param {Run} run
 */
function runSentence(run) {
  const at = dateTime(run.finished_at);
  switch (run.status) {
    case 'queued': return `Queued since ${dateTime(run.created_at)}: waiting for a worker to lease its first task.`;
    case 'running': return `Running since ${dateTime(run.started_at)}.`;
    case 'cancelled': return `Cancelled ${at}: its queued and leased tasks were cancelled; the results so far are kept.`;
    case 'failed': return `Failed ${at}: it could not go on (every task ended dead, or its dataset, agent or an iteration was deleted).`;
    default:
      if (run.reason === 'budget') return `Completed ${at}: its budget was reached; the results so far are kept and the tasks not run were skipped.`;
      if (run.reason === 'decided') return `Completed ${at}: every candidate of its race was decided; the tasks not run were skipped.`;
      return `Completed ${at}: every task ended.`;
  }
}

/**
 * A run: how far it is (a bar of its tasks by state), how fast it goes and how long it has left,
 * what it spent, its errors (tasks that ended dead, with their last error), its iterations with
 * their results, the workers of its project, and its settings. Live: run.progress redraws the
 * numbers and the bar (and asks for the errors when more tasks died), run.finished the whole run,
 * results.written an iteration's results; the workers, who have no events, are asked for again
 * after progress and every few seconds while the run is live.
 * @param {import('./router.js').PageContext} context
 */
export async function runPage({ params, signal }) {
  const id = params.id ?? '';
  /** @type {Run} */
  let run = await call(`/api/runs/${id}/`, { signal });
  const [progress, firstCoverage] = await Promise.all([loadProgress(run.job, signal), readCoverage(run.job, run.iterations, signal)]);
  let { job } = progress;
  let coverage = firstCoverage;
  const names = new Map(progress.points.map((point) => [point.id, point.iteration_name]));
  /** @param {string} iteration */
  const nameOf = (iteration) => names.get(iteration) ?? iteration;
  /** @type {import('./api-types.js').Project} */
  const project = await call(`/api/projects/${job.project}/`, { signal });
  const version = [...coverage.values()].find((summary) => summary.dataset)?.dataset?.version ?? null;
  const datapoints = run.counts.total / Math.max(1, run.iterations.length * run.attempts);
  /** @type {{ rate: number | null, eta: number | null } | null} what the last run.progress measured; null before one */
  let measured = null;
  /** When the last run.progress came (or the page opened): the rate is that old. */
  let heardAt = performance.now();

  const head = h('div', {});
  const lead = h('p', { class: 'lead run-sentence' });
  const stats = h('div', { class: 'stats' });
  const tasks = h('div', { class: 'run-tasks' });
  const iterationsSlot = h('div', {});
  const factsSlot = h('div', {});

  const errors = pagedTable({
    key: 'errors',
    pageSize: errorsPageSize,
    signal,
    empty: 'No task has failed.',
    /** @returns {Promise<import('./table.js').Page<Task>>} */
    load: (page) => call(withQuery(`/api/runs/${id}/tasks/`, { state: 'dead', page, page_size: errorsPageSize }), { signal }),
    rowClass: () => 'error-row',
    columns: [
      { label: 'Iteration', cell: (task) => h('a', { href: withQuery(`/console/job-iterations/${task.iteration}/results`, { filter: 'errors' }), title: `Errors of ${nameOf(task.iteration)}` }, clipped(nameOf(task.iteration), 'narrow')) },
      { label: 'Datapoint', numeric: true, cell: (task) => h('a', { href: withQuery(`/console/datasets/${run.dataset}`, { datapoint: task.datapoint }), title: `Datapoint ${task.datapoint}`, 'aria-label': `Datapoint #${task.datapoint_order}` }, `#${task.datapoint_order}`) },
      { label: 'Attempt', numeric: true, cell: (task) => String(task.attempt) },
      { label: 'Tries', numeric: true, cell: (task) => count(task.tries) },
      { label: 'Last error', cell: (task) => clipped(task.last_error || '(no message)', 'error-text wide') },
    ],
  });

  const workers = pagedTable({
    key: 'workers',
    pageSize: workersPageSize,
    signal,
    empty: () => `No worker is registered for ${project.name}: a worker registers with POST /api/workers/, then leases tasks.`,
    /** @returns {Promise<import('./table.js').Page<Worker>>} */
    load: (page) => call(withQuery('/api/workers/', { project: job.project, page, page_size: workersPageSize }), { signal }),
    columns: [
      { label: 'Worker', cell: (worker) => h('div', { class: 'worker-cell' }, clipped(worker.name, 'strong worker-name'), worker.host ? clipped(worker.host, 'mono muted worker-host') : null) },
      { label: 'State', cell: (worker) => workerState(worker, run.lease_seconds) },
      { label: 'Holding', numeric: true, cell: (worker) => count(worker.leased) },
      { label: 'Last seen', cell: (worker) => (worker.last_seen_at ? h('span', { title: dateTime(worker.last_seen_at) }, ago(worker.last_seen_at)) : h('span', { class: 'muted', title: 'Not heard from since the service started' }, '—')) },
    ],
  });

  function show() {
    const title = `${iterationList(run.iterations.map(nameOf))}${version === null ? '' : ` on dataset v${version}`}`;
    replace(head, pageHead({
      trail: [['/', 'Projects'], [`/console/projects/${job.project}`, project.name], [`/console/jobs/${job.id}`, jobTitle(job)]],
      title,
      kind: 'Run',
      id: run.id,
      actions: [live.element, runBadge(run.status)],
    }));
    lead.dataset.status = run.status;
    lead.dataset.reason = run.reason ?? '';
    replace(lead, runSentence(run));
    showNumbers();
    showFacts();
  }

  /** The numbers and the bar: what run.progress changes. */
  function showNumbers() {
    const { counts } = run;
    const ended = endedOf(counts);
    const share = counts.total > 0 ? ended / counts.total : 0;
    replace(stats,
      stat('Progress', percentOf(share), `${count(ended)} of ${count(counts.total)} tasks ended`, 'primary'),
      ...pace(),
      stat('Spent', score(run.spent.cost), [h('span', { class: 'note-line' }, `cost of ${count(run.spent.tasks)} ${run.spent.tasks === 1 ? 'task' : 'tasks'} run`), budgetNote()]));
    replace(tasks,
      taskBar(counts, 'Tasks ended'),
      h('ul', { class: 'task-counts', 'aria-label': 'Tasks by state' }, taskStates.map((state) =>
        h('li', { dataset: { state } }, h('span', { class: `task-swatch state-${state}`, 'aria-hidden': 'true' }), h('span', { class: 'task-count-label' }, state), h('strong', { class: 'task-count' }, count(counts[state]))))),
      h('p', { class: 'hint' }, `${count(counts.total)} tasks: ${count(run.iterations.length)} ${run.iterations.length === 1 ? 'iteration' : 'iterations'} × ${count(datapoints)} ${datapoints === 1 ? 'datapoint' : 'datapoints'} × ${count(run.attempts)} ${run.attempts === 1 ? 'attempt' : 'attempts'}.`));
  }

  /** The rate and the time left (or, once ended, how long it took). */
  function pace() {
    const { counts } = run;
    const ended = endedOf(counts);
    const startedAt = run.started_at ? Date.parse(run.started_at) : null;
    if (!liveStatuses.includes(run.status)) {
      const took = startedAt !== null && run.finished_at ? (Date.parse(run.finished_at) - startedAt) / 1000 : null;
      return [
        stat('Rate', taskRate(took && took > 0 ? ended / took : null), took && took > 0 ? 'average over the run' : 'no task was leased'),
        stat('Took', timeLeft(took), `ended ${dateTime(run.finished_at)}`),
      ];
    }
    if (startedAt === null) return [stat('Rate', '—', 'no task leased yet'), stat('Time left', '—', 'waiting for a worker')];
    // Progress is announced whenever a task moves: nothing heard for a rate window, nothing ended in it.
    if (performance.now() - heardAt > stalledMs) {
      return [stat('Rate', taskRate(0), `no task ended in the last ${stalledMs / 1000} s`), stat('Time left', '—', 'unknown while no task ends')];
    }
    if (measured) {
      return [
        stat('Rate', taskRate(measured.rate), measured.rate === null ? 'measured as tasks end' : `tasks ended, last ${stalledMs / 1000} s`),
        stat('Time left', measured.eta === null ? '—' : `≈ ${timeLeft(measured.eta)}`, measured.eta === null ? 'known once tasks end' : 'at this rate'),
      ];
    }
    // Opened mid-run: the average since it started, until the first progress event measures the
    // rate (the time left is not guessed from it: the run may have slowed or stopped since).
    const elapsed = (Date.now() - startedAt) / 1000;
    const average = elapsed > 0 && ended > 0 ? ended / elapsed : null;
    return [
      stat('Rate', taskRate(average), average === null ? 'measured as tasks end' : 'average since it started'),
      stat('Time left', '—', 'measured as tasks end'),
    ];
  }

  function budgetNote() {
    const { max_cost: maxCost, max_tasks: maxTasks } = run.budget;
    if (maxCost === null && maxTasks === null) return null;
    return h('span', { class: 'note-line' }, `budget ${[maxCost === null ? '' : `${score(maxCost)} cost`, maxTasks === null ? '' : `${count(maxTasks)} tasks`].filter(Boolean).join(', ')}`);
  }

  function showFacts() {
    const { budget } = run;
    replace(factsSlot, section('Run', facts([
      ['Job', link(`/console/jobs/${job.id}`, clipped(jobTitle(job)))],
      ['Dataset', link(`/console/datasets/${run.dataset}`, version === null ? 'dataset version' : `v${version}`)],
      ['Status', h('span', {}, runBadge(run.status), run.reason ? [' ', h('span', { class: 'muted' }, reasonWords[run.reason] ?? run.reason.replaceAll('_', ' '))] : null)],
      ['Order', run.order === 'shuffled' ? `shuffled (seed ${run.seed ?? 0})` : 'dataset order'],
      ['Tries', `at most ${count(run.max_tries)} a task`],
      ['Lease', `${count(run.lease_seconds)} s, kept by heartbeats`],
      ['In flight', `${count(run.in_flight_allowed)} allowed now${run.max_in_flight === null ? '' : `, at most ${count(run.max_in_flight)}`}`],
      ['Budget', budget.max_cost === null && budget.max_tasks === null ? 'none' : [budget.max_cost === null ? '' : `cost ${score(budget.max_cost)}`, budget.max_tasks === null ? '' : `${count(budget.max_tasks)} tasks`].filter(Boolean).join(', ')],
      ['Created', dateTime(run.created_at)],
      ['Started', dateTime(run.started_at)],
      ['Finished', dateTime(run.finished_at)],
    ])));
  }

  function showIterations() {
    replace(iterationsSlot, table([
      { label: 'Iteration', cell: (iteration) => h('a', { href: `/console/job-iterations/${iteration}/results`, title: `Results of ${nameOf(iteration)}` }, clipped(nameOf(iteration), 'strong narrow')) },
      { label: 'Scored', cell: (iteration) => scoredCell(coverage.get(iteration)) },
      { label: 'Mean (95% CI)', numeric: true, cell: (iteration) => meanCell(coverage.get(iteration)) },
    ], run.iterations));
  }

  const redraw = coalesce(() => {
    showNumbers();
    if (!liveStatuses.includes(run.status)) show();
  });

  /** The run asked for again: what progress events do not say (what it spent, when it started). */
  let asked = 0;
  const refreshRun = throttled(async () => {
    const mine = ++asked;
    try {
      /** @type {Run} */
      const answer = await call(`/api/runs/${id}/`, { signal });
      if (mine !== asked) return;
      const started = run.started_at;
      run = answer;
      if (started !== run.started_at || !liveStatuses.includes(run.status)) show();
      else {
        showNumbers();
        showFacts();
      }
    } catch {
      // Aborted (the page was left), or the run is gone: its job's event says so.
    }
  }, runRefreshMs, signal);
  const refreshWorkers = throttled(() => workers.reload(), workersAfterProgressMs, signal);

  /** @type {Set<string>} iterations whose results were written since their summaries were read */
  let staleCoverage = new Set();
  const refreshCoverage = coalesce(async () => {
    const wanted = [...staleCoverage];
    staleCoverage = new Set();
    try {
      const answers = await readCoverage(run.job, wanted, signal);
      coverage = new Map([...coverage, ...answers]);
      showIterations();
    } catch {
      // Results add to the page: without them the table keeps what it showed.
    }
  });

  /** @param {import('./event-stream.js').StreamEvent} event */
  function onEvent(event) {
    if (event.type === 'reset') {
      measured = null;
      staleCoverage = new Set(run.iterations);
      refreshCoverage();
      refreshRun();
      void errors.reload();
      void workers.reload();
      return;
    }
    const data = JSON.parse(event.data);
    if (event.type === 'run.progress' && data.run === id) {
      /** @type {RunProgress} */
      const progressed = data;
      const died = progressed.counts.dead !== run.counts.dead;
      const moved = progressed.status !== run.status;
      run = { ...run, status: progressed.status, counts: progressed.counts };
      measured = { rate: progressed.rate, eta: progressed.eta_seconds };
      heardAt = performance.now();
      redraw();
      if (died) void errors.reload();
      if (moved) show();
      refreshRun();
      refreshWorkers();
    } else if (event.type === 'run.finished' && data.id === id) {
      run = data;
      show();
      void errors.reload();
      void workers.reload();
    } else if (event.type === 'results.written' && run.iterations.includes(data.iteration)) {
      staleCoverage.add(data.iteration);
      refreshCoverage();
    } else if (event.type === 'job.updated' && data.id === job.id) {
      job = { ...job, ...data };
      show();
    } else if (event.type === 'job.deleted' && data.id === job.id) {
      live.ended('Deleted');
    }
  }
  const live = followLive(withQuery('/api/events/', { job: run.job, types: runLiveTypes.join(',') }), { signal, onEvent });

  // Workers say nothing on the event stream: while the run is live, when they were last seen is
  // asked for again now and then; and the rate, measured when tasks move, grows old when none do.
  const poll = setInterval(() => {
    if (liveStatuses.includes(run.status)) void workers.reload();
  }, workersRefreshMs);
  const age = setInterval(() => {
    if (liveStatuses.includes(run.status)) showNumbers();
  }, 2_000);
  signal.addEventListener('abort', () => {
    clearInterval(poll);
    clearInterval(age);
  }, { once: true });

  show();
  showIterations();
  return h('div', { class: 'run-page' },
    head,
    lead,
    stats,
    section('Tasks', tasks),
    h('section', { class: 'block', dataset: { errors: '' } },
      h('h2', {}, 'Errors'),
      h('p', { class: 'hint' }, 'Tasks that ended dead, their tries used up: each one\'s last error is its result row.'),
      errors.element),
    h('div', { class: 'columns' },
      h('section', { class: 'block', dataset: { iterations: '' } }, h('h2', {}, 'Iterations'), iterationsSlot),
      h('section', { class: 'block', dataset: { workers: '' } },
        h('h2', {}, 'Workers'),
        h('p', { class: 'hint' }, `Registered for ${project.name}. A worker silent for longer than the run's lease (${count(run.lease_seconds)} s) loses its leases.`),
        workers.element)),
    factsSlot);
}

/**
 * What a worker is doing, as far as the run can tell: holding tasks, idle (heard from within a
 * lease), silent (longer: its leases are lost), or not seen since the service started.
 * @param {Worker} worker
 * @param {number} leaseSeconds
 */
function workerState(worker, leaseSeconds) {
  if (worker.leased > 0) return badge('working', 'active');
  if (!worker.last_seen_at) return badge('not seen', 'neutral');
  return Date.now() - Date.parse(worker.last_seen_at) <= leaseSeconds * 1000 ? badge('idle', 'pending') : badge('silent', 'changed');
}

/**
 * An iteration's datapoints scored of its version's, with its errors, for a table cell.
 * @param {Coverage | undefined} summary
 */
function scoredCell(summary) {
  if (!summary || summary.results === 0) return h('span', { class: 'muted' }, '—');
  return h('span', {},
    `${count(summary.scored)} / ${count(summary.datapoints)}`,
    summary.errors > 0 ? [' ', h('span', { class: 'cell-note error-text' }, `${count(summary.errors)} ${summary.errors === 1 ? 'error' : 'errors'}`)] : null);
}

/** A share as a percentage to one decimal, or a whole 100%. @param {number} share */
function percentOf(share) {
  return share >= 1 ? '100%' : `${(Math.floor(share * 1000) / 10).toFixed(1)}%`;
}
