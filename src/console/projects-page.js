// Home: the projects the signed-in person (or API key) can see.
import { call, withQuery } from './api.js';
import { clipped, h, link, pageHead } from './dom.js';
import { dateTime, text } from './format.js';
import { pagedTable } from './table.js';

/** @typedef {import('./api-types.js').Project} Project */

/** @param {import('./router.js').PageContext} context */
export function projectsPage({ signal }) {
  const projects = pagedTable({
    key: 'projects',
    pageSize: 25,
    signal,
    searchLabel: 'Search projects by name or slug',
    empty: 'No projects yet. Create one with POST /api/projects/.',
    /** @returns {Promise<import('./table.js').Page<Project>>} */
    load: (page, search) => call(withQuery('/api/projects/', { page, page_size: 25, search }), { signal }),
    columns: [
      { label: 'Project', cell: (project) => link(`/console/projects/${project.id}`, clipped(project.name, 'strong')) },
      { label: 'Slug', cell: (project) => clipped(project.slug, 'mono') },
      { label: 'Description', cell: (project) => clipped(text(project.description), 'muted') },
      { label: 'Updated', cell: (project) => dateTime(project.updated_at) },
    ],
  });
  return h('div', {}, pageHead({ trail: [], title: 'Projects', kind: 'Overview' }), h('section', { class: 'block' }, projects.element));
}
