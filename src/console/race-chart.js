// A race as a chart: each candidate's confidence band on its mean difference from the incumbent
// (candidate − incumbent, over the whole dataset version) as it narrowed, pair by pair (the race
// history, GET /api/runs/{id}/race/), the zero line (a band wholly below it: worse than the
// incumbent), the pairs before `min_pairs` shaded (no stop there), and a mark where a candidate was
// stopped, at the bound that decided. Drawn by uPlot on a canvas; the legend is the page's own: each
// candidate's colour, name and band at the cursor (away from the chart, its latest).
import { fitChartWidth, h, replace } from './dom.js';
import { count, deltaInterval, meanDelta } from './format.js';
import uPlot from './uplot.js';

/**
 * @typedef {import('./api-types.js').RaceHistory} RaceHistory
 * @typedef {import('./api-types.js').RaceCandidate} RaceCandidate
 * @typedef {{ history: RaceHistory, candidates: RaceCandidate[], minPairs: number, scoreRange: number[] }} RaceDrawn
 *   what the chart draws: the bounds pair by pair, and the candidates as the run says them (their stops)
 */

/** Candidates' colours, in the run's order: none is green or red, which say better and worse elsewhere. */
export const raceColors = ['#2563eb', '#d97706', '#7c3aed', '#0d9488', '#db2777', '#475569', '#0284c7', '#a16207'];
const ink = { axis: '#475569', grid: '#eef0f3', zero: '#0f172a', shade: 'rgba(148, 163, 184, 0.14)', shadeText: '#5a687d' };
const height = 300;

/** What each chart draws, for the browser test and for anyone reading the page's state. */
const drawnBy = new WeakMap();

/**
 * The data a race chart element draws: x (pairs), then each candidate's upper and lower bound
 * (null where it has no point), in the run's order of candidates.
 * @param {Element} element
 * @returns {uPlot.AlignedData | undefined}
 */
export function raceChartData(element) {
  return drawnBy.get(element)?.data;
}

/** @param {number} index */
export function raceColor(index) {
  return raceColors[index % raceColors.length] ?? '#2563eb';
}

/**
 * @param {string} color a #rrggbb colour
 * @param {number} alpha
 */
function translucent(color, alpha) {
  const [r, g, b] = [1, 3, 5].map((at) => parseInt(color.slice(at, at + 2), 16));
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

/**
 * The history as uPlot's aligned data: every candidate's pairs on one x axis (a thinned history
 * has a point every stride-th pair, the stride its own), the others' values null there.
 * @param {RaceHistory} history
 * @returns {uPlot.AlignedData}
 */
export function raceSeries(history) {
  const xs = [...new Set(history.candidates.flatMap((candidate) => candidate.pairs))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, index) => [x, index]));
  /** @type {(number | null)[][]} */
  const bounds = [];
  for (const candidate of history.candidates) {
    /** @type {(number | null)[]} */
    const high = new Array(xs.length).fill(null);
    /** @type {(number | null)[]} */
    const low = new Array(xs.length).fill(null);
    candidate.pairs.forEach((pairs, index) => {
      const column = /** @type {number} */ (at.get(pairs));
      high[column] = candidate.high[index] ?? null;
      low[column] = candidate.low[index] ?? null;
    });
    bounds.push(high, low);
  }
  return [xs, ...bounds];
}

/**
 * The y range: the bounds from `minPairs` pairs on (before, the bands are as wide as the score
 * range allows and no stop can be made), with 0 in it, padded, and never wider than the range
 * differences can take.
 * @param {RaceDrawn} drawn
 * @returns {[number, number]}
 */
function yRangeOf({ history, minPairs, scoreRange }) {
  const width = (scoreRange[1] ?? 1) - (scoreRange[0] ?? 0);
  /** @type {number[]} */
  const values = [];
  for (const candidate of history.candidates) {
    candidate.pairs.forEach((pairs, index) => {
      if (pairs >= minPairs || candidate.pairs.length === index + 1) values.push(candidate.low[index] ?? 0, candidate.high[index] ?? 0);
    });
  }
  const low = Math.max(-width, Math.min(0, ...values));
  const high = Math.min(width, Math.max(0, ...values));
  const pad = Math.max((high - low) * 0.08, width * 0.02);
  return [Math.max(-width, low - pad), Math.min(width, high + pad)];
}

/**
 * A candidate's bounds on its mean difference, e.g. "[−0.310, +0.054]"; once every datapoint is
 * paired they meet, at the exact mean difference: "+0.008 exact".
 * @param {number} low
 * @param {number} high
 */
export function raceBounds(low, high) {
  return low === high ? `${meanDelta(low)} exact` : deltaInterval({ low, high });
}

/** A state as the chart's mark and the legend say it. @type {Record<string, string>} */
export const raceStateWords = { live: 'live', worse: 'worse', better: 'better', cannot_win: 'cannot win', finished: 'finished' };

/**
 * @param {{ drawn: RaceDrawn, nameOf: (iteration: string) => string, label: string, signal: AbortSignal }} options
 *   `label` names the chart for screen readers (the figures are in the page's table)
 */
export function raceChart({ drawn, nameOf, label, signal }) {
  let shown = drawn;
  let yRange = yRangeOf(drawn);
  const plot = h('div', { class: 'race-plot', role: 'img', 'aria-label': label });
  const legendHead = h('p', { class: 'race-legend-head' });
  const legend = h('ul', { class: 'race-legend' });
  const element = h('div', { class: 'race-chart' }, plot, h('div', { class: 'race-legend-wrap' }, legendHead, legend));

  const candidates = drawn.history.candidates;
  /** @type {uPlot.Options} */
  const options = {
    width: 800,
    height,
    scales: {
      x: { time: false, range: () => [0, shown.history.datapoints] },
      y: { range: () => yRange },
    },
    legend: { show: false },
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    axes: [
      { label: 'Datapoints paired with the incumbent', stroke: ink.axis, grid: { stroke: ink.grid }, ticks: { stroke: ink.grid }, incrs: [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000] },
      { label: 'Mean difference vs incumbent', stroke: ink.axis, grid: { stroke: ink.grid }, ticks: { stroke: ink.grid }, size: 64, values: (_, splits) => splits.map((value) => signed(value)) },
    ],
    series: [
      { label: 'Pairs' },
      ...candidates.flatMap((candidate, index) => [
        { label: `${nameOf(candidate.iteration)}: upper bound`, stroke: raceColor(index), width: 1.5, spanGaps: true, points: { show: false } },
        { label: `${nameOf(candidate.iteration)}: lower bound`, stroke: raceColor(index), width: 1.5, spanGaps: true, points: { show: false } },
      ]),
    ],
    bands: candidates.map((_, index) => ({ series: /** @type {[number, number]} */ ([1 + 2 * index, 2 + 2 * index]), fill: translucent(raceColor(index), 0.08) })),
    hooks: {
      drawClear: [shadeBeforeMinPairs],
      draw: [drawZeroAndStops],
      setCursor: [showLegend],
    },
  };
  const chart = new uPlot(options, raceSeries(drawn.history), plot);
  drawnBy.set(element, chart);

  /** Where the pairs before min_pairs end on the canvas (no stop is made before). @param {uPlot} u */
  const minPairsEdge = (u) => Math.min(u.valToPos(shown.minPairs, 'x', true), u.bbox.left + u.bbox.width);

  /** The pairs before min_pairs shaded, under the grid and the bands. @param {uPlot} u */
  function shadeBeforeMinPairs(u) {
    const { ctx, bbox } = u;
    const edge = minPairsEdge(u);
    if (!(edge > bbox.left)) return;
    ctx.save();
    ctx.fillStyle = ink.shade;
    ctx.fillRect(bbox.left, bbox.top, edge - bbox.left, bbox.height);
    ctx.restore();
  }

  /**
   * Words on the plot, over the grid and the bands: a white halo keeps them readable.
   * @param {CanvasRenderingContext2D} ctx
   * @param {string} words
   * @param {number} x
   * @param {number} y
   * @param {string} color
   */
  function haloText(ctx, words, x, y, color) {
    ctx.lineWidth = 3 * uPlot.pxRatio;
    ctx.strokeStyle = 'rgba(255, 255, 255, 0.9)';
    ctx.strokeText(words, x, y);
    ctx.fillStyle = color;
    ctx.fillText(words, x, y);
  }

  /** The zero line, and each stop: where it was made, and a mark at the bound that decided. @param {uPlot} u */
  function drawZeroAndStops(u) {
    const { ctx, bbox } = u;
    const px = uPlot.pxRatio;
    ctx.save();
    ctx.beginPath();
    ctx.rect(bbox.left, bbox.top, bbox.width, bbox.height);
    ctx.clip();
    const zero = Math.round(u.valToPos(0, 'y', true));
    ctx.strokeStyle = ink.zero;
    ctx.lineWidth = 1.5 * px;
    ctx.setLineDash([6 * px, 4 * px]);
    ctx.beginPath();
    ctx.moveTo(bbox.left, zero);
    ctx.lineTo(bbox.left + bbox.width, zero);
    ctx.stroke();
    ctx.setLineDash([]);
    // Its words at the left, where no stop is made (so no stop's words meet them), haloed over the bands.
    ctx.font = `600 ${11 * px}px system-ui, sans-serif`;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'bottom';
    haloText(ctx, '0: as good as the incumbent', bbox.left + 6 * px, zero - 4 * px, ink.zero);
    // The shaded pairs' words, a third of the way down from 0, inside the bands (as wide as they get there).
    const edge = minPairsEdge(u);
    if (edge > bbox.left) {
      ctx.font = `${11 * px}px system-ui, sans-serif`;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      haloText(ctx, `no stop before ${count(shown.minPairs)}`, (bbox.left + edge) / 2, zero + (bbox.top + bbox.height - zero) / 3, ink.shadeText);
    }

    shown.candidates.forEach((candidate, index) => {
      if (candidate.stopped_at === null || !candidate.stop) return;
      const color = raceColor(index);
      const x = u.valToPos(candidate.stopped_at, 'x', true);
      const y = u.valToPos(candidate.stop.bound, 'y', true);
      ctx.strokeStyle = translucent(color, 0.6);
      ctx.lineWidth = 1 * px;
      ctx.setLineDash([2 * px, 3 * px]);
      ctx.beginPath();
      ctx.moveTo(x, bbox.top);
      ctx.lineTo(x, bbox.top + bbox.height);
      ctx.stroke();
      ctx.setLineDash([]);
      // A diamond at the deciding bound, ringed in white so it shows over the bands.
      const r = 6 * px;
      ctx.beginPath();
      ctx.moveTo(x, y - r);
      ctx.lineTo(x + r, y);
      ctx.lineTo(x, y + r);
      ctx.lineTo(x - r, y);
      ctx.closePath();
      ctx.fillStyle = color;
      ctx.strokeStyle = '#ffffff';
      ctx.lineWidth = 2 * px;
      ctx.stroke();
      ctx.fill();
      // Its words, beside the mark: above it for a bound below 0, under it otherwise.
      const words = `${raceStateWords[candidate.state] ?? candidate.state} at ${count(candidate.stopped_at)}`;
      ctx.font = `600 ${12 * px}px system-ui, sans-serif`;
      ctx.textAlign = x > bbox.left + bbox.width * 0.8 ? 'right' : 'left';
      ctx.textBaseline = candidate.stop.bound < 0 ? 'bottom' : 'top';
      const dx = ctx.textAlign === 'right' ? -9 * px : 9 * px;
      const dy = candidate.stop.bound < 0 ? -5 * px : 5 * px;
      haloText(ctx, words, x + dx, y + dy, color);
    });
    ctx.restore();
  }

  /** The legend: each candidate's band at the cursor's pairs, or its latest away from the chart. @param {uPlot} u */
  function showLegend(u) {
    const index = u.cursor.idx;
    const xs = /** @type {number[]} */ (u.data[0]);
    const at = index === null || index === undefined ? null : xs[index] ?? null;
    replace(legendHead, at === null ? 'Latest bounds' : `Bounds at ${count(at)} ${at === 1 ? 'pair' : 'pairs'}`);
    replace(legend, shown.history.candidates.map((candidate, order) => {
      let text = '—';
      if (at === null) {
        const last = candidate.pairs.length - 1;
        if (last >= 0) text = `${raceBounds(/** @type {number} */ (candidate.low[last]), /** @type {number} */ (candidate.high[last]))} at ${count(candidate.pairs[last])}`;
      } else {
        const high = u.data[1 + 2 * order]?.[/** @type {number} */ (index)];
        const low = u.data[2 + 2 * order]?.[/** @type {number} */ (index)];
        if (typeof high === 'number' && typeof low === 'number') text = raceBounds(low, high);
        else if (candidate.stopped_at !== null && at > candidate.stopped_at) text = `stopped at ${count(candidate.stopped_at)}`;
      }
      const swatch = h('span', { class: 'race-swatch' });
      swatch.style.background = raceColor(order);
      return h('li', {}, swatch, h('span', { class: 'race-legend-name', title: nameOf(candidate.iteration) }, nameOf(candidate.iteration)), h('span', { class: 'race-legend-value' }, text));
    }));
  }

  showLegend(chart);
  fitChartWidth(chart, plot, height, signal);

  return {
    element,
    /** @param {RaceDrawn} next the history read again, and the candidates as the run says them now */
    update(next) {
      shown = next;
      yRange = yRangeOf(next);
      chart.setData(raceSeries(next.history));
      showLegend(chart);
    },
  };
}

/** An axis value with its sign, as differences read ("+0.2", "−0.4", "0"). @param {number} value */
function signed(value) {
  const text = String(Number(Math.abs(value).toFixed(6)));
  return value > 0 ? `+${text}` : value < 0 ? `−${text}` : '0';
}
