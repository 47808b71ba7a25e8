// A run: how far it is (a bar of its tasks by state), how fast it goes and how long it has left,
// what it spent, its errors (tasks that ended dead, with their last error), its iterations with
// their results, the workers of its project, and its settings; for a racing run, its race (each
// candidate's bounds on its mean difference from the incumbent as they narrowed, where and why each
// was stopped, and the tasks that saved). Followed live from its job's events: run.progress,
// run.finished, race.decided and results.written.
import { call, withQuery } from './api.js';
import { badge, clipped, coalesce, errorClip, facts, h, link, pageHead, replace, section, stat } from './dom.js';
import { ago, count, dateTime, meanDelta, score, taskRate, timeLeft } from './format.js';
import { endedOf, iterationList, liveStatuses, loadProgress, notRunOf, ranOf, runBadge, summariesOneByOneMax, taskBar, taskStates } from './job-page.js';
import { followLive } from './live.js';
import { jobTitle } from './project-page.js';
import { raceBounds, raceChart, raceColor, raceStateWords } from './race-chart.js';
import { coverageOf, meanCell } from './results-page.js';
import { pagedTable, table } from './table.js';

/**
 * @typedef {import('./api-types.js').Run} Run
 * @typedef {import('./api-types.js').Task} Task
 * @typedef {import('./api-types.js').Worker} Worker
 * @typedef {import('./api-types.js').Coverage} Coverage
 * @typedef {import('./api-types.js').ResultsSummary} Summary
 * @typedef {import('./api-types.js').RaceHistory} RaceHistory
 * @typedef {import('./api-types.js').RaceCandidate} RaceCandidate
 * @typedef {NonNullable<import('./api-types.js').Race>} Race
 * @typedef {import('./job-page.js').RunProgress} RunProgress
 */

/** What a run's page follows: its job's events, of which those about this run (and its iterations' results) count. */
const runLiveTypes = ['run.progress', 'run.finished', 'race.decided', 'results.written', 'job.updated', 'job.deleted'];
const errorsPageSize = 10;
const workersPageSize = 10;
/** Workers have no events: while a run is live its page asks for them again this often (and after progress, at most this often). */
const workersRefreshMs = 10_000;
const workersAfterProgressMs = 2_000;
/** A run's own answer (what it spent, when it started) is asked again after progress at most this often. */
const runRefreshMs = 250;
/** A race's history (its chart) is asked again after progress or a decision at most this often. */
const raceRefreshMs = 1_000;
/** The window run.progress measures its rate over (src/runs/run-progress.ts): with no event for that long, no task ended in it. */
const stalledMs = 10_000;

/** @type {Record<string, string>} why a run ended, in words (another reason reads as its name) */
const reasonWords = { all_done: 'every task ended', budget: 'its budget was reached', cancelled: 'cancelled', failed: 'it could not go on', decided: 'every candidate of its race was decided' };

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
    case 'queued':
      // A retried run is queued again with tasks already run: it waits for its retried ones.
      if (ranOf(run.counts) > 0) return 'Queued again (retried): waiting for a worker to lease its retried tasks.';
      return `Queued since ${dateTime(run.created_at)}: waiting for a worker to lease its first task.`;
    case 'running': return `Running since ${dateTime(run.started_at)}.`;
    case 'cancelled': return `Cancelled ${at}: its queued and leased tasks were cancelled; the results so far are kept.`;
    case 'failed':
      if (run.counts.dead === run.counts.total) return `Failed ${at}: every task ended dead (see the errors below).`;
      return `Failed ${at}: it could not go on: its dataset version, its agent or one of its iterations was deleted (or the iteration moved to another job).`;
    default:
      if (run.reason === 'budget') return `Completed ${at}: its budget was reached; the results so far are kept and the tasks not run were skipped.`;
      if (run.reason === 'decided') return `Completed ${at}: every candidate of its race was decided; the tasks not run were skipped.`;
      return `Completed ${at}: every task ended.`;
  }
}

/**
 * A run: how far it is (a bar of its tasks by state), how fast it goes and how long it has left,
 * what it spent, its errors (tasks that ended dead, with their last error), its iterations with
 * their results, the workers of its project, and its settings; a racing run's race after its
 * tasks. Live: run.progress redraws the numbers and the bar (and asks for the errors when more
 * tasks died), run.finished the whole run, race.decided a candidate's row (and, with progress, the
 * race's chart is asked for again, at most every second), results.written an iteration's results;
 * the workers, who have no events, are asked for again after progress and every few seconds while
 * the run is live.
 * @param {import('./router.js').PageContext} context
 */
export async function runPage({ params, signal }) {
  const id = params.id ?? '';
  /** @type {Run} */
  let run = await call(`/api/runs/${id}/`, { signal });
  const [progress, firstCoverage, firstHistory] = await Promise.all([
    loadProgress(run.job, signal),
    readCoverage(run.job, run.iterations, signal),
    // The chart adds to the race: without its history the race shows from the run's answer, the chart empty until read again.
    run.race ? readRaceHistory(id, signal).catch(() => (signal.aborted ? null : noRaceHistory(run))) : null,
  ]);
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
  const race = run.race && firstHistory ? raceSection(run, run.race, firstHistory, nameOf, signal) : null;

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
      { label: 'Last error', cell: (task) => errorClip(task.last_error) },
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
    if (run.race) race?.show(run.race, run.counts.total);
  }

  /** The numbers and the bar: what run.progress changes. */
  function showNumbers() {
    const { counts } = run;
    replace(stats,
      progressStat(),
      ...pace(),
      stat('Spent', score(run.spent.cost), [h('span', { class: 'note-line' }, `over ${count(run.spent.tasks)} ${run.spent.tasks === 1 ? 'completion' : 'completions'} (each try counts)`), budgetNote()]));
    replace(tasks,
      taskBar(counts, 'Tasks ended'),
      h('ul', { class: 'task-counts', 'aria-label': 'Tasks by state' }, taskStates.map((state) =>
        h('li', { dataset: { state } }, h('span', { class: `task-swatch state-${state}`, 'aria-hidden': 'true' }), h('span', { class: 'task-count-label' }, state), h('strong', { class: 'task-count' }, count(counts[state]))))),
      h('p', { class: 'hint' }, `${count(counts.total)} tasks: ${count(run.iterations.length)} ${run.iterations.length === 1 ? 'iteration' : 'iterations'} × ${count(datapoints)} ${datapoints === 1 ? 'datapoint' : 'datapoints'} × ${count(run.attempts)} ${run.attempts === 1 ? 'attempt' : 'attempts'}.`));
  }

  /**
   * How far a live run is (its tasks ended, skipped ones included: they are not waited for); once
   * ended, how much of it ran (a cancelled or budget-ended run ended every task but ran few).
   */
  function progressStat() {
    const { counts } = run;
    const share = (/** @type {number} */ part) => percentOf(counts.total > 0 ? part / counts.total : 0);
    if (liveStatuses.includes(run.status)) {
      const ended = endedOf(counts);
      return stat('Progress', share(ended), `${count(ended)} of ${count(counts.total)} tasks ended`, 'primary');
    }
    const ran = ranOf(counts);
    const notRun = notRunOf(counts);
    return stat('Ran', share(ran), [
      h('span', { class: 'note-line' }, `${count(ran)} of ${count(counts.total)} tasks ran${counts.dead > 0 ? `, ${count(counts.dead)} dead` : ''}`),
      notRun > 0 ? h('span', { class: 'note-line' }, `${count(notRun)} not run (${[counts.skipped > 0 ? 'skipped' : '', counts.cancelled > 0 ? 'cancelled' : ''].filter(Boolean).join(' or ')})`) : null,
    ], counts.done === 0 && counts.dead > 0 ? 'tone-error' : 'primary');
  }

  /** The rate (of tasks that ran: done or dead) and the time left (or, once ended, how long it took). */
  function pace() {
    const { counts } = run;
    const ended = ranOf(counts);
    const startedAt = run.started_at ? Date.parse(run.started_at) : null;
    if (!liveStatuses.includes(run.status)) {
      const took = startedAt !== null && run.finished_at ? (Date.parse(run.finished_at) - startedAt) / 1000 : null;
      return [
        // From the first lease to the end: a retried run's time between its first end and its retry counts too.
        stat('Rate', taskRate(took && took > 0 ? ended / took : null), took && took > 0 ? 'average from its first lease to its end' : 'no task was leased'),
        stat('Took', timeLeft(took), `${took !== null ? 'first lease to end; ' : ''}ended ${dateTime(run.finished_at)}`),
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
      ['Status', h('span', {}, runBadge(run.status), run.reason && run.reason !== run.status ? [' ', h('span', { class: 'muted' }, reasonWords[run.reason] ?? run.reason.replaceAll('_', ' '))] : null)],
      ['Order', run.order === 'shuffled' ? `shuffled (seed ${run.seed ?? 0})` : 'dataset order'],
      ['Tries', `at most ${count(run.max_tries)} a task`],
      ['Lease', `${count(run.lease_seconds)} s, kept by heartbeats`],
      ['In flight', liveStatuses.includes(run.status)
        ? `${count(run.in_flight_allowed)} allowed now${run.max_in_flight === null ? '' : `, at most ${count(run.max_in_flight)}`}`
        : `none (ended)${run.max_in_flight === null ? '' : `; at most ${count(run.max_in_flight)}`}`],
      ['Budget', budget.max_cost === null && budget.max_tasks === null ? 'none' : [budget.max_cost === null ? '' : `cost ${score(budget.max_cost)}`, budget.max_tasks === null ? '' : `${count(budget.max_tasks)} tasks`].filter(Boolean).join(', ')],
      ...(run.race ? [/** @type {[string, import('./dom.js').Child]} */ (['Race', raceSettings(run.race, nameOf)])] : []),
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
      // A race's stopped candidates: their means are partial.
      ...(run.race ? [{ label: 'Note', cell: (/** @type {string} */ iteration) => stoppedNote(iteration) }] : []),
    ], run.iterations));
  }

  /**
   * A candidate the race stopped: its mean is of the datapoints it ran before it looked bad, not a fair estimate of its full score.
   * @param {string} iteration
   */
  function stoppedNote(iteration) {
    const candidate = run.race?.candidates.find((one) => one.iteration === iteration);
    if (!candidate || candidate.stopped_at === null) return '';
    return h('span', { class: 'muted cell-sentence' }, `stopped by the race at ${count(candidate.stopped_at)} datapoints: a partial mean, not its full score`);
  }

  const redraw = coalesce(() => {
    showNumbers();
    if (!liveStatuses.includes(run.status)) show();
  });

  /**
   * The latest errors are loaded again once more tasks are dead than when they last were: told by
   * a progress event or by the run asked for again, whichever comes first.
   */
  let deadWhenErrorsLoaded = run.counts.dead;
  /** @param {number} dead */
  const errorsAfterDeaths = (dead) => {
    if (dead === deadWhenErrorsLoaded) return;
    deadWhenErrorsLoaded = dead;
    void errors.reload();
  };

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
      errorsAfterDeaths(run.counts.dead);
      if (started !== run.started_at || !liveStatuses.includes(run.status)) show();
      else {
        showNumbers();
        showFacts();
        if (run.race) race?.show(run.race, run.counts.total);
      }
    } catch {
      // Aborted (the page was left), or the run is gone: its job's event says so.
    }
  }, runRefreshMs, signal);
  const refreshWorkers = throttled(() => workers.reload(), workersAfterProgressMs, signal);

  /** The race's history asked for again (its chart): the newest answer asked for is drawn. */
  let raceAsked = 0;
  const refreshRace = throttled(async () => {
    if (!race) return;
    const mine = ++raceAsked;
    try {
      const history = await readRaceHistory(id, signal);
      if (mine === raceAsked && run.race) race.redraw(history, run.race);
    } catch {
      // Aborted (the page was left), or the run is gone: its job's event says so.
    }
  }, raceRefreshMs, signal);

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
      refreshRace();
      void errors.reload();
      void workers.reload();
      return;
    }
    const data = JSON.parse(event.data);
    if (event.type === 'run.progress' && data.run === id) {
      /** @type {RunProgress} */
      const progressed = data;
      const moved = progressed.status !== run.status;
      run = { ...run, status: progressed.status, counts: progressed.counts };
      measured = { rate: progressed.rate, eta: progressed.eta_seconds };
      heardAt = performance.now();
      redraw();
      errorsAfterDeaths(progressed.counts.dead);
      if (moved) show();
      refreshRun();
      refreshWorkers();
      refreshRace();
    } else if (event.type === 'race.decided' && data.run === id && run.race) {
      // The candidate as decided now (the run's own answer, asked for after progress, says the same).
      /** @type {RaceCandidate & { tasks_saved: number }} */
      const decided = data;
      const { iteration, state, pairs, low, high, stopped_at: stoppedAt, decided_at: decidedAt, stop } = decided;
      const candidates = run.race.candidates.map((candidate) => (candidate.iteration === iteration ? { iteration, state, pairs, low, high, stopped_at: stoppedAt, decided_at: decidedAt, stop } : candidate));
      const now = { ...run.race, candidates, tasks_saved: decided.tasks_saved };
      run = { ...run, race: now };
      race?.show(now, run.counts.total);
      refreshRace();
    } else if (event.type === 'run.finished' && data.id === id) {
      run = data;
      show();
      refreshRace();
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
    race?.element,
    h('section', { class: 'block', dataset: { errors: '' } },
      h('h2', {}, 'Errors'),
      h('p', { class: 'hint' }, 'Tasks that ended dead, their tries used up: each one\'s last error is its result row.'),
      errors.element),
    h('div', { class: 'columns' },
      h('section', { class: 'block', dataset: { iterations: '' } }, h('h2', {}, 'Iterations'),
        h('p', { class: 'hint' }, "Each iteration's results as they stand: a datapoint's latest result, whichever run wrote it (this run's, or an earlier one's)."),
        iterationsSlot),
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

// ---- Races ----

/**
 * A racing run's history: each candidate's bounds pair by pair.
 * @param {string} runId
 * @param {AbortSignal} signal
 * @returns {Promise<RaceHistory>}
 */
function readRaceHistory(runId, signal) {
  return call(`/api/runs/${runId}/race/`, { signal });
}

/**
 * A race's history before it could be read: each candidate with no point yet.
 * @param {Run} run
 * @returns {RaceHistory | null}
 */
function noRaceHistory(run) {
  if (!run.race) return null;
  const datapoints = run.counts.total / Math.max(1, run.iterations.length * run.attempts);
  return {
    run: run.id, datapoints, tasks_total: run.counts.total, tasks_saved: run.race.tasks_saved,
    candidates: run.race.candidates.map(({ iteration, state, stopped_at: stoppedAt }) => ({ iteration, state, stopped_at: stoppedAt, pairs: [], low: [], high: [] })),
  };
}

/** A state's badge tone: worse and cannot win red, better green, live as a running run, finished grey. @type {Record<string, string>} */
const raceTones = { live: 'running', worse: 'removed', cannot_win: 'removed', better: 'added', finished: 'neutral' };

/**
 * A race's settings in a line: its incumbent, alpha (and each candidate's share), min_pairs, the
 * score range, and whether better candidates are stopped too.
 * @param {Race} race
 * @param {(iteration: string) => string} nameOf
 */
function raceSettings(race, nameOf) {
  const candidates = race.candidates.length;
  return h('span', {},
    'against ', link(`/console/job-iterations/${race.incumbent}/results`, clipped(nameOf(race.incumbent))),
    `, α = ${score(race.alpha)}${candidates > 1 ? ` (${score(race.alpha / candidates)} a candidate)` : ''}, at least ${count(race.min_pairs)} pairs, scores in [${race.score_range.map(score).join(', ')}]`,
    race.stop_better ? ', better ones stopped too' : ', better ones run on');
}

/**
 * Why a candidate stands where it does, in words: the bound that stopped it (and at which level,
 * by which method), or why it is still racing, or that it ran to the end.
 * @param {RaceCandidate} candidate
 * @param {Race} race
 * @param {number} datapoints
 */
function raceWhy(candidate, race, datapoints) {
  const { stop } = candidate;
  if (stop) {
    if (stop.method === 'exact_maximum') {
      const left = stop.datapoints - stop.pairs;
      return `at most ${meanDelta(stop.bound)} on the incumbent even scoring ${score(race.score_range[1])} on the ${count(left)} ${left === 1 ? 'datapoint' : 'datapoints'} left (exact)`;
    }
    const bound = candidate.state === 'better' ? `lower bound ${meanDelta(stop.bound)} > 0` : `upper bound ${meanDelta(stop.bound)} < 0`;
    return `${bound} (confidence sequence, α = ${score(stop.alpha)})`;
  }
  if (candidate.state === 'finished') return `every datapoint paired: the exact mean difference`;
  if (candidate.pairs < race.min_pairs) return `fewer than ${count(race.min_pairs)} pairs: no stop yet`;
  return candidate.pairs >= datapoints ? 'every datapoint paired' : `racing: its bounds hold 0`;
}

/**
 * A racing run's race: a sentence of who races whom and what the bands mean, the tasks saved of
 * the full grid and the candidates by state, the chart of every candidate's bounds as they narrowed
 * (race-chart.js) and the table of candidates. `show(race, tasks)` redraws what the run says
 * (states, bounds, tasks saved); `redraw(history, race)` the chart too.
 * @param {Run} run
 * @param {Race} race
 * @param {RaceHistory} history
 * @param {(iteration: string) => string} nameOf
 * @param {AbortSignal} signal
 */
function raceSection(run, race, history, nameOf, signal) {
  const datapoints = history.datapoints;
  const candidateCount = race.candidates.length;
  const order = new Map(race.candidates.map((candidate, index) => [candidate.iteration, index]));
  const summary = h('div', { class: 'stats race-stats' });
  const tableSlot = h('div', { dataset: { raceCandidates: '' } });
  const chart = raceChart({
    drawn: { history, candidates: race.candidates, minPairs: race.min_pairs, scoreRange: race.score_range },
    nameOf,
    label: `Chart: each candidate's bounds on its mean difference from ${nameOf(race.incumbent)}, narrowing as datapoints are paired, with 0 marked and each stop; the table below gives the figures.`,
    signal,
  });

  /** @param {RaceCandidate} candidate */
  const swatchOf = (candidate) => {
    const swatch = h('span', { class: 'race-swatch', 'aria-hidden': 'true' });
    swatch.style.background = raceColor(order.get(candidate.iteration) ?? 0);
    return swatch;
  };

  /**
   * @param {Race} now
   * @param {number} tasksTotal the run's tasks: the full grid
   */
  function show(now, tasksTotal) {
    /** @type {Record<string, number>} */
    const states = {};
    for (const candidate of now.candidates) states[candidate.state] = (states[candidate.state] ?? 0) + 1;
    const live = now.candidates.filter((candidate) => candidate.state === 'live');
    const stopped = (states.worse ?? 0) + (states.cannot_win ?? 0) + (states.better ?? 0);
    const byState = ['worse', 'cannot_win', 'better', 'live', 'finished'].filter((state) => states[state]).map((state) => `${count(states[state])} ${raceStateWords[state]}`).join(' · ');
    replace(summary,
      stat('Tasks saved', `${count(now.tasks_saved)} of ${count(tasksTotal)}`, `${tasksTotal > 0 ? percentOf(now.tasks_saved / tasksTotal) : '0%'} of the full grid not run`, 'primary'),
      stat('Stopped', `${count(stopped)} of ${count(candidateCount)}`, byState || 'no candidate'),
      stat('Still racing', `${count(states.live ?? 0)} of ${count(candidateCount)}`, live.length > 0 ? `the least paired at ${count(Math.min(...live.map((candidate) => candidate.pairs)))} of ${count(datapoints)}` : 'every candidate decided'));
    replace(tableSlot, table([
      { label: 'Candidate', cell: (candidate) => h('span', { class: 'race-name' }, swatchOf(candidate), h('a', { href: `/console/job-iterations/${candidate.iteration}/results`, title: `Results of ${nameOf(candidate.iteration)}` }, clipped(nameOf(candidate.iteration), 'strong narrow'))) },
      { label: 'State', cell: (candidate) => badge(raceStateWords[candidate.state] ?? candidate.state, raceTones[candidate.state] ?? 'neutral') },
      { label: 'Paired', numeric: true, cell: (candidate) => `${count(candidate.pairs)} / ${count(datapoints)}` },
      { label: 'Bounds on the mean difference', numeric: true, cell: (candidate) => h('span', { class: candidate.high < 0 ? 'worse' : candidate.low > 0 ? 'better' : '' }, raceBounds(candidate.low, candidate.high)) },
      { label: 'Stopped at', numeric: true, cell: (candidate) => (candidate.stopped_at === null ? h('span', { class: 'muted' }, '—') : h('span', { title: `Decided ${dateTime(candidate.decided_at)}` }, `${count(candidate.stopped_at)} pairs`)) },
      { label: 'Why', cell: (candidate) => h('span', { class: candidate.stop ? 'race-why' : 'race-why muted' }, raceWhy(candidate, now, datapoints)) },
    ], now.candidates, (candidate) => `race-${candidate.state}`));
  }

  show(race, run.counts.total);
  const element = h('section', { class: 'block race', 'aria-labelledby': 'race-title', dataset: { race: '' } },
    h('h2', { id: 'race-title' }, 'Race'),
    h('p', { class: 'hint race-lead' },
      `${count(candidateCount)} ${candidateCount === 1 ? 'candidate' : 'candidates'} against `,
      link(`/console/job-iterations/${race.incumbent}/results`, nameOf(race.incumbent)),
      ` on ${count(datapoints)} datapoints, paired in a seeded order. Each band is a candidate's bounds on its mean difference from the incumbent (candidate − incumbent) over the whole dataset version, valid however often the race looks: wholly below 0, the candidate is stopped as worse${race.stop_better ? ', wholly above, as better' : ''}; one that could not win even with the top score on every datapoint left is stopped too.`),
    summary,
    h('figure', { class: 'race-figure' }, chart.element),
    tableSlot);

  return {
    element,
    show,
    /**
     * @param {RaceHistory} next
     * @param {Race} now
     */
    redraw(next, now) {
      chart.update({ history: next, candidates: now.candidates, minPairs: now.min_pairs, scoreRange: now.score_range });
    },
  };
}
