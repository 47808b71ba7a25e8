// A scatter of two iterations' scores, datapoint by datapoint: the first iteration's score across,
// the second's up, the diagonal y = x (no change) drawn, each mark coloured and shaped by what
// changed. Drawn as SVG, one element per mark, so each mark can be focused: the marks are the
// options of a listbox (one of them in the tab order at a time), the arrow keys move between them
// in datapoint order, and a click picks the mark nearest to it. Picking a mark calls `onPick`.

/**
 * @typedef {import('./api-types.js').PairedDatapoint} Pair
 * @typedef {Pair & { score_from: number, score_to: number }} Drawn a pair with both scores, which has a mark
 */

const svgNs = 'http://www.w3.org/2000/svg';

/** How each change is drawn: its colour, its shape (flips are triangles), and its words. */
export const changeStyles = /** @type {const} */ ({
  improved: { color: '#15803d', shape: 'circle', label: 'improved' },
  regressed: { color: '#dc2626', shape: 'circle', label: 'regressed' },
  unchanged: { color: '#64748b', shape: 'circle', label: 'unchanged' },
  fail_to_pass: { color: '#2563eb', shape: 'up', label: 'fail → pass' },
  pass_to_fail: { color: '#c2410c', shape: 'down', label: 'pass → fail' },
});

/** @typedef {keyof typeof changeStyles} DrawnChange */

/** The changes a mark can have, in the legend's order; the rest (one side only) are not drawn. */
export const drawnChanges = /** @type {DrawnChange[]} */ (['improved', 'regressed', 'unchanged', 'fail_to_pass', 'pass_to_fail']);

/** Back to front: the common marks first, the flips on top. */
const paintOrder = /** @type {DrawnChange[]} */ (['unchanged', 'improved', 'regressed', 'fail_to_pass', 'pass_to_fail']);

/** The plot's frame in the SVG's own units: a square plot with room for the axes. */
const frame = { width: 520, height: 508, left: 60, top: 14, size: 442 };
/** A click within this distance (in the SVG's units) of a mark picks it. */
const pickRadius = 16;

/**
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | number>} [attributes]
 * @param {...(SVGElement | string)} children
 * @returns {SVGElementTagNameMap[K]}
 */
function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(svgNs, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}

/**
 * Round ticks across [low, high]: steps of 1, 2 or 5 times a power of ten, about five of them.
 * @param {number} low
 * @param {number} high
 */
function ticksOf(low, high) {
  const rough = (high - low) / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough) ?? rough;
  /** @type {number[]} */
  const ticks = [];
  for (let value = Math.ceil(low / step) * step; value <= high + step * 1e-9; value += step) ticks.push(Math.round(value / step) * step);
  return ticks;
}

/**
 * @param {number} value
 * @param {number} step
 */
function tickText(value, step) {
  const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return value.toFixed(Math.min(digits, 6));
}

/**
 * A name cut for an axis label (whole in the legend's title).
 * @param {string} name
 */
function short(name) {
  return name.length > 28 ? `${name.slice(0, 27)}…` : name;
}

/**
 * The mark of one change: a circle, or a triangle pointing up (fail → pass) or down (pass → fail).
 * @param {DrawnChange} change
 * @param {number} x
 * @param {number} y
 * @param {number} r
 */
function mark(change, x, y, r) {
  const { shape, color } = changeStyles[change];
  if (shape === 'circle') return svg('circle', { cx: x.toFixed(1), cy: y.toFixed(1), r, fill: color });
  const s = r * 1.35;
  const points = shape === 'up'
    ? [[x, y - s], [x + s, y + s * 0.8], [x - s, y + s * 0.8]]
    : [[x, y + s], [x + s, y - s * 0.8], [x - s, y - s * 0.8]];
  return svg('polygon', { points: points.map(([px, py]) => `${(px ?? 0).toFixed(1)},${(py ?? 0).toFixed(1)}`).join(' '), fill: color });
}

/**
 * The legend's sample of a change, as a small SVG.
 * @param {DrawnChange} change
 */
export function swatch(change) {
  return svg('svg', { class: 'swatch', viewBox: '0 0 14 14', width: 14, height: 14, 'aria-hidden': 'true', focusable: 'false' }, mark(change, 7, 7, 4.5));
}

/** The legend's sample of the diagonal. */
export function diagonalSwatch() {
  return svg('svg', { class: 'swatch', viewBox: '0 0 22 14', width: 22, height: 14, 'aria-hidden': 'true', focusable: 'false' },
    svg('line', { class: 'scatter-diagonal', x1: 1, y1: 13, x2: 21, y2: 1 }));
}

/** A spot is counted when it holds at least this share of the drawn datapoints (and two). */
export const stackShareMin = 0.01;

/**
 * How many datapoints share a mark: datapoints with the same two scores are drawn on one spot, so
 * a spot holding many says how many (×N) beside it. Only spots holding at least `stackShareMin`
 * of the datapoints: scores of a few values (pass/fail) stack most of them on a few spots, while
 * thousands of finely scored ones meet by chance in pairs, whose labels would only crowd the plot.
 * A label near the right edge goes on the mark's left. Drawn for the eye; each datapoint is still
 * its own mark for the keyboard and for screen readers.
 * @param {Drawn[]} points
 * @param {(value: number) => number} xOf
 * @param {(value: number) => number} yOf
 * @param {number} r
 */
function stackCounts(points, xOf, yOf, r) {
  /** @type {Map<string, { point: Drawn, count: number }>} */
  const spots = new Map();
  for (const point of points) {
    const key = `${point.score_from} ${point.score_to}`;
    const spot = spots.get(key);
    if (spot) spot.count++;
    else spots.set(key, { point, count: 1 });
  }
  const least = Math.max(2, Math.ceil(points.length * stackShareMin));
  const group = svg('g', { class: 'scatter-counts', 'aria-hidden': 'true' });
  for (const { point, count } of spots.values()) {
    if (count < least) continue;
    const x = xOf(point.score_from);
    const nearRight = x > frame.left + frame.size - 40;
    group.append(svg('text', {
      class: 'scatter-count',
      x: (nearRight ? x - r - 2 : x + r + 2).toFixed(1),
      y: (yOf(point.score_to) - r).toFixed(1),
      'text-anchor': nearRight ? 'end' : 'start',
    }, `×${count}`));
  }
  return group;
}

/**
 * @param {{ points: Drawn[], fromName: string, toName: string, describe: (point: Drawn) => string, onPick: (point: Drawn) => void }} options
 *   `points` are the datapoints scored on both sides; `describe` names a mark for screen readers
 */
export function scatter({ points, fromName, toName, describe, onPick }) {
  let low = 0;
  let high = 1;
  for (const point of points) {
    low = Math.min(low, point.score_from, point.score_to);
    high = Math.max(high, point.score_from, point.score_to);
  }
  const ticks = ticksOf(low, high);
  low = Math.min(low, ticks[0] ?? low);
  high = Math.max(high, ticks.at(-1) ?? high);
  const step = ticks.length > 1 ? (ticks[1] ?? 1) - (ticks[0] ?? 0) : 1;
  const pad = (high - low) * 0.02;
  const scale = (/** @type {number} */ value) => ((value - low + pad) / (high - low + 2 * pad)) * frame.size;
  const xOf = (/** @type {number} */ value) => frame.left + scale(value);
  const yOf = (/** @type {number} */ value) => frame.top + frame.size - scale(value);
  const r = points.length > 3_000 ? 2.2 : points.length > 500 ? 3 : 4.5;
  const right = frame.left + frame.size;
  const bottom = frame.top + frame.size;

  // The axes, grid, diagonal and words are drawn for the eye; the marks carry what a screen reader says.
  const backdrop = svg('g', { 'aria-hidden': 'true' },
    svg('rect', { class: 'scatter-plot-area', x: frame.left, y: frame.top, width: frame.size, height: frame.size }),
    ...ticks.flatMap((tick) => [
      svg('line', { class: 'scatter-grid', x1: xOf(tick), x2: xOf(tick), y1: frame.top, y2: bottom }),
      svg('line', { class: 'scatter-grid', x1: frame.left, x2: right, y1: yOf(tick), y2: yOf(tick) }),
      svg('text', { class: 'scatter-tick', x: xOf(tick), y: bottom + 16, 'text-anchor': 'middle' }, tickText(tick, step)),
      svg('text', { class: 'scatter-tick', x: frame.left - 8, y: yOf(tick) + 4, 'text-anchor': 'end' }, tickText(tick, step)),
    ]),
    svg('line', { class: 'scatter-diagonal', x1: xOf(low), y1: yOf(low), x2: xOf(high), y2: yOf(high) }),
    // Set in from the corners, where pass/fail scores stack their marks (0 → 1, 1 → 0).
    svg('text', { class: 'scatter-region', x: frame.left + 26, y: frame.top + 30 }, `${short(toName)} higher ↑`),
    svg('text', { class: 'scatter-region', x: right - 26, y: bottom - 22, 'text-anchor': 'end' }, `↓ ${short(toName)} lower`),
    svg('text', { class: 'scatter-axis', x: frame.left + frame.size / 2, y: frame.height - 6, 'text-anchor': 'middle' }, `Score of ${short(fromName)} (from)`),
    svg('text', { class: 'scatter-axis', x: 16, y: frame.top + frame.size / 2, 'text-anchor': 'middle', transform: `rotate(-90 16 ${frame.top + frame.size / 2})` }, `Score of ${short(toName)} (to)`));

  // Keyboard order is datapoint order; paint order puts the flips on top.
  const byOrder = [...points].sort((a, b) => a.datapoint_order - b.datapoint_order);
  /** @type {Map<Drawn, SVGElement>} */
  const marks = new Map();
  /** @type {Map<Element, Drawn>} */
  const pointOf = new Map();
  const listbox = svg('g', { role: 'listbox', 'aria-label': `Datapoints scored by both, ${byOrder.length}: the arrow keys move between them in datapoint order` });
  const fragment = document.createDocumentFragment();
  for (const change of paintOrder) {
    for (const point of byOrder) {
      if (point.change !== change) continue;
      const element = mark(change, xOf(point.score_from), yOf(point.score_to), r);
      element.setAttribute('class', `scatter-point change-${change}`);
      element.setAttribute('role', 'option');
      element.setAttribute('tabindex', '-1');
      element.setAttribute('aria-selected', 'false');
      element.setAttribute('aria-label', describe(point));
      element.dataset.order = String(point.datapoint_order);
      element.dataset.datapoint = point.datapoint;
      marks.set(point, element);
      pointOf.set(element, point);
      fragment.append(element);
    }
  }
  listbox.append(fragment);
  const stacks = stackCounts(byOrder, xOf, yOf, r);
  const ring = svg('circle', { class: 'scatter-ring', r: r + 4.5, cx: -100, cy: -100, 'aria-hidden': 'true' });
  ring.style.display = 'none';
  const element = svg('svg', { class: 'scatter', viewBox: `0 0 ${frame.width} ${frame.height}`, 'data-points': byOrder.length }, backdrop, listbox, stacks, ring);

  /** @type {Drawn | undefined} */
  let picked;
  const first = byOrder[0];
  if (first) marks.get(first)?.setAttribute('tabindex', '0');

  /**
   * @param {Drawn} point
   * @param {boolean} focus
   */
  function pick(point, focus) {
    const previous = picked ? marks.get(picked) : undefined;
    previous?.setAttribute('tabindex', '-1');
    previous?.setAttribute('aria-selected', 'false');
    if (first && point !== first) marks.get(first)?.setAttribute('tabindex', '-1');
    picked = point;
    const chosen = marks.get(point);
    if (!chosen) return;
    chosen.setAttribute('tabindex', '0');
    chosen.setAttribute('aria-selected', 'true');
    ring.setAttribute('cx', xOf(point.score_from).toFixed(1));
    ring.setAttribute('cy', yOf(point.score_to).toFixed(1));
    ring.style.display = '';
    if (focus) chosen.focus();
    onPick(point);
  }

  /** The mark nearest to a click, if one is close enough. @param {MouseEvent} event */
  function nearest(event) {
    const matrix = element.getScreenCTM();
    if (!matrix) return undefined;
    const at = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
    let best;
    let bestDistance = pickRadius * pickRadius;
    for (const point of byOrder) {
      const dx = xOf(point.score_from) - at.x;
      const dy = yOf(point.score_to) - at.y;
      const distance = dx * dx + dy * dy;
      if (distance < bestDistance) {
        best = point;
        bestDistance = distance;
      }
    }
    return best;
  }

  element.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target.closest('.scatter-point') : null;
    const point = (target ? pointOf.get(target) : undefined) ?? nearest(event);
    if (point) pick(point, true);
  });
  // Selection follows focus: tabbing into the chart picks the mark that takes the focus.
  element.addEventListener('focusin', (event) => {
    const point = event.target instanceof Element ? pointOf.get(event.target) : undefined;
    if (point && point !== picked) pick(point, false);
  });
  element.addEventListener('keydown', (event) => {
    if (byOrder.length === 0) return;
    const at = picked ? byOrder.indexOf(picked) : -1;
    const moves = /** @type {Record<string, number>} */ ({
      ArrowRight: at + 1, ArrowDown: at + 1, ArrowLeft: at - 1, ArrowUp: at - 1,
      PageDown: at + 10, PageUp: at - 10, Home: 0, End: byOrder.length - 1,
    });
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      const point = picked ?? first;
      if (point) pick(point, true);
      return;
    }
    if (!(event.key in moves)) return;
    event.preventDefault();
    const index = Math.max(0, Math.min(byOrder.length - 1, at < 0 ? 0 : /** @type {number} */ (moves[event.key])));
    const point = byOrder[index];
    if (point) pick(point, true);
  });

  return {
    element,
    /** Spots labelled with how many datapoints they hold. */
    stacked: stacks.childElementCount,
    /** @param {string} datapoint picks the mark of this datapoint, if drawn */
    pick(datapoint) {
      const point = byOrder.find((candidate) => candidate.datapoint === datapoint);
      if (point) pick(point, false);
    },
  };
}
