// Two iterations compared (the iteration comparison endpoint, and its list of paired datapoints).
// It leads with the verdict on their results in words: which is better, by how much, with its
// interval and p-value, on how many paired datapoints (or, plainly, why the results cannot be
// compared). Then the flips between pass and fail, a scatter of every paired datapoint (the first
// iteration's score across, the second's up; a mark picked shows its datapoint and both traces),
// the datapoints that dropped and rose most, and each dimension's change with its interval. Below
// that, what the iterations report of themselves (avg_score, dimension_scores) and the code diff.
// A pair a race stopped early (one of them a candidate stopped against the other, its incumbent)
// says so first: the race's bound holds, the fixed-sample figures under it do not.
// The confidence of every interval is chosen on the page and kept in the query string.
import { ApiError, call, withQuery } from './api.js';
import { badge, clipped, facts, h, link, pageHead, replace, section, stat } from './dom.js';
import { confidenceLevel, count, dateTime, delta, deltaInterval, mean, meanDelta, pStatement, pValue, percent, score } from './format.js';
import { jobTitle, toneOf } from './project-page.js';
import { setQuery } from './router.js';
import { changeStyles, diagonalSwatch, drawnChanges, scatter, stackShareMin, swatch } from './scatter.js';
import { table } from './table.js';

/**
 * @typedef {import('./scatter.js').Pair} Pair
 * @typedef {import('./scatter.js').Drawn} Drawn
 * @typedef {import('./api-types.js').ComparedIteration} Side
 * @typedef {import('./api-types.js').Moved} Moved
 * @typedef {import('./api-types.js').Flips} Flips
 * @typedef {import('./api-types.js').Comparable} Comparable
 * @typedef {import('./api-types.js').IterationComparison} Comparison
 * @typedef {NonNullable<import('./api-types.js').StoppedEarly>} StoppedEarly
 */

/** The confidences offered (the API says which it takes, and its default: the answer's `confidence`). */
const confidences = [0.9, 0.95, 0.99];
/** The paired datapoints list's largest page. */
const pairsPageSize = 100;
/** Pages of the list asked for at once. */
const pairsPagesAtOnce = 4;
/** The scatter draws at most this many datapoints (the first, in datapoint order). */
export const scatterMax = 10_000;

/**
 * The confidence the URL asks for, if it is a number (null: the API's default).
 * @param {string | null} asked
 */
function confidenceOf(asked) {
  const value = Number(asked);
  return asked && Number.isFinite(value) ? value : null;
}

/**
 * The comparison at the confidence asked; one the API refuses (out of its range) is dropped from
 * the URL and the comparison read at the API's default.
 * @param {string} path
 * @param {number | null} confidence
 * @param {AbortSignal} signal
 * @returns {Promise<Comparison>}
 */
async function comparisonAt(path, confidence, signal) {
  if (confidence === null) return call(path, { signal });
  try {
    return await call(withQuery(path, { confidence }), { signal });
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 400) throw error;
    setQuery({ confidence: null });
    return call(path, { signal });
  }
}

/** @param {import('./router.js').PageContext} context */
export async function comparePage({ params, query, signal }) {
  const path = `/api/job-iterations/${params.id}/compare/${params.other_id}/`;
  const asked = confidenceOf(query.get('confidence'));
  // The paired datapoints are read while the comparison is computed (a cold one of 10,000
  // datapoints takes seconds: its bootstrap): the scatter needs only the list. Not comparable,
  // the reading stops.
  const pairsReading = new AbortController();
  signal.addEventListener('abort', () => pairsReading.abort(), { once: true });
  const pairs = loadPairs(`${path}datapoints/`, pairsReading.signal);
  pairs.catch(() => undefined); // awaited below; until then a failure is not unhandled
  /** @type {Comparison} */
  let comparison;
  try {
    comparison = await comparisonAt(path, asked, signal);
  } catch (error) {
    pairsReading.abort();
    throw error;
  }
  const { from, to } = comparison;
  /** @type {import('./api-types.js').Job} */
  const job = await call(`/api/jobs/${from.job}/`, { signal });
  /** @type {import('./api-types.js').Project} */
  const project = await call(`/api/projects/${job.project}/`, { signal });
  const names = { from: from.iteration_name, to: to.iteration_name };
  const results = comparison.results;

  const reported = reportedSections(comparison);
  const head = (/** @type {import('./dom.js').Child[]} */ actions) => pageHead({
    trail: [['/', 'Projects'], [`/console/projects/${job.project}`, project.name], [`/console/jobs/${from.job}`, jobTitle(job)]],
    title: `${from.iteration_name} → ${to.iteration_name}`,
    kind: 'Iteration comparison',
    actions,
  });

  if (!results.comparable) {
    pairsReading.abort();
    return h('div', {}, head([]), notComparable(results.reason), reported);
  }

  let confidence = results.confidence;
  /** The API's default confidence, once an answer asked without one has said it (then picking it leaves the URL plain). */
  const confidenceDefault = asked === null || asked !== confidence ? confidence : null;
  const verdictSlot = h('div', { class: 'verdict-slot' }, verdictBlock(results, names));
  const dimensionsSlot = h('div', { class: 'dimensions-slot' }, dimensionsSection(results));
  const picker = h('select', { name: 'confidence', onchange: () => void changeConfidence(Number(picker.value)) },
    [...new Set([...confidences, confidence])].sort((a, b) => a - b).map((value) => h('option', { value: String(value), selected: value === confidence }, confidenceLevel(value))));

  /** Asks for the comparison at another confidence, and shows its verdict and intervals. @param {number} value */
  async function changeConfidence(value) {
    confidence = value;
    setQuery({ confidence: value === confidenceDefault ? null : value });
    verdictSlot.setAttribute('aria-busy', 'true');
    dimensionsSlot.setAttribute('aria-busy', 'true');
    try {
      /** @type {Comparison} */
      const next = await call(withQuery(path, { confidence: value }), { signal });
      if (value !== confidence || !next.results.comparable) return;
      replace(verdictSlot, verdictBlock(next.results, names));
      replace(dimensionsSlot, dimensionsSection(next.results));
    } catch (error) {
      if (!signal.aborted) replace(verdictSlot, h('p', { class: 'error', role: 'alert' }, /** @type {Error} */ (error).message));
    } finally {
      if (value === confidence) {
        verdictSlot.removeAttribute('aria-busy');
        dimensionsSlot.removeAttribute('aria-busy');
      }
    }
  }

  return h('div', {},
    head([h('label', { class: 'confidence-pick' }, 'Confidence', picker)]),
    results.stopped_early ? stoppedEarlyNotice(results.stopped_early, from, names) : null,
    verdictSlot,
    flipsRow(results.passed),
    datapointsSection(pairs, results, names, signal),
    h('div', { class: 'columns' },
      section('Regressions', h('p', { class: 'hint' }, 'The paired datapoints that dropped most, largest drop first (up to 20).'),
        movedTable(results.regressions, results.dataset.id, names, 'No paired datapoint dropped.')),
      section('Improvements', h('p', { class: 'hint' }, 'The paired datapoints that rose most, largest rise first (up to 20).'),
        movedTable(results.improvements, results.dataset.id, names, 'No paired datapoint rose.'))),
    dimensionsSlot,
    reported);
}

/**
 * The verdict in words: a sentence that says what the data says and no more, the means and other
 * tests under it, and the datapoints that could not be paired.
 * @param {Comparable} results
 * @param {{ from: string, to: string }} names
 */
function verdictBlock(results, names) {
  const { score: change, n_paired: paired, confidence } = results;
  const level = `${confidenceLevel(confidence)} CI`;
  const ci = change.ci95;
  const bounds = ci ? `${meanDelta(ci.low)} to ${meanDelta(ci.high)}` : null;
  const datapoints = `${count(paired)} paired ${paired === 1 ? 'datapoint' : 'datapoints'}`;
  /** @type {import('./dom.js').Children} */
  let sentence;
  switch (results.verdict) {
    case 'improved':
    case 'regressed':
      sentence = [h('strong', {}, names.to), ` is ${results.verdict === 'improved' ? 'better' : 'worse'} than `, h('strong', {}, names.from), ' by ',
        h('strong', { class: toneOf(change.delta), dataset: { delta: '' } }, meanDelta(change.delta)),
        ` (${level} ${bounds}, ${pStatement(change.p_value)}) on ${datapoints}.`];
      break;
    case 'no_detectable_difference':
      sentence = ['No detectable difference between ', h('strong', {}, names.from), ' and ', h('strong', {}, names.to), ': Δ ',
        h('strong', { dataset: { delta: '' } }, meanDelta(change.delta)), ` (${level} ${bounds}) on ${datapoints}.`];
      break;
    default:
      sentence = [`Too few paired datapoints for a verdict: ${count(paired)} paired, at least ${count(results.paired_min)} are needed.`];
  }
  const explain = {
    improved: `The ${confidenceLevel(confidence)} interval of the mean paired change lies wholly above 0.`,
    regressed: `The ${confidenceLevel(confidence)} interval of the mean paired change lies wholly below 0.`,
    no_detectable_difference: 'Its interval holds 0: this run cannot tell them apart (not that they are the same). More datapoints, or more attempts, narrow the interval.',
    insufficient_data: paired === 0 || change.delta === null
      ? 'No datapoint was scored by both iterations.'
      : `On ${paired === 1 ? 'this one' : `these ${count(paired)}`} so far: Δ ${meanDelta(change.delta)}${bounds ? ` (${level} ${bounds})` : ''}.`,
  }[results.verdict];

  /** @type {import('./dom.js').Children} */
  const notes = [
    `Mean score on the paired datapoints ${mean(change.mean_from)} → ${mean(change.mean_to)}`,
    change.ci95_bootstrap ? ` · bootstrap ${level} ${deltaInterval(change.ci95_bootstrap)}` : null,
    change.wilcoxon_p_value !== null ? ` · Wilcoxon ${pStatement(change.wilcoxon_p_value)}` : null,
    change.correlation !== null ? ` · correlation r = ${mean(change.correlation)}` : null,
    ' · dataset ', link(`/console/datasets/${results.dataset.id}`, `v${results.dataset.version}`),
  ];
  /** @type {string[]} */
  const unpaired = [];
  if (results.missing_in_to > 0) unpaired.push(`${count(results.missing_in_to)} scored by ${names.from} only`);
  if (results.missing_in_from > 0) unpaired.push(`${count(results.missing_in_from)} scored by ${names.to} only`);

  return h('section', { class: `block verdict verdict-${results.verdict}`, 'aria-labelledby': 'verdict-title', dataset: { verdict: results.verdict } },
    h('h2', { id: 'verdict-title' }, 'Verdict on the results'),
    h('p', { class: 'verdict-sentence' }, sentence),
    h('p', { class: 'verdict-explain' }, explain),
    h('p', { class: 'verdict-notes' }, notes),
    unpaired.length > 0 ? h('p', { class: 'verdict-notes', dataset: { unpaired: '' } }, `Not paired: ${unpaired.join(', ')} (never imputed).`) : null);
}

/** How a race stopped a candidate, as the notice says it ("stopped as worse than the incumbent"). @type {Record<string, string>} */
const stoppedWords = { worse: 'as worse than', cannot_win: 'as unable to beat', better: 'as better than' };

/**
 * A race stopped one of the two against the other early: which, when (pairs of datapoints), the
 * race's bound on the mean difference and its level, linked to the run; and that the fixed-sample
 * intervals and p-values below (the verdict's among them) do not apply, in the API's words.
 * @param {StoppedEarly} stopped
 * @param {Side} from
 * @param {{ from: string, to: string }} names
 */
function stoppedEarlyNotice(stopped, from, names) {
  const [candidate, incumbent] = stopped.iteration === from.id ? [names.from, names.to] : [names.to, names.from];
  const method = stopped.method === 'exact_maximum' ? 'exact: it could not win even with the top score on every datapoint left' : 'confidence sequence';
  return h('section', { class: 'block stopped-early', 'aria-labelledby': 'stopped-early-title', dataset: { stoppedEarly: stopped.state } },
    h('h2', { id: 'stopped-early-title' }, 'Stopped early by a race'),
    h('p', { class: 'stopped-early-sentence' },
      h('strong', {}, candidate), ` was stopped ${stoppedWords[stopped.state] ?? `(${stopped.state}) against`} `, h('strong', {}, incumbent),
      ` at ${count(stopped.pairs)} of ${count(stopped.datapoints)} datapoints by `, link(`/console/runs/${stopped.run}`, 'the racing run'), '.'),
    h('p', { class: 'stopped-early-bound' },
      `The race\u2019s bound on the mean difference (${names.to} − ${names.from}) when it stopped: `,
      h('strong', { dataset: { bound: '' } }, deltaInterval(stopped)), `, at α = ${score(stopped.alpha)} (${method}), valid however often the race looked.`),
    h('p', { class: 'stopped-early-note' }, h('strong', {}, 'The fixed-sample p-values and intervals below do not apply. '), stopped.note));
}

/**
 * Results that cannot be compared, said plainly.
 * @param {string} reason
 */
function notComparable(reason) {
  return h('section', { class: 'block verdict verdict-not-comparable', 'aria-labelledby': 'verdict-title', dataset: { verdict: 'not_comparable' } },
    h('h2', { id: 'verdict-title' }, 'Verdict on the results'),
    h('p', { class: 'verdict-sentence' }, `Not comparable: ${reason}.`),
    h('p', { class: 'verdict-explain' }, 'Results are compared datapoint by datapoint only when both iterations have results of the same dataset version. What the iterations report of themselves is below.'));
}

/**
 * Pass rates and the flips between pass and fail, with McNemar's test; a note when no paired
 * datapoint has a verdict on both sides.
 * @param {Flips | null} flips
 */
function flipsRow(flips) {
  if (!flips) {
    return h('p', { class: 'block hint', dataset: { flips: 'none' } }, 'No paired datapoint has a pass or fail verdict on both sides: there are no flips to count.');
  }
  return h('div', { class: 'stats', dataset: { flips: '' } },
    stat('Pass rate', `${percent(flips.pass_rate_from)} → ${percent(flips.pass_rate_to)}`, `${count(flips.n)} judged on both sides`),
    stat('Pass → fail', count(flips.pass_to_fail), 'passed before, failed after', flips.pass_to_fail > 0 ? 'tone-removed' : ''),
    stat('Fail → pass', count(flips.fail_to_pass), 'failed before, passed after', flips.fail_to_pass > 0 ? 'tone-added' : ''),
    stat('McNemar', pStatement(flips.mcnemar_p_value), `exact test on the flips · mid-${pStatement(flips.mcnemar_mid_p_value)}`));
}

/**
 * Every paired datapoint as a scatter, shown once the list is read (the rest of the page does not
 * wait for it); a mark picked shows its datapoint and the traces of both runs.
 * @param {Promise<Pair[]>} reading the paired datapoints list, being read
 * @param {Comparable} results
 * @param {{ from: string, to: string }} names
 * @param {AbortSignal} signal
 */
function datapointsSection(reading, results, names, signal) {
  const body = h('div', { class: 'scatter-body' }, h('p', { class: 'muted' }, 'Reading the paired datapoints…'));
  const element = h('section', { class: 'block', 'aria-labelledby': 'scatter-title', 'aria-busy': 'true', dataset: { scatter: '' } },
    h('h2', { id: 'scatter-title' }, 'Every datapoint'),
    body);

  void (async () => {
    try {
      const pairs = await reading;
      if (signal.aborted) return;
      replace(body, scatterView(pairs, results, names));
    } catch (error) {
      if (!signal.aborted) replace(body, h('p', { class: 'error', role: 'alert' }, /** @type {Error} */ (error).message));
    } finally {
      element.removeAttribute('aria-busy');
    }
  })();
  return element;
}

/**
 * The paired datapoints list, every page (in datapoint order), until the scatter has all it draws.
 * @param {string} path
 * @param {AbortSignal} signal
 * @returns {Promise<Pair[]>}
 */
async function loadPairs(path, signal) {
  /** @param {number} page @returns {Promise<import('./table.js').Page<Pair>>} */
  const read = (page) => call(withQuery(path, { page, page_size: pairsPageSize, ordering: 'datapoint_order' }), { signal });
  const first = await read(1);
  const pairs = [...first.results];
  const pages = Math.ceil(first.count / pairsPageSize);
  const drawable = () => pairs.reduce((sum, pair) => sum + (pair.score_from !== null && pair.score_to !== null ? 1 : 0), 0);
  for (let page = 2; page <= pages && drawable() < scatterMax; page += pairsPagesAtOnce) {
    const batch = await Promise.all(Array.from({ length: Math.min(pairsPagesAtOnce, pages - page + 1) }, (_, i) => read(page + i)));
    for (const answer of batch) pairs.push(...answer.results);
  }
  return pairs;
}

/**
 * @param {Pair[]} pairs what was read of the list
 * @param {Comparable} results
 * @param {{ from: string, to: string }} names
 */
function scatterView(pairs, results, names) {
  const scored = /** @type {Drawn[]} */ (pairs.filter((pair) => pair.score_from !== null && pair.score_to !== null));
  const drawn = scored.slice(0, scatterMax);
  // Counted by the comparison, not from the list: a capped scatter has not read all of it.
  const onlyFrom = results.missing_in_to;
  const onlyTo = results.missing_in_from;
  const detail = h('div', { class: 'scatter-detail', 'aria-live': 'polite', dataset: { picked: '' } },
    h('p', { class: 'hint' }, 'Pick a mark (click it, or tab to the chart and use the arrow keys) to see its datapoint and the traces of both runs.'));

  /** @param {Drawn} point */
  const describe = (point) => `Datapoint #${point.datapoint_order}: ${score(point.score_from)} → ${score(point.score_to)}, ${changeStyles[/** @type {import('./scatter.js').DrawnChange} */ (point.change)]?.label ?? point.change}`;
  const chart = scatter({
    points: drawn,
    fromName: names.from,
    toName: names.to,
    describe,
    onPick: (point) => replace(detail, pickedDetail(point, results.dataset.id, names)),
  });

  /** @type {Record<string, number>} */
  const counts = {};
  for (const point of drawn) counts[point.change] = (counts[point.change] ?? 0) + 1;
  const legend = h('ul', { class: 'scatter-legend', 'aria-label': 'What the marks mean' },
    drawnChanges.map((change) => h('li', { dataset: { change } }, swatch(change), ` ${changeStyles[change].label} `, h('span', { class: 'muted' }, count(counts[change] ?? 0)))),
    h('li', {}, diagonalSwatch(), ' y = x: no change'));

  /** @type {string[]} */
  const notes = [];
  if (drawn.length < results.n_paired) {
    notes.push(`Showing the first ${count(drawn.length)} of ${count(results.n_paired)} paired datapoints, in datapoint order.`);
  }
  if (onlyFrom > 0 || onlyTo > 0) {
    notes.push(`Not drawn (scored on one side only): ${[onlyFrom > 0 ? `${count(onlyFrom)} by ${names.from}` : '', onlyTo > 0 ? `${count(onlyTo)} by ${names.to}` : ''].filter(Boolean).join(', ')}.`);
  }
  return h('div', { class: 'scatter-wrap' },
    h('div', { class: 'scatter-figure' }, chart.element),
    h('div', { class: 'scatter-side' },
      h('p', { class: 'hint' }, `Each mark is a datapoint both iterations scored: ${names.from}'s score across, ${names.to}'s up. Above the diagonal, ${names.to} scored it higher.${chart.stacked > 0 ? ` ×N beside a mark: N datapoints with the same two scores (on spots holding at least ${stackShareMin * 100}% of them).` : ''}`),
      legend,
      notes.map((note) => h('p', { class: 'hint', dataset: { scatterNote: '' } }, note)),
      detail));
}

/**
 * The picked datapoint: both scores and verdicts, what changed, its link and both traces.
 * @param {Drawn} point
 * @param {string} datasetId
 * @param {{ from: string, to: string }} names
 */
function pickedDetail(point, datasetId, names) {
  const verdict = (/** @type {boolean | null} */ passed) => (passed === null ? '' : passed ? ' · passed' : ' · failed');
  const style = changeStyles[/** @type {import('./scatter.js').DrawnChange} */ (point.change)];
  return h('div', { dataset: { datapoint: point.datapoint } },
    h('h3', {}, link(withQuery(`/console/datasets/${datasetId}`, { datapoint: point.datapoint }), `Datapoint #${point.datapoint_order}`)),
    facts([
      [names.from, `${score(point.score_from)}${verdict(point.passed_from)}`],
      [names.to, `${score(point.score_to)}${verdict(point.passed_to)}`],
      ['Change', [h('span', { class: toneOf(point.delta) }, delta(point.delta)), ' ', badge(style?.label ?? point.change, changeTone(point.change))]],
      ['Traces', traceLinks(point, names, true)],
    ]));
}

/** @param {string} change */
function changeTone(change) {
  return change === 'improved' || change === 'fail_to_pass' ? 'added' : change === 'regressed' || change === 'pass_to_fail' ? 'removed' : 'neutral';
}

/**
 * Links to the traces of a datapoint's runs on both sides ("—" for a side without one): "from" and
 * "to" in a table's cell, the iterations' names where there is room (`named`).
 * @param {Pick<Moved, 'datapoint_order' | 'trace_id_from' | 'trace_id_to'>} row
 * @param {{ from: string, to: string }} names
 * @param {boolean} [named]
 */
function traceLinks(row, names, named = false) {
  if (!row.trace_id_from && !row.trace_id_to) return h('span', { class: 'muted', title: `No trace of datapoint ${row.datapoint_order} on either side` }, '—');
  const one = (/** @type {string | null} */ id, /** @type {string} */ side, /** @type {string} */ name) => {
    const label = named ? `${name}'s run` : side;
    return id
      ? h('a', { href: `/console/traces/${id}`, title: `Trace ${id}`, 'aria-label': `${label}: trace of datapoint ${row.datapoint_order} with ${name}`, dataset: { side } }, label)
      : h('span', { class: 'muted', title: `No trace of datapoint ${row.datapoint_order} with ${name}` }, `${label}: —`);
  };
  return h('span', { class: named ? 'trace-links named' : 'trace-links' }, one(row.trace_id_from, 'from', names.from), ' · ', one(row.trace_id_to, 'to', names.to));
}

/**
 * The datapoints that moved most one way.
 * @param {Moved[]} moved
 * @param {string} datasetId
 * @param {{ from: string, to: string }} names
 * @param {string} empty
 */
function movedTable(moved, datasetId, names, empty) {
  if (moved.length === 0) return h('p', { class: 'empty' }, empty);
  return table([
    { label: 'Datapoint', numeric: true, cell: (row) => h('a', { href: withQuery(`/console/datasets/${datasetId}`, { datapoint: row.datapoint }), title: `Datapoint ${row.datapoint}`, 'aria-label': `Datapoint #${row.datapoint_order}` }, `#${row.datapoint_order}`) },
    { label: 'From', numeric: true, cell: (row) => score(row.score_from) },
    { label: 'To', numeric: true, cell: (row) => score(row.score_to) },
    { label: 'Change', numeric: true, cell: (row) => h('span', { class: toneOf(row.delta) }, delta(row.delta)) },
    { label: 'Traces', cell: (row) => traceLinks(row, names) },
  ], moved);
}

/**
 * Each dimension's paired change, its interval at the comparison's confidence, its p-value and
 * Holm's adjustment across the dimensions.
 * @param {Comparable} results
 */
function dimensionsSection(results) {
  const level = `${confidenceLevel(results.confidence)} CI`;
  return section('Dimensions, paired per datapoint', results.dimensions.length === 0
    ? h('p', { class: 'empty' }, 'The two iterations\u2019 results have no dimension in common.')
    : [
      h('p', { class: 'hint' }, 'Each dimension compared as the score is, over the datapoints that have it on both sides. Holm\u2019s p adjusts for looking at several dimensions at once.'),
      h('div', { dataset: { dimensions: '' } }, table([
        { label: 'Dimension', cell: (dimension) => clipped(dimension.name, 'strong') },
        { label: 'n', numeric: true, cell: (dimension) => count(dimension.n) },
        { label: 'Δ', numeric: true, cell: (dimension) => h('span', { class: toneOf(dimension.ci95 && (dimension.ci95.low > 0 || dimension.ci95.high < 0) ? dimension.delta : 0) }, meanDelta(dimension.delta)) },
        { label: level, numeric: true, cell: (dimension) => (dimension.ci95 ? deltaInterval(dimension.ci95) : '—') },
        { label: 'p', numeric: true, cell: (dimension) => pValue(dimension.p_value) },
        { label: 'Holm p', numeric: true, cell: (dimension) => pValue(dimension.p_value_holm) },
      ], results.dimensions)),
    ]);
}

/**
 * What the iterations report of themselves: avg_score and dimension_scores side by side, and the
 * code diff.
 * @param {Comparison} comparison
 */
function reportedSections(comparison) {
  const { from, to } = comparison;
  const largest = Math.max(0, ...comparison.dimensions.map((dimension) => Math.abs(dimension.delta ?? 0)));
  return [
    h('section', { class: 'block', 'aria-labelledby': 'reported-title', dataset: { reported: '' } },
      h('h2', { id: 'reported-title' }, 'As the iterations report them'),
      h('div', { class: 'stats' },
        stat('avg_score change', h('span', { class: toneOf(comparison.avg_score.delta) }, delta(comparison.avg_score.delta)), `${score(comparison.avg_score.from)} → ${score(comparison.avg_score.to)}`, 'primary'),
        sideStat('From', from),
        sideStat('To', to)),
      comparison.dimensions.length === 0
        ? h('p', { class: 'empty' }, 'Neither iteration has dimension scores.')
        : table([
          { label: 'Dimension', cell: (dimension) => clipped(dimension.name, 'strong') },
          { label: from.iteration_name, numeric: true, cell: (dimension) => score(dimension.from) },
          { label: to.iteration_name, numeric: true, cell: (dimension) => score(dimension.to) },
          { label: 'Change', numeric: true, cell: (dimension) => h('span', { class: toneOf(dimension.delta) }, delta(dimension.delta)) },
          { label: 'Change as a bar', hideLabel: true, cell: (dimension) => deltaBar(dimension.delta, largest) },
        ], comparison.dimensions)),
    section('Code', codeDiff(comparison.code_diff)),
  ];
}

/**
 * @param {string} label
 * @param {Side} side
 */
function sideStat(label, side) {
  return stat(label, clipped(side.iteration_name),
    [`${score(side.avg_score)} · ${side.status ?? 'undecided'} · `, h('span', { class: 'muted' }, dateTime(side.created_at))]);
}

/**
 * A bar whose length is the change, left for worse and right for better.
 * @param {number | null} change
 * @param {number} largest
 */
function deltaBar(change, largest) {
  const bar = h('span', { class: `delta-bar ${toneOf(change)}` });
  const share = largest > 0 && typeof change === 'number' ? Math.abs(change) / largest : 0;
  bar.style.width = `${(share * 50).toFixed(2)}%`;
  bar.style.marginLeft = typeof change === 'number' && change < 0 ? `${(50 - share * 50).toFixed(2)}%` : '50%';
  return h('span', { class: 'delta-track', 'aria-hidden': 'true' }, bar);
}

/**
 * The unified diff, one line per row, coloured by its first character.
 * @param {string | null} diff
 */
function codeDiff(diff) {
  if (diff === null) return h('p', { class: 'empty' }, 'The code diff is too long to show here.');
  if (diff === '') return h('p', { class: 'empty' }, 'The two iterations have the same code.');
  const lines = diff.replace(/\n$/, '').split('\n');
  return h('pre', { class: 'diff', tabindex: 0, 'aria-label': 'Code diff' }, lines.map((line) => h('span', { class: `diff-line ${lineKind(line)}` }, line, '\n')));
}

/** @param {string} line */
function lineKind(line) {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-added';
  if (line.startsWith('-')) return 'diff-removed';
  return 'diff-context';
}
