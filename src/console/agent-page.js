// An agent: its fields, its eval spec, its dataset versions (the active one marked, any other
// one activated with a click) and its jobs.
import { call, withQuery } from './api.js';
import { badge, clipped, errorBox, facts, h, link, pageHead, replace, section } from './dom.js';
import { count, dateTime, jsonBlock, tagList, text } from './format.js';
import { jobsTable } from './project-page.js';
import { pagedTable } from './table.js';

/**
 * @typedef {import('./api-types.js').Agent} Agent
 * @typedef {import('./api-types.js').DatasetListItem} DatasetItem
 */

/** @param {import('./router.js').PageContext} context */
export async function agentPage({ params, signal }) {
  /** @type {[Agent, import('./api-types.js').EvalSpec]} */
  const [agent, evalSpec] = await Promise.all([
    call(`/api/agents/${params.id}/`, { signal }),
    call(`/api/agents/${params.id}/eval_spec/`, { signal }),
  ]);
  /** @type {import('./api-types.js').Project} */
  const project = await call(`/api/projects/${agent.project}/`, { signal });
  let activeId = agent.active_dataset;
  const notice = h('div', { class: 'notice-slot' });

  const datasets = pagedTable({
    key: 'datasets',
    pageSize: 10,
    signal,
    empty: 'No dataset versions yet.',
    /** @returns {Promise<import('./table.js').Page<DatasetItem>>} */
    load: (page) => call(withQuery('/api/datasets/', { agent: agent.id, page, page_size: 10, ordering: '-version' }), { signal }),
    rowClass: (dataset) => (dataset.id === activeId ? 'active-row' : ''),
    columns: [
      { label: 'Version', cell: (dataset) => link(`/console/datasets/${dataset.id}`, h('span', { class: 'strong' }, `v${dataset.version}`)) },
      { label: 'Name', cell: (dataset) => clipped(text(dataset.name)) },
      { label: 'Source', cell: (dataset) => text(dataset.source) },
      { label: 'Datapoints', numeric: true, cell: (dataset) => count(dataset.num_datapoints) },
      { label: 'Created', cell: (dataset) => dateTime(dataset.created_at) },
      { label: 'Active version', hideLabel: true, cell: (dataset) => (dataset.id === activeId ? badge('active') : activateButton(dataset)) },
    ],
  });

  /** @param {DatasetItem} dataset */
  function activateButton(dataset) {
    return h('button', { type: 'button', class: 'button small', onclick: async (event) => {
      const button = /** @type {HTMLButtonElement} */ (event.currentTarget);
      button.disabled = true;
      try {
        await call(`/api/datasets/${dataset.id}/activate/`, { method: 'POST', signal });
        activeId = dataset.id;
        replace(notice);
        await datasets.reload();
      } catch (error) {
        button.disabled = false;
        replace(notice, errorBox(error));
      }
    } }, 'Activate');
  }

  return h('div', {},
    pageHead({ trail: [['/', 'Projects'], [`/console/projects/${agent.project}`, project.name]], title: agent.display_name || agent.name, kind: 'Agent' }),
    agent.description ? h('p', { class: 'lead' }, agent.description) : null,
    h('div', { class: 'columns' },
      section('Fields', facts([
        ['Name', clipped(agent.name)],
        ['Slug', clipped(agent.slug, 'mono')],
        ['Display name', clipped(text(agent.display_name))],
        ['Model', clipped(text(agent.model), 'mono')],
        ['Analyzer model', clipped(text(agent.analyzer_model), 'mono')],
        ['Status', text(agent.status)],
        ['Path', clipped(text(agent.agent_path), 'mono')],
        ['Entrypoint', clipped(text(agent.entrypoint_fn), 'mono')],
        ['Tags', clipped(tagList(agent.tags))],
        ['Created', dateTime(agent.created_at)],
        ['Updated', dateTime(agent.updated_at)],
      ])),
      section('Eval spec', h('pre', { class: 'code' }, jsonBlock(evalSpec)))),
    section('Dataset versions', notice, datasets.element),
    section('Jobs', jobsTable('jobs', { agent: agent.id }, signal).element));
}
