// A dataset version: what it is, its datapoints (paged, searchable by persona), and a way to
// diff it against any other version of the same agent. With `?datapoint=<id>` (a result's link)
// it shows that datapoint whole first, and opens the table at its page with its row marked.
import { call, withQuery } from './api.js';
import { badge, clipped, facts, h, link, pageHead, section } from './dom.js';
import { count, dateTime, jsonBlock, jsonInline, tagList, text } from './format.js';
import { navigate, setQuery } from './router.js';
import { pagedTable } from './table.js';

/**
 * @typedef {import('./api-types.js').Agent} Agent
 * @typedef {import('./api-types.js').Dataset} Dataset
 * @typedef {import('./api-types.js').DatasetListItem} DatasetItem
 * @typedef {import('./api-types.js').Datapoint} Datapoint
 */

const pageSize = 25;

/** @param {import('./router.js').PageContext} context */
export async function datasetPage({ params, query, signal }) {
  // The list item has no id filter, so the dataset is read whole once; its datapoints are then
  // paged from the datapoints listing (which searches them).
  /** @type {Dataset} */
  const dataset = await call(`/api/datasets/${params.id}/`, { signal });
  /** @type {[Agent, import('./table.js').Page<DatasetItem>]} */
  const [agent, versions] = await Promise.all([
    call(`/api/agents/${dataset.agent}/`, { signal }),
    call(withQuery('/api/datasets/', { agent: dataset.agent, page_size: 100, ordering: '-version' }), { signal }),
  ]);
  /** @type {import('./api-types.js').Project} */
  const project = await call(`/api/projects/${agent.project}/`, { signal });
  const active = agent.active_dataset === dataset.id;

  const wanted = query.get('datapoint');
  const ordered = [...dataset.datapoints].sort((a, b) => a.order - b.order);
  const at = wanted ? ordered.findIndex((point) => point.id === wanted) : -1;
  const focused = ordered[at];
  // The table opens at the focused datapoint's page (the listing's order is the datapoints' order)
  // unless the URL already names a page or a search.
  if (focused && !query.has('datapoints_page') && !query.get('datapoints_search')) {
    const page = Math.floor(at / pageSize) + 1;
    setQuery({ datapoints_page: page > 1 ? page : null });
  }

  const datapoints = pagedTable({
    key: 'datapoints',
    pageSize,
    signal,
    searchLabel: 'Search datapoints by persona',
    empty: 'This version has no datapoints.',
    /** @returns {Promise<import('./table.js').Page<Datapoint>>} */
    load: (page, search) => call(withQuery(`/api/datasets/${dataset.id}/datapoints/`, { page, page_size: pageSize, search }), { signal }),
    columns: datapointColumns,
    rowClass: (point) => (point.id === wanted ? 'picked-row' : ''),
  });

  const others = versions.results.filter((version) => version.id !== dataset.id);
  const picker = h('select', { 'aria-label': 'Version to compare with' },
    others.map((version) => h('option', { value: version.id }, `v${version.version}${version.name ? ` · ${version.name}` : ''}`)));
  const diffForm = others.length === 0
    ? h('p', { class: 'muted' }, 'This agent has no other version to compare with.')
    : h('form', { class: 'inline-form', onsubmit: (event) => {
      event.preventDefault();
      navigate(`/console/datasets/${dataset.id}/diff/${picker.value}`);
    } }, h('label', {}, `Diff v${dataset.version} against `, picker), h('button', { type: 'submit', class: 'button' }, 'Show diff'));

  return h('div', {},
    pageHead({
      trail: [['/', 'Projects'], [`/console/projects/${agent.project}`, project.name], [`/console/agents/${agent.id}`, agent.display_name || agent.name]],
      title: `Dataset v${dataset.version}${dataset.name ? ` · ${dataset.name}` : ''}`,
      kind: 'Dataset version',
      actions: [active ? badge('active') : badge('inactive', 'neutral')],
    }),
    h('div', { class: 'columns' },
      section('Version', facts([
        ['Agent', link(`/console/agents/${agent.id}`, clipped(agent.display_name || agent.name))],
        ['Version', `v${dataset.version}`],
        ['Datapoints', count(dataset.num_datapoints)],
        ['Source', text(dataset.source)],
        ['Generator', clipped(text(dataset.generator_model), 'mono')],
        ['Created', dateTime(dataset.created_at)],
      ])),
      section('Compare', diffForm)),
    wanted ? datapointSection(wanted, focused) : null,
    section('Datapoints', datapoints.element));
}

/**
 * One datapoint whole: its fields as they were written.
 * @param {string} id
 * @param {Datapoint | undefined} point
 */
function datapointSection(id, point) {
  if (!point) return section('Datapoint', h('p', { class: 'error' }, `This version has no datapoint ${id}.`));
  return h('section', { class: 'block', dataset: { datapoint: point.id } },
    h('h2', {}, `Datapoint #${point.order}`),
    facts([
      ['Id', h('span', { class: 'mono' }, point.id)],
      ['Input', h('pre', { class: 'code' }, jsonBlock(point.input))],
      ['Expected output', point.expected_output === null || point.expected_output === undefined ? '—' : h('pre', { class: 'code' }, jsonBlock(point.expected_output))],
      ['Persona', text(point.persona)],
      ['Tags', tagList(point.tags)],
    ]));
}

/** @type {import('./table.js').Column<Datapoint>[]} */
export const datapointColumns = [
  { label: '#', numeric: true, cell: (point) => String(point.order) },
  { label: 'Input', cell: (point) => clipped(jsonInline(point.input), 'mono wide') },
  { label: 'Expected output', cell: (point) => clipped(jsonInline(point.expected_output), 'mono wide') },
  { label: 'Persona', cell: (point) => clipped(text(point.persona)) },
  { label: 'Tags', cell: (point) => clipped(tagList(point.tags)) },
];
