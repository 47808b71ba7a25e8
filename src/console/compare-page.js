// Two iterations of a job compared (the iteration comparison endpoint): the score change, each
// dimension's change, and the code diff between the two candidates.
import { call } from './api.js';
import { clipped, h, pageHead, section, stat } from './dom.js';
import { dateTime, delta, score } from './format.js';
import { jobTitle, toneOf } from './project-page.js';
import { table } from './table.js';

/**
 * @typedef {{ id: string, iteration_name: string, job: string, order: number | null, status: string | null, avg_score: number | null, created_at: string }} Side
 * @typedef {{ name: string, from: number | null, to: number | null, delta: number | null }} Dimension
 * @typedef {{ from: Side, to: Side, avg_score: { from: number | null, to: number | null, delta: number | null }, dimensions: Dimension[], code_diff: string | null }} Comparison
 */

/** @param {import('./router.js').PageContext} context */
export async function comparePage({ params, signal }) {
  /** @type {Comparison} */
  const comparison = await call(`/api/job-iterations/${params.id}/compare/${params.other_id}/`, { signal });
  const { from, to } = comparison;
  /** @type {import('./project-page.js').JobItem} */
  const job = await call(`/api/jobs/${from.job}/`, { signal });
  /** @type {{ name: string }} */
  const project = await call(`/api/projects/${job.project}/`, { signal });
  const largest = Math.max(0, ...comparison.dimensions.map((dimension) => Math.abs(dimension.delta ?? 0)));

  return h('div', {},
    pageHead({
      trail: [['/', 'Projects'], [`/console/projects/${job.project}`, project.name], [`/console/jobs/${from.job}`, jobTitle(job)]],
      title: `${from.iteration_name} → ${to.iteration_name}`,
      kind: 'Iteration comparison',
    }),
    h('div', { class: 'stats' },
      stat('Score change', h('span', { class: toneOf(comparison.avg_score.delta) }, delta(comparison.avg_score.delta)), `${score(comparison.avg_score.from)} → ${score(comparison.avg_score.to)}`, 'primary'),
      sideStat('From', from),
      sideStat('To', to)),
    section('Dimensions', comparison.dimensions.length === 0
      ? h('p', { class: 'empty' }, 'Neither iteration has dimension scores.')
      : table([
        { label: 'Dimension', cell: (dimension) => clipped(dimension.name, 'strong') },
        { label: from.iteration_name, numeric: true, cell: (dimension) => score(dimension.from) },
        { label: to.iteration_name, numeric: true, cell: (dimension) => score(dimension.to) },
        { label: 'Change', numeric: true, cell: (dimension) => h('span', { class: toneOf(dimension.delta) }, delta(dimension.delta)) },
        { label: '', cell: (dimension) => deltaBar(dimension.delta, largest) },
      ], comparison.dimensions)),
    section('Code', codeDiff(comparison.code_diff)));
}

/**
 * @param {string} label
 * @param {Side} side
 */
function sideStat(label, side) {
  return stat(label, clipped(side.iteration_name),
    [`${score(side.avg_score)} · ${side.status ?? 'undecided'} · `, h('span', { class: 'muted' }, dateTime(side.created_at))]);
}

/**
 * A bar whose length is the change, left for worse and right for better.
 * @param {number | null} change
 * @param {number} largest
 */
function deltaBar(change, largest) {
  const bar = h('span', { class: `delta-bar ${toneOf(change)}` });
  const share = largest > 0 && typeof change === 'number' ? Math.abs(change) / largest : 0;
  bar.style.width = `${(share * 50).toFixed(2)}%`;
  bar.style.marginLeft = typeof change === 'number' && change < 0 ? `${(50 - share * 50).toFixed(2)}%` : '50%';
  return h('span', { class: 'delta-track' }, bar);
}

/**
 * The unified diff, one line per row, coloured by its first character.
 * @param {string | null} diff
 */
function codeDiff(diff) {
  if (diff === null) return h('p', { class: 'empty' }, 'The code diff is too long to show here.');
  if (diff === '') return h('p', { class: 'empty' }, 'The two iterations have the same code.');
  const lines = diff.replace(/\n$/, '').split('\n');
  return h('pre', { class: 'diff' }, lines.map((line) => h('span', { class: `diff-line ${lineKind(line)}` }, line, '\n')));
}

/** @param {string} line */
function lineKind(line) {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-added';
  if (line.startsWith('-')) return 'diff-removed';
  return 'diff-context';
}

