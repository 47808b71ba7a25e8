// A job's progress: best score so far, counts by status, the best iteration.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { newIteration, type IterationChanges } from '../../src/domain/job.ts';
import { progressPage, progressSummary } from '../../src/views/job-progress.ts';

let created = 0;
function iteration(fields: IterationChanges) {
  created++;
  return newIteration({ id: `it-${created}`, now: new Date(Date.UTC(2026, 0, 1, 0, 0, created)).toISOString(), job: 'job', project: 'project', iterationName: `i${created}` }, fields);
}

test('best so far is the highest score up to each point, skipping null scores', () => {
  const iterations = [null, 0.5, null, 0.25, 0.75, 0.75, 0.5].map((avg_score) => iteration({ avg_score }));
  assert.equal(progressPage(iterations, 0, 10).map((point) => point.bestSoFar), [null, 0.5, 0.5, 0.5, 0.75, 0.75, 0.75]);
  // A later page still counts the earlier iterations.
  const page = progressPage(iterations, 3, 2);
  assert.equal(page.map((point) => [point.iteration, point.bestSoFar]), [[iterations[3], 0.5], [iterations[4], 0.75]]);
  assert.equal(progressPage(iterations, 7, 5), []);
  assert.equal(progressPage([], 0, 5), []);
});

test('a negative score is a score', () => {
  const iterations = [-2, -3, -1].map((avg_score) => iteration({ avg_score }));
  assert.equal(progressPage(iterations, 0, 3).map((point) => point.bestSoFar), [-2, -2, -1]);
  assert.is(progressSummary(iterations).best, iterations[2]);
});

test('the summary counts statuses and names the best iteration, the earliest of a tie', () => {
  const iterations = [
    iteration({ avg_score: 0.5, status: 'keep' }),
    iteration({ avg_score: 0.9, status: 'discard' }),
    iteration({ avg_score: null, status: null }),
    iteration({ avg_score: 0.9, status: 'keep' }),
    iteration({ avg_score: 0.1 }),
  ];
  assert.equal(progressSummary(iterations), { counts: { keep: 2, discard: 1, unset: 2 }, best: iterations[1] });
  assert.equal(progressSummary([iteration({ avg_score: null })]), { counts: { keep: 0, discard: 0, unset: 1 }, best: null });
  assert.equal(progressSummary([]), { counts: { keep: 0, discard: 0, unset: 0 }, best: null });
});

test('a progress page size default above its maximum is refused at boot', () => {
  assert.throws(() => loadConfig({ LIMIT_PROGRESS_PAGE_SIZE_DEFAULT: '20', LIMIT_PROGRESS_PAGE_SIZE_MAX: '10' }), (error: unknown) => error instanceof ConfigError);
  assert.is(loadConfig({ LIMIT_PROGRESS_PAGE_SIZE_MAX: '20000' }).limits.progressPageSizeMax, 20_000);
});

test.run();
