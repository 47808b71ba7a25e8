// A project: its agents, its recent jobs and its members.
import { call, withQuery } from './api.js';
import { badge, clipped, h, link, pageHead, section } from './dom.js';
import { dateTime, delta, score, text } from './format.js';
import { pagedTable } from './table.js';

/**
 * @typedef {import('./api-types.js').Project} Project
 * @typedef {import('./api-types.js').AgentListItem} AgentItem
 * @typedef {import('./api-types.js').JobListItem} JobItem
 * @typedef {import('./api-types.js').Membership} Membership
 */

/** @param {import('./router.js').PageContext} context */
export async function projectPage({ params, signal }) {
  /** @type {Project} */
  const project = await call(`/api/projects/${params.id}/`, { signal });
  const agents = pagedTable({
    key: 'agents',
    pageSize: 10,
    signal,
    searchLabel: 'Search agents',
    empty: 'No agents in this project yet.',
    /** @returns {Promise<import('./table.js').Page<AgentItem>>} */
    load: (page, search) => call(withQuery('/api/agents/', { project: project.id, page, page_size: 10, search }), { signal }),
    columns: agentColumns,
  });
  const jobs = jobsTable('jobs', { project: project.id }, signal);
  const members = pagedTable({
    key: 'members',
    pageSize: 10,
    signal,
    empty: 'No members.',
    /** @returns {Promise<import('./table.js').Page<Membership>>} */
    load: (page) => call(withQuery(`/api/projects/${project.id}/memberships/`, { page, page_size: 10 }), { signal }),
    columns: [
      { label: 'Member', cell: (member) => clipped(member.user_email) },
      { label: 'Since', cell: (member) => dateTime(member.created_at) },
    ],
  });
  return h('div', {},
    pageHead({ trail: [['/', 'Projects']], title: project.name, kind: 'Project' }),
    project.description ? h('p', { class: 'lead' }, project.description) : null,
    section('Recent jobs', jobs.element),
    h('div', { class: 'columns wide-first' }, section('Agents', agents.element), section('Members', members.element)));
}

/** @type {import('./table.js').Column<AgentItem>[]} */
const agentColumns = [
  { label: 'Agent', cell: (agent) => link(`/console/agents/${agent.id}`, clipped(agent.display_name || agent.name, 'strong')) },
  { label: 'Model', cell: (agent) => clipped(text(agent.model), 'mono') },
  { label: 'Status', cell: (agent) => (agent.status ? clipped(agent.status) : '—') },
  { label: 'Updated', cell: (agent) => dateTime(agent.updated_at) },
];

/**
 * The most recent jobs matching `filter`, newest first.
 * @param {string} key
 * @param {Record<string, string>} filter
 * @param {AbortSignal} signal
 */
export function jobsTable(key, filter, signal) {
  return pagedTable({
    key,
    pageSize: 10,
    signal,
    empty: 'No jobs yet.',
    /** @returns {Promise<import('./table.js').Page<JobItem>>} */
    load: (page) => call(withQuery('/api/jobs/', { ...filter, page, page_size: 10, ordering: '-created_at' }), { signal }),
    columns: [
      { label: 'Job', cell: (job) => link(`/console/jobs/${job.id}`, clipped(jobTitle(job), 'strong')) },
      { label: 'Status', cell: (job) => badge(job.status) },
      // The job's reported best_score; a job its runs evaluate reports none, and its page shows the best mean of results instead.
      { label: 'Best', numeric: true, cell: (job) => (job.best_score === null ? h('span', { class: 'muted', title: 'No best_score reported: the job\'s page shows the best mean of its results' }, score(null)) : h('span', { class: 'strong' }, score(job.best_score))) },
      { label: 'Baseline', numeric: true, cell: (job) => score(job.baseline_score) },
      { label: 'Improvement', numeric: true, cell: (job) => h('span', { class: toneOf(job.improvement) }, delta(job.improvement)) },
      { label: 'Started', cell: (job) => dateTime(job.created_at) },
    ],
  });
}

/**
 * What a job is called: its agent and kind ("Support bot · prompt tuning").
 * @param {Pick<JobItem, 'agent_display_name' | 'job_type'>} job
 */
export function jobTitle(job) {
  const kind = job.job_type ? job.job_type.replace(/_/g, ' ') : 'job';
  return job.agent_display_name ? `${job.agent_display_name} · ${kind}` : kind;
}

/** @param {number | null | undefined} value */
export function toneOf(value) {
  if (typeof value !== 'number' || value === 0) return 'neutral';
  return value > 0 ? 'better' : 'worse';
}
