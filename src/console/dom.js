// Building the page from data without ever parsing data as markup: every value a user or an
// agent wrote reaches the page as a text node or an attribute value, never through innerHTML.
import { dash as missing, errorHeadline } from './format.js';

/**
 * @typedef {string | number | Node | null | undefined | false} Child
 * @typedef {(Child | Children)[]} Children lists of children may nest; they are flattened
 * @typedef {Record<string, string | number | boolean | null | undefined | EventListener | Record<string, string>>} Props
 */

/**
 * Makes an element. Props are attributes, except `on<event>` (a listener) and `dataset` (data-*
 * attributes); children are nodes or text (strings become text nodes: markup in them is shown).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props} [props]
 * @param {...(Child | Children)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (typeof value === 'object') Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

/**
 * @param {Element | DocumentFragment} parent
 * @param {Children} children
 */
export function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(typeof child === 'number' ? String(child) : child);
  }
}

/**
 * Text that may be too long for its place: cut with an ellipsis by CSS, whole in the tooltip.
 * @param {string} text
 * @param {string} [className]
 * @param {string} [title] the tooltip, when it says more than the text (an error's whole)
 */
export function clipped(text, className = '', title = text) {
  // A missing value's dash is not code: in a monospace face it would read as an en dash beside the others.
  if (text === missing) return h('span', { class: `clip ${className.replace(/\bmono\b/, '')}`.trim() }, text);
  return h('span', { class: `clip ${className}`.trim(), title }, text);
}

/**
 * An error in a one-line cell: its most telling line (errorHeadline), the whole in the tooltip.
 * @param {string | null | undefined} error
 */
export function errorClip(error) {
  return error ? clipped(errorHeadline(error), 'error-text wide', error) : clipped('(no message)', 'error-text wide');
}

/**
 * Replaces an element's content.
 * @param {Element} element
 * @param {...(Child | Children)} children
 */
export function replace(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

/**
 * A link inside the console (the router follows it without reloading the page).
 * @param {string} href
 * @param {...(Child | Children)} children
 */
export function link(href, ...children) {
  return h('a', { href }, ...children);
}

/**
 * The head of a page: where it sits (links back up), what it is, its title, and an id to copy.
 * @param {{ trail: [string, string][], title: string, kind: string, id?: string, actions?: Child[] }} head
 */
export function pageHead({ trail, title, kind, id, actions = [] }) {
  document.title = `${title} · Overmind console`;
  const crumbs = h('nav', { class: 'trail', 'aria-label': 'Where this page is' },
    trail.flatMap(([href, label], index) => [index > 0 ? h('span', { class: 'trail-sep', 'aria-hidden': 'true' }, '/') : null, link(href, clipped(label))]));
  return h('div', { class: 'page-head' },
    crumbs,
    h('div', { class: 'page-title-row' },
      h('div', { class: 'page-title-block' },
        h('span', { class: 'kind' }, kind),
        h('h1', { class: 'clip', title }, title),
        id ? h('div', { class: 'page-id mono' }, id) : null),
      h('div', { class: 'actions' }, actions)));
}

/**
 * A titled part of a page.
 * @param {string} title
 * @param {...(Child | Children)} children
 */
export function section(title, ...children) {
  return h('section', { class: 'block' }, h('h2', {}, title), ...children);
}

/**
 * Labelled values (a record's fields).
 * @param {[string, Child | Children][]} pairs
 */
export function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs.flatMap(([label, value]) => [h('dt', {}, label), h('dd', {}, value)]));
}

/**
 * A short status word with its colour (running, keep, error...).
 * @param {string} text
 * @param {string} [tone] one of the badge tones in console.css; the text by default
 */
export function badge(text, tone = text) {
  return h('span', { class: `badge tone-${tone}` }, text);
}

/**
 * A headline number: a label, the value, and a line under it.
 * @param {string} label
 * @param {Child} value
 * @param {Child | Children} [note]
 * @param {string} [className]
 */
export function stat(label, value, note, className = '') {
  return h('div', { class: `stat ${className}`.trim() }, h('div', { class: 'stat-label' }, label), h('div', { class: 'stat-value' }, value), note ? h('div', { class: 'stat-note' }, note) : null);
}

/**
 * @param {unknown} error
 */
export function errorBox(error) {
  return h('div', { class: 'error', role: 'alert' }, error instanceof Error ? error.message : String(error));
}

/**
 * Runs `action` once in the next frame however many times it is asked for before then.
 * @param {() => void} action
 */
export function coalesce(action) {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      action();
    });
  };
}

/**
 * Keeps a uPlot chart as wide as `element` (uPlot draws at a fixed size) until `signal` aborts,
 * then destroys it.
 * @param {{ width: number, setSize(size: { width: number, height: number }): void, destroy(): void }} chart
 * @param {HTMLElement} element
 * @param {number} height
 * @param {AbortSignal} signal
 */
export function fitChartWidth(chart, element, height, signal) {
  const resize = new ResizeObserver(() => {
    const width = element.clientWidth;
    if (width > 0 && width !== chart.width) chart.setSize({ width, height });
  });
  resize.observe(element);
  signal.addEventListener('abort', () => {
    resize.disconnect();
    chart.destroy();
  }, { once: true });
}
