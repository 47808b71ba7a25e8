// Tables of API lists: a page of rows at a time (the API's pagination), an optional search, and
// the page and search kept in the query string so that reload shows the same rows.
import { h, replace } from './dom.js';
import { count } from './format.js';
import { setQuery } from './router.js';

/** @typedef {import('./dom.js').Child} Child */
/** @typedef {import('./dom.js').Children} Children */
/**
 * @template T
 * @typedef {import('./api-types.js').Page<T>} Page
 */
/**
 * @template T
 * @typedef {{ label: string, cell: (item: T) => Child | Children, numeric?: boolean, hideLabel?: boolean }} Column
 * `hideLabel`: a column whose cells speak for themselves (a bar, a button) still names itself to
 * screen readers, with a header read but not shown.
 */

/**
 * A plain table of items.
 * @template T
 * @param {Column<T>[]} columns
 * @param {T[]} items
 * @param {(item: T) => string} [rowClass]
 */
export function table(columns, items, rowClass) {
  const head = h('tr', {}, columns.map((column) =>
    h('th', { class: column.numeric ? 'num' : null, scope: 'col' }, column.hideLabel ? h('span', { class: 'visually-hidden' }, column.label) : column.label)));
  const rows = items.map((item) =>
    h('tr', { class: rowClass?.(item) || null }, columns.map((column) => h('td', { class: column.numeric ? 'num' : null }, column.cell(item)))));
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data' }, h('thead', {}, head), h('tbody', {}, rows)));
}

/**
 * @template T
 * @typedef {object} PagedOptions
 * @property {string} key prefix of this table's parameters in the query string
 * @property {(page: number, search: string, signal: AbortSignal) => Promise<Page<T>>} load
 * @property {Column<T>[]} columns
 * @property {number} pageSize the page size `load` asks for
 * @property {string | (() => string)} empty what an empty list says (asked each time it is shown)
 * @property {AbortSignal} signal the page's life
 * @property {string} [searchLabel] shows a search box with this placeholder
 * @property {(item: T) => string} [rowClass]
 */

/**
 * A table that pages through a list. `reload()` fetches the shown page again (live pages call it
 * when an event says the list changed).
 * @template T
 * @param {PagedOptions<T>} options
 */
export function pagedTable(options) {
  const { key, load, columns, pageSize, empty, signal, searchLabel, rowClass } = options;
  const query = new URLSearchParams(location.search);
  let page = Math.max(1, Number(query.get(`${key}_page`)) || 1);
  let search = query.get(`${key}_search`) ?? '';
  let generation = 0;

  const body = h('div', { class: 'table-body' });
  const summary = h('span', { class: 'pager-summary' });
  const previous = h('button', { type: 'button', class: 'button quiet', onclick: () => go(page - 1) }, '← Previous');
  const next = h('button', { type: 'button', class: 'button quiet', onclick: () => go(page + 1) }, 'Next →');
  const pager = h('div', { class: 'pager' }, summary, h('span', { class: 'pager-buttons' }, previous, next));
  const searchBox = searchLabel
    ? h('input', { type: 'search', class: 'search', placeholder: searchLabel, 'aria-label': searchLabel, value: search, oninput: debounce(onSearch, 250) })
    : null;
  const element = h('div', { class: 'paged', dataset: { table: key } }, searchBox ? h('div', { class: 'toolbar' }, searchBox) : null, body, pager);

  function onSearch() {
    search = /** @type {HTMLInputElement} */ (searchBox).value.trim();
    page = 1;
    setQuery({ [`${key}_search`]: search, [`${key}_page`]: null });
    void reload();
  }

  /** @param {number} target */
  function go(target) {
    page = target;
    setQuery({ [`${key}_page`]: page > 1 ? page : null });
    void reload();
  }

  async function reload() {
    const mine = ++generation;
    element.setAttribute('aria-busy', 'true');
    try {
      const answer = await load(page, search, signal);
      if (mine !== generation) return;
      const first = (page - 1) * pageSize + 1;
      replace(body, answer.results.length > 0 ? table(columns, answer.results, rowClass) : h('p', { class: 'empty' }, search ? `Nothing matches “${search}”.` : typeof empty === 'function' ? empty() : empty));
      replace(summary, answer.count > 0 ? `${count(first)}–${count(first + answer.results.length - 1)} of ${count(answer.count)}` : '');
      previous.disabled = !answer.previous;
      next.disabled = !answer.next;
      pager.hidden = !answer.previous && !answer.next;
    } catch (error) {
      if (mine !== generation || signal.aborted) return;
      // A page that no longer exists (rows were deleted, or a stale URL): show the first one.
      if (/** @type {{ status?: number }} */ (error).status === 404 && page > 1) return go(1);
      replace(body, h('p', { class: 'error' }, /** @type {Error} */ (error).message));
    } finally {
      if (mine === generation) element.removeAttribute('aria-busy');
    }
  }

  void reload();
  return { element, reload };
}

/**
 * @param {() => void} action
 * @param {number} ms
 */
function debounce(action, ms) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(action, ms);
  };
}
