// What changed between two versions of an agent's dataset (the dataset diff endpoint): the two
// content hashes, how many datapoints were added, removed, changed or kept, and the changes,
// paged and filtered by kind.
import { call, withQuery } from './api.js';
import { badge, h, link, pageHead, section, stat } from './dom.js';
import { count, dash, jsonInline, tagList } from './format.js';
import { setQuery } from './router.js';
import { pagedTable } from './table.js';

/**
 * @typedef {import('./api-types.js').Datapoint} Datapoint
 * @typedef {import('./api-types.js').DatasetDiffVersion} Side
 * @typedef {import('./api-types.js').DatasetDiffChange} Change
 */

const changes = /** @type {const} */ (['added', 'removed', 'changed']);

/** @param {import('./router.js').PageContext} context */
export async function diffPage({ params, query, signal }) {
  let change = query.get('change') ?? '';
  const path = `/api/datasets/${params.id}/diff/${params.other_id}/`;
  /** @type {import('./api-types.js').DatasetDiff} */
  const first = await call(withQuery(path, { page_size: 1 }), { signal });
  const { summary } = first;
  /** @type {import('./api-types.js').Dataset} */
  const from = await call(`/api/datasets/${summary.from.id}/`, { signal });
  /** @type {import('./api-types.js').Agent} */
  const agent = await call(`/api/agents/${from.agent}/`, { signal });
  /** @type {import('./api-types.js').Project} */
  const project = await call(`/api/projects/${agent.project}/`, { signal });

  const rows = pagedTable({
    key: 'changes',
    pageSize: 25,
    signal,
    empty: 'The two versions hold the same datapoints.',
    /** @returns {Promise<import('./table.js').Page<Change>>} */
    load: (page) => call(withQuery(path, { page, page_size: 25, change }), { signal }),
    rowClass: (row) => `change-${row.change}`,
    columns: [
      { label: 'Change', cell: (row) => badge(row.change) },
      { label: '#', numeric: true, cell: orderCell },
      { label: `Before (v${summary.from.version})`, cell: (row) => datapointFields(row.before, row.after) },
      { label: `After (v${summary.to.version})`, cell: (row) => datapointFields(row.after, row.before) },
    ],
  });

  const filters = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Show changes' },
    ['', ...changes].map((kind) => h('button', { type: 'button', class: 'segment', 'aria-pressed': String(kind === change), dataset: { change: kind }, onclick: (event) => {
      change = kind;
      for (const button of filters.querySelectorAll('button')) button.setAttribute('aria-pressed', String(button === event.currentTarget));
      setQuery({ change, changes_page: null });
      void rows.reload();
    } }, kind ? `${kind[0]?.toUpperCase()}${kind.slice(1)}` : 'All')));

  return h('div', {},
    pageHead({
      trail: [['/', 'Projects'], [`/console/projects/${agent.project}`, project.name], [`/console/agents/${agent.id}`, agent.display_name || agent.name], [`/console/datasets/${summary.from.id}`, `v${summary.from.version}`]],
      title: `v${summary.from.version} → v${summary.to.version}`,
      kind: 'Dataset diff',
    }),
    h('div', { class: 'stats' },
      stat('Added', `+${count(summary.added)}`, null, toneIf(summary.added, 'tone-added')),
      stat('Removed', summary.removed > 0 ? `−${count(summary.removed)}` : '0', null, toneIf(summary.removed, 'tone-removed')),
      stat('Changed', count(summary.changed), null, toneIf(summary.changed, 'tone-changed')),
      stat('Unchanged', count(summary.unchanged))),
    h('div', { class: 'columns' }, side('From', summary.from), side('To', summary.to)),
    section('Changes', h('div', { class: 'toolbar' }, filters), rows.element));
}

/**
 * @param {string} label
 * @param {Side} version
 */
function side(label, version) {
  return h('div', { class: 'hash-card' },
    h('div', { class: 'stat-label' }, label),
    h('div', {}, link(`/console/datasets/${version.id}`, h('span', { class: 'strong' }, `v${version.version}`)), ` · ${count(version.num_datapoints)} datapoints`),
    h('div', { class: 'hash mono', title: 'content hash', dataset: { hash: version.content_hash } }, version.content_hash));
}

/**
 * The datapoint's place: both when it moved (a datapoint removed before it moves it up, and that
 * alone makes it changed, though its fields are the same).
 * @param {Change} row
 */
function orderCell(row) {
  const { before, after } = row;
  if (before && after && before.order !== after.order) {
    return h('span', { class: 'differs', title: `Moved from #${before.order} to #${after.order}` }, `${before.order} → ${after.order}`);
  }
  return String((after ?? before)?.order ?? '');
}

const fields = /** @type {const} */ ([['input', 'Input'], ['expected_output', 'Expected'], ['persona', 'Persona'], ['tags', 'Tags']]);

/**
 * A datapoint's fields, those that differ from the other side's marked.
 * @param {Datapoint | null} point
 * @param {Datapoint | null} other
 */
function datapointFields(point, other) {
  if (!point) return h('span', { class: 'muted' }, '—');
  return h('dl', { class: 'datapoint' }, fields.flatMap(([field, label]) => {
    const differs = other !== null && JSON.stringify(point[field]) !== JSON.stringify(other[field]);
    const shown = field === 'tags' ? tagList(point.tags) : jsonInline(point[field]);
    // A missing value's dash is not code (in a monospace face it reads as an en dash).
    return [h('dt', {}, label), h('dd', { class: [shown === dash ? '' : 'mono', differs ? 'differs' : ''].filter(Boolean).join(' ') }, shown)];
  }));
}

/**
 * A colour only where something happened: a red zero reads as a problem.
 * @param {number} n
 * @param {string} tone
 */
function toneIf(n, tone) {
  return n > 0 ? tone : '';
}
