// The score curve of a job: every iteration's score in order (its avg_score, or what the page
// plots instead, named on the axis), coloured by its keep/discard decision, the best score so
// far as a step line, and the baseline. Drawn by uPlot on a canvas
// from plain arrays, so 10,000 points draw in a few milliseconds.
import uPlot from './uplot.js';
import { fitChartWidth } from './dom.js';

/** @typedef {import('./api-types.js').ProgressPoint} ProgressPoint */

const colors = { keep: '#15803d', discard: '#dc2626', unset: '#64748b', best: '#2563eb', baseline: '#94a3b8', grid: '#eef0f3', axis: '#475569' };
/** Discarded candidates are most of a long run: there drawn lighter, and always first, so kept ones show on top. */
const discardFill = 'rgba(220, 38, 38, 0.45)';

/** What each chart draws, for the browser test and for anyone reading the page's state. */
const drawn = new WeakMap();

/**
 * The data a chart element draws: x (1-based position), then discard, undecided, keep, best so
 * far and baseline, one value (or null) per iteration.
 * @param {Element} element
 * @returns {uPlot.AlignedData | undefined}
 */
export function chartData(element) {
  return drawn.get(element)?.data;
}

/**
 * The iterations a chart element shows now (its x range: less than all once the reader drags).
 * @param {Element} element
 * @returns {{ min: number | undefined, max: number | undefined } | undefined}
 */
export function chartRange(element) {
  const scale = drawn.get(element)?.scales.x;
  return scale && { min: scale.min, max: scale.max };
}

/**
 * @param {ProgressPoint[]} points
 * @param {number | null} baseline
 * @returns {uPlot.AlignedData}
 */
export function seriesOf(points, baseline) {
  const n = points.length;
  const x = new Array(n);
  const keep = new Array(n);
  const discard = new Array(n);
  const unset = new Array(n);
  const best = new Array(n);
  const base = new Array(n);
  for (let i = 0; i < n; i++) {
    const point = /** @type {ProgressPoint} */ (points[i]);
    x[i] = i + 1;
    keep[i] = point.status === 'keep' ? point.avg_score : null;
    discard[i] = point.status === 'discard' ? point.avg_score : null;
    unset[i] = point.status === null ? point.avg_score : null;
    best[i] = point.best_so_far;
    base[i] = baseline;
  }
  return [x, discard, unset, keep, best, base];
}

/**
 * @param {string} label
 * @param {string} color
 * @param {number} size the points' diameter: smaller as they crowd
 * @param {string} [fill]
 * @returns {uPlot.Series}
 */
function pointSeries(label, color, size, fill = color) {
  return { label, stroke: color, fill, paths: () => null, points: { show: true, space: 0, size, width: 1, stroke: fill, fill } };
}

/** Tick steps on the iteration axis: whole iterations only. */
const wholeSteps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000];

/** @param {number} count */
function pointSize(count) {
  return count > 2_000 ? 3 : count > 300 ? 5 : 7;
}

/**
 * @param {{ points: ProgressPoint[], baseline: number | null, signal: AbortSignal, onPick: (point: ProgressPoint) => void }} options
 */
export function scoreChart({ points, baseline, signal, onPick }) {
  const element = document.createElement('div');
  element.className = 'score-chart';
  let shown = points;
  /** What the points' score is, on the score axis. */
  let scoreLabel = 'avg_score';
  const size = pointSize(points.length);
  /** @type {uPlot.Options} */
  const options = {
    width: 800,
    height: 320,
    scales: { x: { time: false } },
    legend: { live: true },
    // Away from the chart the legend reads the latest iteration, not blanks.
    hooks: { setLegend: [(u) => { if (u.legend.idx == null) showLatest(u); }] },
    cursor: { drag: { x: true, y: false }, points: { size: 8 } },
    axes: [
      { label: 'Iteration (in order)', stroke: colors.axis, grid: { stroke: colors.grid }, ticks: { stroke: colors.grid }, incrs: wholeSteps },
      { label: () => scoreLabel, stroke: colors.axis, grid: { stroke: colors.grid }, ticks: { stroke: colors.grid }, size: 60 },
    ],
    series: [
      { label: 'Iteration', value: (_, position) => (position === null ? '—' : `#${position} ${shown[position - 1]?.iteration_name ?? ''}`) },
      pointSeries('discard', colors.discard, size, points.length > 300 ? discardFill : colors.discard),
      pointSeries('no decision', colors.unset, size),
      pointSeries('keep', colors.keep, size),
      { label: 'best so far', stroke: colors.best, width: 2, paths: uPlot.paths.stepped?.({ align: 1 }), points: { show: false } },
      { label: 'baseline', stroke: colors.baseline, width: 1.5, dash: [6, 4], points: { show: false } },
    ],
  };
  /** @param {uPlot} u */
  const showLatest = (u) => {
    if (shown.length > 0) u.setLegend({ idx: shown.length - 1 }, false);
  };
  const chart = new uPlot(options, seriesOf(points, baseline), element);
  drawn.set(element, chart);

  chart.over.addEventListener('click', () => {
    const index = chart.cursor.idx;
    const point = index === null || index === undefined ? undefined : shown[index];
    if (point) onPick(point);
  });
  fitChartWidth(chart, element, 320, signal);

  return {
    element,
    /**
     * @param {ProgressPoint[]} next
     * @param {number | null} nextBaseline
     * @param {string} [nextScoreLabel] what the points' avg_score holds (drawn on the axis)
     */
    update(next, nextBaseline, nextScoreLabel = 'avg_score') {
      // New data resets the scales: a range the reader dragged to stays (the score axis refits),
      // as far as it still lies within the iterations (fewer once some are deleted).
      const { min, max } = chart.scales.x;
      const zoomed = min != null && max != null && (min > 1 || max < shown.length);
      shown = next;
      scoreLabel = nextScoreLabel;
      chart.setData(seriesOf(next, nextBaseline));
      if (zoomed) {
        const [low, high] = [Math.max(1, /** @type {number} */ (min)), Math.min(next.length, /** @type {number} */ (max))];
        if (low < high) chart.setScale('x', { min: low, max: high });
      }
      // uPlot keeps the legend's index across new data: the latest is another one now.
      if ((chart.cursor.left ?? -1) < 0) showLatest(chart);
    },
  };
}
