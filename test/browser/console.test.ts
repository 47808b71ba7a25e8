// The console in a real browser: headless Chromium signs in (email and password, then an API
// key), walks every page against a seeded service and checks what each shows, follows a running
// job live (its new iterations and results), an iteration's results with their filters, measures the two heavy pages, checks reload and back/forward, and plants markup and
// script in every kind of field to see that none of it runs. A full-page screenshot of each page
// is saved in the folder printed at the start, for a person to look at.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { browserTimeoutMs, launchChromium } from '../helpers/chromium.ts';
import { start, type Running } from '../helpers/service.ts';
import { bigJobIterations, bigTraceSpans, caseResult, hostile, password, resultDatapoints, resultErrors, resultMissing, resultRetried, runningIterations, seedConsole, writeResults, type Seeded } from './console-seed.ts';

const screenshots = process.env.CONSOLE_SCREENSHOTS ?? join(tmpdir(), 'overmind-console-screenshots');
/** What the issue asks of the two heavy pages, and of a live iteration. */
const interactiveMs = 1_000;

interface Context {
  running: Running;
  seeded: Seeded;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Messages the pages logged as errors (a CSP refusal would be one). */
  problems: string[];
}

const walk = suite<Context>('console');

walk.before(async (context) => {
  mkdirSync(screenshots, { recursive: true });
  console.log(`\n  console screenshots: ${screenshots}`);
  context.running = await start();
  context.seeded = await seedConsole(context.running.client);
  context.browser = await launchChromium();
  context.problems = [];
  context.context = await context.browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.page = await openPage(context.context, context.problems);
});

walk.after(async (context) => {
  await context.browser?.close();
  await context.running?.stop();
});

async function openPage(browserContext: BrowserContext, problems: string[]): Promise<Page> {
  const page = await browserContext.newPage();
  page.setDefaultTimeout(browserTimeoutMs);
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // The browser notes every answer that is not a success (a wrong password's 401, a 404 the
    // test asks for); what those pages show is checked by the tests themselves.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
  });
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return page;
}

/** Waits until the page and every table in it have their data. */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const view = document.getElementById('view');
    return !!view && !view.querySelector(':scope > p.muted') && document.querySelector('[aria-busy]') === null;
  });
}

async function visit(context: Context, path: string): Promise<void> {
  await context.page.goto(context.running.url + path);
  await settled(context.page);
  // Conditions on the chart must be synchronous (waitForFunction takes a returned promise as a
  // truthy answer), so the chart's reader is loaded into the page once per document.
  await context.page.evaluate(async () => {
    (window as any).chartDataOf = (await import('/static/console/score-chart.js' as string)).chartData;
  });
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}

/** The text of each cell of each row of the table under `key`. */
function rows(page: Page, key: string): Promise<string[][]> {
  return page.locator(`[data-table="${key}"] tbody tr`).evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));
}

type ChartData = (number | null)[][];

/** What the score chart draws: x, discard, undecided, keep, best so far, baseline. */
function chartData(page: Page): Promise<ChartData | undefined> {
  return page.evaluate(async () => {
    const { chartData: read } = await import('/static/console/score-chart.js' as string);
    return read(document.querySelector('.score-chart')) as ChartData | undefined;
  });
}

async function signIn(page: Page, email: string, secret: string): Promise<void> {
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', secret);
  await page.click('form:not([hidden]) button[type=submit]');
}

/** Signs in and waits for the page behind the sign-in card: until it goes, nothing is loading yet, so `settled` alone could pass too early. */
async function signInAndSettle(page: Page, email: string, secret: string): Promise<void> {
  await signIn(page, email, secret);
  await page.locator('.sign-in-card').waitFor({ state: 'hidden' });
  await settled(page);
}

function assertNoProblems(context: Context): void {
  assert.equal(context.problems, [], `the pages reported: ${context.problems.join('\n')}`);
}

walk('sign in with email and password; a wrong password says why; sign-out forgets the token', async (context) => {
  const { page, running } = context;
  await page.goto(`${running.url}/`);
  await page.locator('.sign-in-card').waitFor();
  await shoot(page, '01-sign-in');
  await signIn(page, 'ada@example.com', 'wrong password');
  await page.getByText('No active account found with the given credentials').waitFor();
  assert.is(await page.evaluate(() => sessionStorage.length), 0, 'nothing kept after a failed sign-in');

  await signInAndSettle(page, 'ada@example.com', password);
  assert.equal((await rows(page, 'projects')).map((row) => row[0]), [hostile('project name'), 'Customer support']);
  assert.is(await page.locator('#who-name').textContent(), 'ada@example.com');
  assert.ok(await page.evaluate(() => sessionStorage.getItem('overmind.console.token')), 'the token is kept for the tab');
  assert.is(await page.evaluate(() => localStorage.length), 0, 'and nowhere that outlives the tab');
  await shoot(page, '02-projects');

  await page.click('#sign-out');
  await page.locator('.sign-in-card').waitFor();
  assert.is(await page.evaluate(() => sessionStorage.getItem('overmind.console.token')), null, 'sign-out forgets the token');
  await page.reload();
  await page.locator('.sign-in-card').waitFor();

  // A token the service no longer takes (expired, or made up) brings the sign-in back.
  await page.evaluate(() => sessionStorage.setItem('overmind.console.token', 'not-a-token'));
  await page.reload();
  await page.getByText('Your session has ended: sign in again to see this page.').waitFor();
  assert.is(await page.evaluate(() => sessionStorage.getItem('overmind.console.token')), null, 'the refused token is forgotten');

  await signInAndSettle(page, 'ada@example.com', password);
  assertNoProblems(context);
});

walk('sign in with an API key: it sees its own project only', async (context) => {
  const keyContext = await context.browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await openPage(keyContext, context.problems);
    await page.goto(`${context.running.url}/`);
    await page.getByRole('tab', { name: 'API key' }).click();
    await page.fill('input[name=api_key]', 'ovr_not-a-key');
    await page.click('form:not([hidden]) button[type=submit]');
    await page.locator('.form-status.error-text').waitFor();
    await page.fill('input[name=api_key]', context.seeded.apiKey);
    await page.click('form:not([hidden]) button[type=submit]');
    await settled(page);
    assert.equal((await rows(page, 'projects')).map((row) => row[0]), ['Customer support']);
    await page.goto(`${context.running.url}/console/projects/${context.seeded.hostileProject.id}`);
    await page.locator('.error').waitFor();
    assert.is(await page.locator('.error').textContent(), 'Not found.', 'another project is not found, as the API says');
  } finally {
    await keyContext.close();
  }
  assertNoProblems(context);
});

walk('a project: its agents (long names cut, whole in the tooltip), recent jobs and members', async (context) => {
  const { page, seeded } = context;
  await visit(context, '/');
  await page.getByRole('link', { name: 'Customer support' }).click();
  await settled(page);
  assert.is(new URL(page.url()).pathname, `/console/projects/${seeded.project.id}`);
  assert.is(await page.locator('h1').textContent(), 'Customer support');
  const agents = await rows(page, 'agents');
  assert.equal(agents.map((row) => row[0]).sort(), [seeded.longAgent.name, 'Support bot'].sort());
  const long = page.locator('[data-table="agents"] .clip', { hasText: 'triage-' });
  assert.is(await long.getAttribute('title'), seeded.longAgent.name);
  assert.ok(await long.evaluate((element) => element.scrollWidth > element.clientWidth), 'the long name is cut with an ellipsis');
  const jobs = await rows(page, 'jobs');
  assert.is(jobs.length, 2);
  assert.ok(jobs.some((row) => row[0] === 'Support bot · prompt tuning' && row[1] === 'running'), 'the running job');
  assert.equal((await rows(page, 'members')).map((row) => row[0]).sort(), [...seeded.members].sort());
  await shoot(page, '03-project');
  assertNoProblems(context);
});

walk('an agent: fields, eval spec, dataset versions with the active one marked, and activation', async (context) => {
  const { page, seeded } = context;
  await page.getByRole('link', { name: 'Support bot', exact: true }).click();
  await settled(page);
  assert.is(new URL(page.url()).pathname, `/console/agents/${seeded.agent.id}`);
  assert.is(await page.locator('h1').textContent(), 'Support bot');
  assert.match((await page.locator('pre.code').textContent()) ?? '', /"structure_weight": 25/);
  const versions = await rows(page, 'datasets');
  assert.equal(versions.map((row) => [row[0], row[5]]), [['v3', 'Activate'], ['v2', 'active'], ['v1', 'Activate']]);
  assert.ok(await page.getByText('support, prod', { exact: true }).isVisible(), 'tags read as a list, not as JSON');
  await shoot(page, '04-agent');

  await page.locator('[data-table="datasets"] tbody tr', { hasText: 'v3' }).getByRole('button', { name: 'Activate' }).click();
  await page.waitForFunction(() => document.querySelector('[data-table="datasets"] tr.active-row')?.textContent?.includes('v3'));
  const agent = await seeded.ada.client.get(`/api/agents/${seeded.agent.id}/`);
  assert.is(agent.body.active_dataset, seeded.datasets[2]!.id, 'the API says v3 is active');
  // Back as it was, for the pages that follow.
  assert.is((await seeded.ada.client.post(`/api/datasets/${seeded.datasets[1]!.id}/activate/`)).status, 200);
  assertNoProblems(context);
});

walk('a dataset version: datapoints paged and searchable, the page kept in the URL', async (context) => {
  const { page, seeded } = context;
  await visit(context, `/console/datasets/${seeded.datasets[2]!.id}`);
  assert.is(await page.locator('h1').textContent(), 'Dataset v3 · support v3');
  assert.is((await rows(page, 'datapoints')).length, 25);
  assert.is(await page.locator('[data-table="datapoints"] .pager-summary').textContent(), '1–25 of 40');
  await page.locator('[data-table="datapoints"]').getByRole('button', { name: 'Next →' }).click();
  await settled(page);
  const second = await rows(page, 'datapoints');
  assert.equal(second.map((row) => row[0]), Array.from({ length: 15 }, (_, i) => String(25 + i)));
  assert.is(new URL(page.url()).searchParams.get('datapoints_page'), '2');
  await page.reload();
  await settled(page);
  assert.equal(await rows(page, 'datapoints'), second, 'reload shows the same page');

  await page.fill('[data-table="datapoints"] input[type=search]', 'admin');
  await page.waitForFunction(() => document.querySelector('[data-table="datapoints"] .pager-summary')?.textContent === '1–13 of 13');
  await settled(page);
  const admins = await rows(page, 'datapoints');
  assert.is(admins.length, 13);
  assert.ok(admins.every((row) => row[3] === 'admin'), 'every row is an admin');
  await page.fill('[data-table="datapoints"] input[type=search]', '');
  await page.waitForFunction(() => document.querySelector('[data-table="datapoints"] .pager-summary')?.textContent === '1–25 of 40');
  await settled(page);
  await shoot(page, '05-dataset');
  assertNoProblems(context);
});

walk('a dataset diff: both content hashes, the counts, and the changes filtered by kind', async (context) => {
  const { page, seeded } = context;
  const [v1, v2] = seeded.datasets;
  await visit(context, `/console/datasets/${v1!.id}`);
  await page.selectOption('select[aria-label="Version to compare with"]', v2!.id);
  await page.getByRole('button', { name: 'Show diff' }).click();
  await settled(page);
  assert.is(new URL(page.url()).pathname, `/console/datasets/${v1!.id}/diff/${v2!.id}`);
  const diff = await seeded.ada.client.get(`/api/datasets/${v1!.id}/diff/${v2!.id}/`, { page_size: 100 });
  assert.is(diff.status, 200, diff.text);
  const { summary } = diff.body;
  const hashes = await page.locator('[data-hash]').allTextContents();
  assert.equal(hashes, [summary.from.content_hash, summary.to.content_hash], 'the two content hashes');
  assert.is.not(hashes[0], hashes[1]);
  const stats = await page.locator('.stats .stat-value').allTextContents();
  assert.equal(stats, [`+${summary.added}`, summary.removed > 0 ? `−${summary.removed}` : '0', String(summary.changed), String(summary.unchanged)]);
  const tones = await page.locator('.stats .stat').evaluateAll((cards) => cards.map((card) => [...card.classList].find((name) => name.startsWith('tone-')) ?? ''));
  assert.equal(tones, [summary.added > 0 ? 'tone-added' : '', summary.removed > 0 ? 'tone-removed' : '', summary.changed > 0 ? 'tone-changed' : '', ''], 'coloured only where something happened');
  assert.is((await rows(page, 'changes')).length, Math.min(25, diff.body.count));
  await shoot(page, '06-dataset-diff');

  await page.getByRole('button', { name: 'Added' }).click();
  await settled(page);
  const added = await rows(page, 'changes');
  assert.is(added.length, summary.added);
  assert.ok(added.every((row) => row[0] === 'added'));
  assert.is(new URL(page.url()).searchParams.get('change'), 'added');
  assertNoProblems(context);
});

walk('a running job: scores first, every iteration in the chart with its decision and the best so far, and the table', async (context) => {
  const { page, seeded } = context;
  await visit(context, `/console/jobs/${seeded.runningJob.id}`);
  const progress = await seeded.ada.client.get(`/api/jobs/${seeded.runningJob.id}/progress/`, { page_size: 10_000 });
  assert.is(progress.status, 200, progress.text);
  const data = (await chartData(page))!;
  assert.ok(data, 'the chart has data');
  assert.equal(data[0], Array.from({ length: runningIterations }, (_, i) => i + 1), 'one point per iteration, in order');
  const points = progress.body.results as { avg_score: number; status: string | null; best_so_far: number }[];
  assert.equal(data[1], points.map((point) => (point.status === 'discard' ? point.avg_score : null)), 'discard');
  assert.equal(data[2], points.map((point) => (point.status === null ? point.avg_score : null)), 'undecided');
  assert.equal(data[3], points.map((point) => (point.status === 'keep' ? point.avg_score : null)), 'keep');
  assert.equal(data[4], points.map((point) => point.best_so_far), 'best so far, as the progress endpoint says');
  assert.ok(data[5]!.every((value) => value === 0.58), 'the baseline');
  const best = Math.max(...seeded.runningIterations.map((iteration) => iteration.avg_score));
  assert.is(await page.locator('.stat.primary .stat-value').textContent(), String(best), 'the best score is the first number');
  assert.is((await rows(page, 'iterations')).length, runningIterations);
  await page.locator('.live[data-state="live"]').waitFor();
  await shoot(page, '07-job');
  assertNoProblems(context);
});

walk('a running job updates live: a new iteration is on the page within a second, and so is its decision', async (context) => {
  const { page, seeded } = context;
  const sent = performance.now();
  const created = await seeded.ada.client.post('/api/job-iterations/', {
    job: seeded.runningJob.id, iteration_name: 'live-candidate', order: runningIterations, avg_score: 0.97, dimension_scores: { accuracy: 0.99 },
  });
  assert.is(created.status, 201, created.text);
  await page.waitForFunction(
    (count) => {
      const data = (window as any).chartDataOf(document.querySelector('.score-chart'));
      return data?.[0].length === count && document.querySelector('[data-table="iterations"]')?.textContent?.includes('live-candidate');
    },
    runningIterations + 1,
    { timeout: 10_000, polling: 10 },
  );
  const liveMs = performance.now() - sent;
  console.log(`  a new iteration appeared on the running job's page in ${liveMs.toFixed(0)} ms`);
  assert.ok(liveMs < interactiveMs, `the new iteration appeared in ${liveMs.toFixed(0)} ms`);
  const data = (await chartData(page))!;
  assert.is(data[2]!.at(-1), 0.97, 'undecided, at its score');
  const legend = () => page.locator('.score-chart .u-legend .u-series').evaluateAll((rows) =>
    rows.map((row) => `${row.querySelector('.u-label')?.textContent}: ${row.querySelector('.u-value')?.textContent}`));
  const latest = await legend();
  assert.equal(latest.slice(0, 5), [`Iteration: #${runningIterations + 1} live-candidate`, 'discard: ', 'no decision: 0.97', 'keep: ', 'best so far: 0.97'],
    'away from the chart, the legend reads the latest iteration: ' + JSON.stringify(latest));
  assert.is(data[4]!.at(-1), 0.97, 'and the new best so far');
  assert.is(await page.locator('.stat.primary .stat-note').textContent(), 'at live-candidate');

  assert.is((await seeded.ada.client.patch(`/api/job-iterations/${created.body.id}/`, { status: 'keep' })).status, 200);
  await page.waitForFunction(() => {
    return (window as any).chartDataOf(document.querySelector('.score-chart'))?.[3].at(-1) === 0.97;
  }, undefined, { timeout: 5_000 });
  assert.equal((await legend()).slice(0, 4), [`Iteration: #${runningIterations + 1} live-candidate`, 'discard: ', 'no decision: ', 'keep: 0.97']);
  assertNoProblems(context);
});

walk('two iterations compared: score change, dimension deltas and the code diff', async (context) => {
  const { page, seeded } = context;
  const [from, to] = [seeded.runningIterations[3]!, seeded.runningIterations[8]!];
  await page.locator('[data-table="iterations"] tr', { hasText: from.iteration_name }).getByRole('checkbox').check();
  await settled(page);
  await page.locator('.score-chart .u-over').waitFor();
  await page.locator('[data-table="iterations"] tr', { hasText: to.iteration_name }).getByRole('checkbox').check();
  await settled(page);
  await page.getByRole('button', { name: 'Compare →' }).click();
  await settled(page);
  assert.is(new URL(page.url()).pathname, `/console/job-iterations/${from.id}/compare/${to.id}`);
  const comparison = await seeded.ada.client.get(`/api/job-iterations/${from.id}/compare/${to.id}/`);
  assert.is(comparison.status, 200, comparison.text);
  assert.is(await page.locator('h1').textContent(), `${from.iteration_name} → ${to.iteration_name}`);
  const dimensions = await page.locator('table.data tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent)));
  const format = (value: number) => (value === 0 ? '±0' : `${value > 0 ? '+' : '−'}${Number(Math.abs(value).toFixed(4))}`);
  assert.equal(dimensions, comparison.body.dimensions.map((dimension: { name: string; from: number; to: number; delta: number }) =>
    [dimension.name, String(dimension.from), String(dimension.to), format(dimension.delta)]), 'every dimension with its delta');
  const diffLines = await page.locator('pre.diff .diff-line').allTextContents();
  assert.equal(diffLines.map((line) => line.replace(/\n$/, '')), (comparison.body.code_diff as string).replace(/\n$/, '').split('\n'), 'the code diff, line by line');
  assert.ok(await page.locator('.diff-added').count() > 0 && await page.locator('.diff-removed').count() > 0, 'added and removed lines marked');
  await shoot(page, '08-compare');
  assertNoProblems(context);
});

/** A summary's figures as the console writes them. */
const three = new Intl.NumberFormat('en-US', { minimumFractionDigits: 3, maximumFractionDigits: 3 });
const onePercent = new Intl.NumberFormat('en-US', { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 });

interface Summary {
  iteration: string; datapoints: number; results: number; error_results: number; scored: number; errors: number; missing: { count: number };
  mean_score: number | null; score_ci95: { low: number; high: number } | null; pass_rate: number | null; pass_rate_ci95: { low: number; high: number } | null;
  passed: number; failed: number; dimensions: { name: string; n: number; mean: number | null; ci95: { low: number; high: number } | null }[];
}

/** What an iterations row's Mean (95% CI) and Coverage cells read for its summary. */
function resultCells(summary: Summary | undefined): [string, string] {
  if (!summary || summary.results === 0) return ['—', '—'];
  const { mean_score: mean, score_ci95: ci } = summary;
  const meanText = mean === null ? '—' : ci ? `${three.format(mean)} ± ${three.format((ci.high - ci.low) / 2)}` : three.format(mean);
  return [meanText, `${summary.scored} / ${summary.datapoints}${summary.errors > 0 ? ` ${summary.errors} errors` : ''}`];
}

const iterationColumns = { name: 2, mean: 5, coverage: 6 };

walk('a job\'s iterations show their results: coverage with errors, the mean with its interval, and results written live', async (context) => {
  const { page, seeded } = context;
  await visit(context, `/console/jobs/${seeded.runningJob.id}`);
  await page.locator('.live[data-state="live"]').waitFor();
  const headers = await page.locator('[data-table="iterations"] thead th').allTextContents();
  assert.equal([headers[iterationColumns.mean], headers[iterationColumns.coverage]], ['Mean (95% CI)', 'Coverage']);
  const answer = await seeded.ada.client.get(`/api/jobs/${seeded.runningJob.id}/results-summary/`);
  assert.is(answer.status, 200, answer.text);
  const byIteration = new Map((answer.body.iterations as Summary[]).map((summary) => [summary.iteration, summary]));
  const byName = new Map(seeded.runningIterations.map((iteration) => [iteration.iteration_name, byIteration.get(iteration.id)]));
  const shown = await rows(page, 'iterations');
  assert.equal(shown.map((row) => [row[iterationColumns.mean], row[iterationColumns.coverage]]), shown.map((row) => resultCells(byName.get(row[iterationColumns.name]!))), 'every row as its summary says');
  const cellsOf = (name: string) => shown.find((row) => row[iterationColumns.name] === name)!.slice(iterationColumns.mean, iterationColumns.coverage + 1);
  assert.is(cellsOf('candidate-23')[1], '34 / 40 3 errors', 'the showcase: 37 datapoints run, three of them errors');
  assert.is(cellsOf('candidate-24')[1], '40 / 40');
  assert.is(cellsOf('candidate-22')[1], '12 / 40');
  assert.equal(cellsOf('candidate-1'), ['—', '—'], 'no results: dashes');
  assert.match(cellsOf('candidate-23')[0]!, /^0\.\d{3} ± 0\.\d{3}$/);
  const showcase = byIteration.get(seeded.results.showcase)!;
  const meanTitle = await page.locator('[data-table="iterations"] tr', { hasText: 'candidate-23' }).locator('td').nth(iterationColumns.mean).locator('span').getAttribute('title');
  assert.ok(meanTitle?.includes(`95% CI ${Number(showcase.score_ci95!.low.toFixed(4))} to ${Number(showcase.score_ci95!.high.toFixed(4))}`), `the whole interval in the title: ${meanTitle}`);
  await shoot(page, '13-job-results');

  // Results written while the page is open reach its table without a reload.
  const live = seeded.runningIterations[20]!;
  const sent = performance.now();
  await writeResults(seeded.ada.client, live.id, seeded.results.dataset, Array.from({ length: 10 }, (_, order) => caseResult(order, 0, 21)));
  await page.waitForFunction((name) => {
    const row = [...document.querySelectorAll('[data-table="iterations"] tbody tr')].find((tr) => tr.textContent?.includes(name));
    return row?.querySelectorAll('td')[6]?.textContent === '10 / 40';
  }, live.iteration_name, { timeout: 10_000, polling: 10 });
  const liveMs = performance.now() - sent;
  console.log(`  results written to an iteration reached the job's page in ${liveMs.toFixed(0)} ms`);
  assert.ok(liveMs < interactiveMs, `the new coverage appeared in ${liveMs.toFixed(0)} ms`);
  assertNoProblems(context);
});

walk('an iteration\'s results: its summary, rows filtered and sorted (kept in the URL), each linked to its trace and datapoint', async (context) => {
  const { page, seeded } = context;
  const { showcase, dataset } = seeded.results;
  await page.locator('[data-table="iterations"] tr', { hasText: 'candidate-23' }).getByRole('link', { name: '34 / 40' }).click();
  await settled(page);
  assert.is(new URL(page.url()).pathname, `/console/job-iterations/${showcase}/results`);
  assert.is(await page.locator('h1').textContent(), 'candidate-23');
  assert.equal(await page.locator('.trail a').allTextContents(), ['Projects', 'Customer support', 'Support bot · prompt tuning']);

  const summary = (await seeded.ada.client.get(`/api/job-iterations/${showcase}/results/summary/`)).body as Summary;
  assert.equal([summary.datapoints, summary.scored, summary.errors, summary.missing.count], [resultDatapoints, 34, 3, resultMissing.length], 'the seed, as the API sums it up');
  const stats = await page.locator('.stats .stat').evaluateAll((cards) => cards.map((card) => [card.querySelector('.stat-label')?.textContent, card.querySelector('.stat-value')?.textContent, card.querySelector('.stat-note')?.textContent]));
  const judged = summary.passed + summary.failed;
  const ci = summary.pass_rate_ci95!;
  assert.equal(stats, [
    ['Mean score', three.format(summary.mean_score!), `95% CI ${three.format(summary.score_ci95!.low)}, ${three.format(summary.score_ci95!.high)}`],
    ['Pass rate', onePercent.format(summary.pass_rate!), `95% CI ${onePercent.format(ci.low)}–${onePercent.format(ci.high)} · ${summary.passed} of ${judged}`],
    ['Coverage', '34 / 40', 'datapoints scored (v3)'],
    ['Errors', '3', `datapoints · ${summary.error_results} error rows`],
    ['Missing', '3', 'datapoints without a result'],
  ]);
  const dimensions = await page.locator('section', { has: page.locator('h2', { hasText: 'Dimensions' }) }).locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  assert.equal(dimensions, summary.dimensions.map((dimension) => [dimension.name, String(dimension.n), three.format(dimension.mean!), `${three.format(dimension.ci95!.low)}, ${three.format(dimension.ci95!.high)}`]));
  assert.equal(dimensions.map((row) => [row[0], row[1]]), [['accuracy', '34'], ['tone', '34'], ['tool_use', '19']]);

  // The rows: datapoint, attempt, score, passed, status, latency, trace.
  const list = async (query: Record<string, string>) =>
    ((await seeded.ada.client.get(`/api/job-iterations/${showcase}/results/`, { page_size: 25, ...query })).body as { count: number; results: { datapoint_order: number; attempt: number; score: number | null; passed: boolean | null; status: string; error: string }[] });
  const asShown = (results: Awaited<ReturnType<typeof list>>['results']) => results.map((result) => [
    `#${result.datapoint_order}`, String(result.attempt), result.score === null ? '—' : String(result.score),
    result.passed === null ? '—' : result.passed ? 'passed' : 'failed', result.status === 'error' ? `error ${result.error}` : 'ok']);
  const shownRows = async () => (await rows(page, 'results')).map((row) => row.slice(0, 5));
  const all = await list({});
  assert.is(all.count, 34 + 3 + resultRetried.length, 'a row per run');
  assert.equal(await shownRows(), asShown(all.results), 'in datapoint order, attempts together');
  assert.equal((await rows(page, 'results')).slice(0, 4).map((row) => row[0]), ['#0', '#0', '#1', '#1']);
  assert.is(await page.locator('[data-table="results"] .pager-summary').textContent(), `1–25 of ${all.count}`);

  await page.getByRole('button', { name: 'Failed' }).click();
  await settled(page);
  const failed = await list({ passed: 'false' });
  assert.ok(failed.count > 0);
  assert.equal(await shownRows(), asShown(failed.results), 'failed rows only');
  assert.ok((await shownRows()).every((row) => row[3] === 'failed'));
  await page.getByLabel('Sort by').selectOption('-score');
  await settled(page);
  const worstFirst = await list({ passed: 'false', ordering: '-score' });
  assert.equal(await shownRows(), asShown(worstFirst.results), 'highest score first');
  const scores = (await shownRows()).map((row) => Number(row[2]));
  assert.equal(scores, [...scores].sort((a, b) => b - a));
  assert.equal([...new URL(page.url()).searchParams], [['filter', 'failed'], ['sort', '-score']]);
  await shoot(page, '14-results-failed');

  await page.reload();
  await settled(page);
  assert.equal(await shownRows(), asShown(worstFirst.results), 'reload keeps the filter and the sort');
  assert.is(await page.getByRole('button', { name: 'Failed' }).getAttribute('aria-pressed'), 'true');
  assert.is(await page.getByLabel('Sort by').inputValue(), '-score');

  await page.getByRole('button', { name: 'Errors' }).click();
  await settled(page);
  const errors = await shownRows();
  assert.equal(errors, asShown((await list({ status: 'error', ordering: '-score' })).results), 'the errors, still by score (none has one)');
  assert.equal(errors.map((row) => [row[0], row[4]]).sort(), Object.entries(resultErrors).map(([order, message]) => [`#${order}`, `error ${message}`]).sort(), 'with their messages');
  assert.ok(await page.locator('[data-table="results"] tr.error-row').count() === 3, 'marked');

  await page.getByRole('button', { name: 'All' }).click();
  await page.getByLabel('Sort by').selectOption('');
  await settled(page);
  assert.equal(await shownRows(), asShown(all.results));
  assert.is(new URL(page.url()).search, '');
  await shoot(page, '15-results');

  // A row's trace: its waterfall.
  const traced = seeded.results.traces[3]!;
  const traceLink = page.getByRole('link', { name: 'Trace of datapoint 3, attempt 0' });
  assert.is(await traceLink.getAttribute('title'), `Trace ${traced}`);
  await traceLink.click();
  await page.waitForFunction(() => document.querySelectorAll('.wf-rows .wf-row').length === 3);
  assert.is(new URL(page.url()).pathname, `/console/traces/${traced}`);
  assert.is(await page.locator('h1').textContent(), 'evaluate case 3');
  await page.goBack();
  await settled(page);
  assert.is(new URL(page.url()).pathname, `/console/job-iterations/${showcase}/results`);

  // A row's datapoint: the dataset version, at the datapoint's page, the datapoint shown whole.
  await page.locator('[data-table="results"]').getByRole('button', { name: 'Next →' }).click();
  await settled(page);
  const datapoints = (await seeded.ada.client.get(`/api/datasets/${dataset}/datapoints/`, { page_size: 100 })).body.results as { id: string; order: number; persona: string }[];
  const point = datapoints.find((datapoint) => datapoint.order === 30)!;
  const pointLink = page.getByRole('link', { name: 'Datapoint #30', exact: true });
  assert.is(await pointLink.getAttribute('title'), `Datapoint ${point.id}`);
  await pointLink.click();
  await settled(page);
  const url = new URL(page.url());
  assert.is(url.pathname, `/console/datasets/${dataset}`);
  assert.is(url.searchParams.get('datapoint'), point.id);
  assert.is(await page.locator('h1').textContent(), 'Dataset v3 · support v3');
  assert.is(await page.locator(`[data-datapoint="${point.id}"] h2`).textContent(), 'Datapoint #30');
  assert.ok((await page.locator(`[data-datapoint="${point.id}"]`).textContent())?.includes('How do I reset my password? (case 31)'), 'its input');
  assert.equal((await page.locator('[data-table="datapoints"] tr.picked-row td').allTextContents()).slice(0, 1), ['30'], 'its row marked, on its page');
  assert.is(url.searchParams.get('datapoints_page'), '2');
  await shoot(page, '16-dataset-datapoint');

  await visit(context, `/console/job-iterations/${seeded.runningIterations[0]!.id}/results`);
  assert.ok(await page.getByText('This iteration has no results yet.').isVisible(), 'an iteration without results says so');
  assertNoProblems(context);
});

walk('a job with 10,000 iterations is interactive within a second', async (context) => {
  const { page, seeded } = context;
  await visit(context, `/console/agents/${seeded.agent.id}`);
  const started = await page.evaluate(() => performance.now());
  await page.locator('[data-table="jobs"]').getByRole('link', { name: 'Support bot · model backtesting' }).click();
  // Drawn (the chart holds every point), the table filled, and then the main thread free again.
  await page.waitForFunction((count) => {
    const drawn = (window as any).chartDataOf(document.querySelector('.score-chart'))?.[0].length === count;
    return drawn && document.querySelector('[aria-busy]') === null && document.querySelector('[data-table="iterations"] tbody tr') !== null;
  }, bigJobIterations, { polling: 5 });
  const readyAt = await page.evaluate(() => new Promise<number>((resolve) => requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0))));
  const elapsed = readyAt - started;
  console.log(`  the job page with ${bigJobIterations.toLocaleString('en-US')} iterations was interactive in ${elapsed.toFixed(0)} ms`);
  assert.ok(elapsed < interactiveMs, `interactive in ${elapsed.toFixed(0)} ms`);
  assert.is(await page.locator('[data-table="iterations"] .pager-summary').textContent(), '1–25 of 10,000');
  const data = (await chartData(page))!;
  assert.is(data[0]!.length, bigJobIterations);
  assert.is(data[3]!.filter((value) => value !== null).length, Math.ceil(bigJobIterations / 7), 'every seventh is kept');
  await shoot(page, '09-job-10000');
  assertNoProblems(context);
});

walk('traces: root spans with the span filters, kept in the URL', async (context) => {
  const { page } = context;
  await visit(context, '/console/traces');
  const traceRows = await rows(page, 'traces');
  assert.is(traceRows.length, 19, 'twelve small traces, the big one, the hostile one, five of results');
  const shownIds = traceRows.map((row) => row.at(-1)!);
  assert.ok(shownIds.every((id) => /^[0-9a-f]{8}…[0-9a-f]{8}$/.test(id)), 'ids are cut in the middle, whole in the tooltip');
  assert.is(new Set(shownIds).size, 19, 'and still tell the traces apart (the seeded ids share their first characters)');
  await shoot(page, '10-traces');
  await page.check('input[name=has_error]');
  await settled(page);
  const failed = await rows(page, 'traces');
  assert.is(failed.length, 5);
  assert.ok(failed.every((row) => row[6] === 'error'));
  await page.selectOption('select[name=service_name]', 'billing');
  await settled(page);
  assert.equal((await rows(page, 'traces')).map((row) => row[0]), ['answer question 8']);
  await page.uncheck('input[name=has_error]');
  await page.fill('input[name=min_duration_ms]', '500');
  await page.press('input[name=min_duration_ms]', 'Enter');
  await settled(page);
  assert.equal((await rows(page, 'traces')).map((row) => row[0]), ['answer question 11', 'answer question 8']);
  await page.reload();
  await settled(page);
  assert.equal((await rows(page, 'traces')).map((row) => row[0]), ['answer question 11', 'answer question 8'], 'the filters survive a reload');
  assert.is(await page.inputValue('select[name=service_name]'), 'billing');
  assertNoProblems(context);
});

walk('a 2,000-span trace draws as a waterfall within a second; a span shows its attributes', async (context) => {
  const { page, seeded } = context;
  await visit(context, '/console/traces');
  const started = await page.evaluate(() => performance.now());
  await page.getByRole('link', { name: 'optimize run' }).click();
  await page.waitForFunction((count) => document.querySelectorAll('.wf-rows .wf-row').length === count, bigTraceSpans, { polling: 5 });
  const { drawnAt, answeredAt } = await page.evaluate(() => new Promise<{ drawnAt: number; answeredAt: number }>((resolve) => requestAnimationFrame(() => setTimeout(() => {
    const answer = performance.getEntriesByType('resource').filter((entry) => /\/api\/traces\/[0-9a-f]{32}\/$/.test(entry.name)).at(-1) as PerformanceResourceTiming;
    resolve({ drawnAt: performance.now(), answeredAt: answer.responseEnd });
  }, 0))));
  const elapsed = drawnAt - started;
  const drawMs = drawnAt - answeredAt;
  const buildMs = await page.locator('.waterfall').getAttribute('data-draw-ms');
  console.log(`  the ${bigTraceSpans.toLocaleString('en-US')}-span waterfall drew in ${drawMs.toFixed(0)} ms after the trace arrived (rows built in ${buildMs} ms; ${elapsed.toFixed(0)} ms from the click, the service's answer included)`);
  assert.ok(drawMs < interactiveMs, `drawn in ${drawMs.toFixed(0)} ms`);
  assert.is(new URL(page.url()).pathname, `/console/traces/${seeded.bigTraceId}`);

  // Nested by parent: the root first, each step under it, calls under their step.
  const order = await page.locator('.wf-row[data-span-id]').evaluateAll((elements) => elements.slice(0, 3).map((element) => (element as HTMLElement).dataset.spanId));
  assert.equal(order, ['0000000000000001', '0000000000000002', '0000000000000003']);
  const bars = await page.locator('.wf-bar').evaluateAll((elements) => elements.slice(0, 2).map((element) => {
    const bar = element.getBoundingClientRect();
    const track = element.parentElement!.getBoundingClientRect();
    return { left: (bar.left - track.left) / track.width, width: bar.width / track.width };
  }));
  assert.ok(Math.abs(bars[0]!.left) < 0.001 && Math.abs(bars[0]!.width - 1) < 0.001, 'the root spans the whole axis');
  assert.ok(Math.abs(bars[1]!.left - 100 / 60_000) < 0.001 && Math.abs(bars[1]!.width - 1_300 / 60_000) < 0.001, 'a step sits where it ran');

  await page.locator('.wf-row', { hasText: 'chat gpt-4o' }).first().click();
  await page.locator('.wf-detail table').first().waitFor();
  const attributes = await page.locator('.wf-detail table').first().locator('tbody tr').allTextContents();
  assert.ok(attributes.some((text) => text.includes('gen_ai.request.model') && text.includes('gpt-4o')), 'the span\'s attributes');
  await shoot(page, '11-trace');
  assertNoProblems(context);
});

walk('every page has its URL: reload shows it again, back and forward move between pages', async (context) => {
  const { page, seeded } = context;
  await visit(context, `/console/jobs/${seeded.runningJob.id}`);
  await page.getByRole('link', { name: 'Support bot' }).first().click();
  await settled(page);
  assert.is(new URL(page.url()).pathname, `/console/agents/${seeded.agent.id}`);
  await page.goBack();
  await settled(page);
  assert.is(new URL(page.url()).pathname, `/console/jobs/${seeded.runningJob.id}`);
  assert.ok(await chartData(page), 'the job page again');
  await page.goForward();
  await settled(page);
  assert.is(await page.locator('h1').textContent(), 'Support bot');
  await page.reload();
  await settled(page);
  assert.is(await page.locator('h1').textContent(), 'Support bot', 'reload keeps the page and the sign-in');
  assertNoProblems(context);
});

walk('markup and script written into any field are shown as text and never run', async (context) => {
  const { page, seeded } = context;
  const [first, second] = seeded.hostileDatasets;
  // Each page and a value it must show as written.
  const pages: [string, string][] = [
    ['/', hostile('project name')],
    [`/console/projects/${seeded.hostileProject.id}`, hostile('project description')],
    [`/console/agents/${seeded.hostileAgent.id}`, hostile('agent description')],
    [`/console/datasets/${first}`, hostile('datapoint input text')],
    [`/console/datasets/${first}/diff/${second}`, hostile('expected output 2')],
    [`/console/jobs/${seeded.hostileJob.id}`, hostile('iteration description 1')],
    [`/console/job-iterations/${seeded.hostileIterations[0]}/compare/${seeded.hostileIterations[1]}`, hostile('dimension name')],
    [`/console/job-iterations/${seeded.hostileIterations[0]}/results`, hostile('result error')],
    [`/console/traces?service_name=${encodeURIComponent(hostile('service name'))}`, hostile('span name')],
    [`/console/traces/${seeded.hostileTraceId}`, hostile('child span name')],
  ];
  for (const [path, text] of pages) {
    await visit(context, path);
    if (path.startsWith('/console/traces/')) {
      await page.locator('.wf-row[data-span-id]').first().click();
      await page.locator('.wf-detail table').first().waitFor();
      assert.ok((await page.locator('.wf-detail').textContent())?.includes(hostile('attribute value')), 'attribute values as text');
      assert.ok((await page.locator('.wf-detail').textContent())?.includes(hostile('attribute key')), 'attribute keys as text');
    }
    const found = await page.evaluate((text) => ({
      pwned: (window as { __pwned?: unknown }).__pwned,
      images: document.querySelectorAll('img').length,
      scripts: [...document.scripts].filter((script) => script.src === '' || !script.src.startsWith(location.origin)).length,
      scriptLinks: document.querySelectorAll('a[href^="javascript:"]').length,
      shown: document.body.innerText.includes(text),
    }), text);
    assert.equal(found, { pwned: undefined, images: 0, scripts: 0, scriptLinks: 0, shown: true }, `${path} shows ${text}`);
    if (path.includes('/console/jobs/')) await shoot(page, '12-hostile-job');
  }
  assertNoProblems(context);
});

walk.run();
