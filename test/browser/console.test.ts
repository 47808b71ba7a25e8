// The console in a real browser: headless Chromium signs in (email and password, then an API
// key), walks every page against a seeded service and checks what each shows, follows a running
// job live (its new iterations and results), an iteration's results with their filters (and live), two
// iterations' results compared (the verdict, flips, a scatter of every datapoint, regressions with
// their traces), a job's runs and a run's page (its progress, tasks by state, errors, iterations
// and workers, live as workers complete its tasks), a racing run's race (the chart of its
// candidates' bounds, their stops, the tasks saved, live as the race is decided) and the notice on
// a comparison a race stopped early, measures the two heavy pages, checks reload and
// back/forward, and plants markup and script in every kind of field to see that none of it runs. Every page passes axe-core (WCAG 2
// A/AA, no serious or critical violation). A full-page screenshot of each page is saved in the
// folder printed at the start, for a person to look at.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { browserTimeoutMs, launchChromium } from '../helpers/chromium.ts';
import { start, type Running } from '../helpers/service.ts';
import { assertAccessible } from './axe.ts';
import { complete, completeAll, lease } from '../helpers/run-fixtures.ts';
import {
  bigJobIterations, bigTraceSpans, caseResult, hostile, password, resultDatapoints, resultErrors, resultMissing, resultRegressed, resultRetried, resultTracedComplete,
  raceDatapoints, raceRounds, raceSeededPairs, runDatapoints, runEnded, runErrors, runHeld, runningIterations, seedConsole, writeResults, type Seeded,
} from './console-seed.ts';

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

/** Waits until the page and every table in it have their data (the job page's results cells included). */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const view = document.getElementById('view');
    return !!view && !view.querySelector(':scope > p.muted') && document.querySelector('[aria-busy], [data-pending]') === null;
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
  // From the top: scrolled, the sticky header would be drawn across the middle of a full-page shot.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
}

/** 1280 x 900 of the page from an element's top (less a margin): docs/console-race.png, a race section being below its run's head. */
async function shootFrom(page: Page, selector: string, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  const top = await page.locator(selector).evaluate((element) => element.getBoundingClientRect().top + window.scrollY);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  const y = Math.max(0, Math.min(top - 16, height - 900));
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true, clip: { x: 0, y, width: 1280, height: 900 } });
}

/** The top 1280 x 900 of the page, as the README's pictures are (docs/console-job.png, docs/console-run.png). */
async function shootTop(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 900 } });
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
  await assertAccessible(page, 'the sign-in page');
  await signIn(page, 'ada@example.com', 'wrong password');
  await page.getByText('No active account found with the given credentials').waitFor();
  assert.is(await page.evaluate(() => sessionStorage.length), 0, 'nothing kept after a failed sign-in');

  await signInAndSettle(page, 'ada@example.com', password);
  assert.equal((await rows(page, 'projects')).map((row) => row[0]), [hostile('project name'), 'Customer support', 'Returns desk']);
  assert.is(await page.locator('#who-name').textContent(), 'ada@example.com');
  assert.ok(await page.evaluate(() => sessionStorage.getItem('overmind.console.token')), 'the token is kept for the tab');
  assert.is(await page.evaluate(() => localStorage.length), 0, 'and nowhere that outlives the tab');
  await shoot(page, '02-projects');
  await assertAccessible(page, 'the projects page');

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
  assert.is(jobs.length, 3);
  assert.ok(jobs.some((row) => row[0] === 'Support bot · prompt tuning' && row[1] === 'running'), 'the running job');
  assert.ok(jobs.some((row) => row[0] === 'Support bot · judge scoring' && row[1] === 'running'), 'the job its half-way run keeps running');
  // A job that reports no best_score (its runs evaluate it) says where its best is.
  const unreported = page.locator('[data-table="jobs"] tbody tr', { hasText: 'judge scoring' }).locator('td').nth(2).locator('span');
  assert.equal([await unreported.textContent(), await unreported.getAttribute('title')], ['—', "No best_score reported: the job's page shows the best mean of its results"]);
  assert.equal((await rows(page, 'members')).map((row) => row[0]).sort(), [...seeded.members].sort());
  await shoot(page, '03-project');
  await assertAccessible(page, 'a project');
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
  await assertAccessible(page, 'an agent');

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
  await assertAccessible(page, 'a dataset version');
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
  // A datapoint that moved (one removed before it) shows both places: that alone makes it changed.
  const places = (diff.body.results as any[]).slice(0, 25).map(({ before, after }) => (before && after && before.order !== after.order ? `${before.order} → ${after.order}` : String((after ?? before).order)));
  assert.equal((await rows(page, 'changes')).map((row) => row[1]), places);
  await shoot(page, '06-dataset-diff');
  await assertAccessible(page, 'a dataset diff');

  await page.getByRole('button', { name: 'Added' }).click();
  await settled(page);
  const added = await rows(page, 'changes');
  assert.is(added.length, summary.added);
  assert.ok(added.every((row) => row[0] === 'added'));
  assert.is(new URL(page.url()).searchParams.get('change'), 'added');

  // Versions of another agent where the first datapoint is removed: the rest moved up, changed by that alone.
  const client = seeded.ada.client;
  const points = [0, 1, 2].map((i) => ({ input: { question: `q${i}` }, expected_output: `a${i}` }));
  const before = (await client.post('/api/datasets/', { agent: seeded.longAgent.id, datapoints: points })).body;
  const after = (await client.post('/api/datasets/', { agent: seeded.longAgent.id, datapoints: points.slice(1) })).body;
  await visit(context, `/console/datasets/${before.id}/diff/${after.id}`);
  assert.equal((await rows(page, 'changes')).map((row) => [row[0], row[1]]), [['removed', '0'], ['changed', '1 → 0'], ['changed', '2 → 1']]);
  assert.is(await page.locator('[data-table="changes"] tbody tr:nth-child(2) td:nth-child(2) .differs').getAttribute('title'), 'Moved from #1 to #0');
  await shoot(page, '06-dataset-diff-moved');
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
  await assertAccessible(page, 'a running job (live)');
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

  // A range dragged on the chart stays while results are written (the chart is not redrawn for them).
  const range = () => page.evaluate(async () => (await import('/static/console/score-chart.js' as string)).chartRange(document.querySelector('.score-chart')));
  const over = (await page.locator('.score-chart .u-over').boundingBox())!;
  await page.mouse.move(over.x + over.width * 0.2, over.y + over.height / 2);
  await page.mouse.down();
  await page.mouse.move(over.x + over.width * 0.6, over.y + over.height / 2, { steps: 5 });
  await page.mouse.up();
  const zoomed = await range();
  assert.ok(zoomed && zoomed.min! > 1 && zoomed.max! < runningIterations + 1, `dragged to ${JSON.stringify(zoomed)}`);
  await writeResults(seeded.ada.client, created.body.id, seeded.datasets[0]!.id, [{ datapoint_order: 0, attempt: 0, score: 0.5, passed: false }]);
  await page.waitForFunction(() => [...document.querySelectorAll('[data-table="iterations"] tbody tr')].some((tr) => tr.textContent?.includes('live-candidate') && tr.textContent.includes('1 / 20')), undefined, { timeout: 10_000 });
  assert.equal(await range(), zoomed, 'the same range after the results came');
  await page.locator('.score-chart .u-over').dblclick();

  // A kept range is cut to the iterations left: past them (some deleted), the chart shows them all, not an empty plot.
  await page.evaluate(async () => {
    const { scoreChart } = await import('/static/console/score-chart.js' as string);
    const points = Array.from({ length: 10 }, (_, i) => ({ id: `p${i}`, order: i, iteration_name: `p${i}`, avg_score: i / 10, status: null, created_at: '', best_so_far: i / 10 }));
    const chart = scoreChart({ points, baseline: null, signal: new AbortController().signal, onPick: Function.prototype });
    chart.element.id = 'kept-range';
    document.body.prepend(chart.element);
    (window as any).keptChart = chart;
    // Drawn at its fitted width before it is dragged on.
    await new Promise((resolve) => setTimeout(resolve, 100));
  });
  const keptBox = (await page.locator('#kept-range .u-over').boundingBox())!;
  await page.mouse.move(keptBox.x + keptBox.width * 0.7, keptBox.y + keptBox.height / 2);
  await page.mouse.down();
  await page.mouse.move(keptBox.x + keptBox.width * 0.95, keptBox.y + keptBox.height / 2, { steps: 5 });
  await page.mouse.up();
  const cut = await page.evaluate(async () => {
    const { chartRange } = await import('/static/console/score-chart.js' as string);
    const element = document.getElementById('kept-range')!;
    const dragged = chartRange(element);
    const chart = (window as any).keptChart;
    // Fewer iterations than the range starts at: as many as lie wholly before it.
    const left = Array.from({ length: Math.floor(dragged.min) }, (_, i) => ({ id: `p${i}`, order: i, iteration_name: `p${i}`, avg_score: i / 10, status: null, created_at: '', best_so_far: i / 10 }));
    chart.update(left, null);
    // uPlot applies new scales in a microtask.
    await new Promise((resolve) => setTimeout(resolve, 0));
    const afterDelete = chartRange(element);
    element.remove();
    return { dragged, afterDelete, left: left.length };
  });
  assert.ok(cut.dragged.min >= 3 && cut.dragged.max > cut.dragged.min, `dragged to ${JSON.stringify(cut.dragged)}`);
  assert.equal(cut.afterDelete, { min: 1, max: cut.left }, `the ${cut.left} iterations left, all shown`);
  assertNoProblems(context);
});

walk('two iterations without results compared: "not comparable" plainly, then what they report (score, dimension deltas) and the code diff', async (context) => {
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
  // Neither has results: one plain block with the API's reason, and nothing drawn from results.
  assert.is(comparison.body.results.comparable, false);
  const verdict = page.locator('#view .block').first();
  assert.is(await verdict.getAttribute('data-verdict'), 'not_comparable', 'the first block says so');
  assert.is(await verdict.locator('.verdict-sentence').textContent(), `Not comparable: ${comparison.body.results.reason}.`);
  assert.equal(await page.locator('[data-flips], [data-scatter], .scatter, .dimensions-slot, select[name=confidence]').count(), 0, 'no flips, scatter, dimensions of results or confidence');
  const dimensions = await page.locator('[data-reported] table.data tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent)));
  assert.equal(dimensions, comparison.body.dimensions.map((dimension: { name: string; from: number; to: number; delta: number }) =>
    [dimension.name, String(dimension.from), String(dimension.to), scoreDelta(dimension.delta)]), 'every dimension with its delta');
  assert.is(await page.locator('[data-reported] .stat.primary .stat-value').textContent(), scoreDelta(comparison.body.avg_score.delta), 'the avg_score change');
  const diffLines = await page.locator('pre.diff .diff-line').allTextContents();
  assert.equal(diffLines.map((line) => line.replace(/\n$/, '')), (comparison.body.code_diff as string).replace(/\n$/, '').split('\n'), 'the code diff, line by line');
  assert.ok(await page.locator('.diff-added').count() > 0 && await page.locator('.diff-removed').count() > 0, 'added and removed lines marked');
  await shoot(page, '08-compare');
  await assertAccessible(page, 'two iterations compared, not comparable');
  assertNoProblems(context);
});

/** A change as format.js's `delta` writes it (up to four decimals), and a score as `score` does. */
const scoreDelta = (value: number) => (value === 0 ? '±0' : `${value > 0 ? '+' : '−'}${Number(Math.abs(value).toFixed(4))}`);
const scoreText = (value: number | null) => (value === null ? '—' : new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 }).format(value));
/** A time as format.js's `dateTime` writes it. */
const dateText = (iso: string) => new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'medium' }).format(new Date(iso));
/** A change of means as `meanDelta` writes it: three decimals, signed unless it rounds to 0. */
const meanDelta = (value: number) => {
  const text = three.format(Math.abs(value));
  return Number(text) === 0 ? text : `${value > 0 ? '+' : '−'}${text}`;
};
const pValue = (value: number) => (value < 0.001 ? '< 0.001' : three.format(value));
const pStatement = (value: number) => (value < 0.001 ? 'p < 0.001' : `p = ${three.format(value)}`);
const confidenceLevel = (value: number) => new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 }).format(value);

interface Interval { low: number; high: number }
interface Moved { datapoint: string; datapoint_order: number; score_from: number; score_to: number; delta: number; trace_id_from: string | null; trace_id_to: string | null }
interface ResultsComparison {
  comparable: true; confidence: number; dataset: { id: string; version: number }; n_paired: number; missing_in_from: number; missing_in_to: number;
  score: { mean_from: number; mean_to: number; delta: number; ci95: Interval | null; p_value: number };
  passed: { n: number; pass_rate_from: number; pass_rate_to: number; pass_to_fail: number; fail_to_pass: number; mcnemar_p_value: number; mcnemar_mid_p_value: number } | null;
  dimensions: { name: string; n: number; delta: number; ci95: Interval | null; p_value: number; p_value_holm: number }[];
  verdict: 'improved' | 'regressed' | 'no_detectable_difference' | 'insufficient_data'; regressions: Moved[]; improvements: Moved[];
}
interface Paired { datapoint: string; datapoint_order: number; score_from: number | null; score_to: number | null; change: string; trace_id_from: string | null; trace_id_to: string | null }

/** The verdict in words, as the compare page must write it from the API's answer. */
function verdictSentence(results: ResultsComparison, from: string, to: string): string {
  const { score, n_paired: paired } = results;
  const label = `${confidenceLevel(results.confidence)} CI`;
  const bounds = score.ci95 ? `${meanDelta(score.ci95.low)} to ${meanDelta(score.ci95.high)}` : '';
  const datapoints = `${paired.toLocaleString('en-US')} paired ${paired === 1 ? 'datapoint' : 'datapoints'}`;
  switch (results.verdict) {
    case 'improved': return `${to} is better than ${from} by ${meanDelta(score.delta)} (${label} ${bounds}, ${pStatement(score.p_value)}) on ${datapoints}.`;
    case 'regressed': return `${to} is worse than ${from} by ${meanDelta(score.delta)} (${label} ${bounds}, ${pStatement(score.p_value)}) on ${datapoints}.`;
    case 'no_detectable_difference': return `No detectable difference between ${from} and ${to}: Δ ${meanDelta(score.delta)} (${label} ${bounds}) on ${datapoints}.`;
    default: return `Too few paired datapoints for a verdict: ${paired.toLocaleString('en-US')} paired, at least 10 are needed.`;
  }
}

/** What a row's trace cell reads: a link per side that has a trace. */
function traceCell(row: { trace_id_from: string | null; trace_id_to: string | null }): string {
  if (!row.trace_id_from && !row.trace_id_to) return '—';
  return `${row.trace_id_from ? 'from' : 'from: —'} · ${row.trace_id_to ? 'to' : 'to: —'}`;
}

/** The notes of the flips' cards that do not fit (cut with an ellipsis). */
function clippedNotes(page: Page): Promise<string[]> {
  return page.locator('[data-flips] .stat-note').evaluateAll((notes) => notes.filter((note) => note.scrollWidth > note.clientWidth).map((note) => note.textContent ?? ''));
}

/** The cells of each row of the table in the section titled `title`. */
function sectionRows(page: Page, title: string): Promise<string[][]> {
  return page.locator('section', { has: page.locator('h2', { hasText: title }) }).locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));
}

walk('two iterations\' results compared: the verdict first, the flips, every datapoint in a scatter (a mark shows its datapoint and both traces), regressions, dimensions, and the confidence in the URL', async (context) => {
  const { page, seeded } = context;
  const { showcase, complete, dataset } = seeded.results;
  const [fromName, toName] = ['candidate-23', 'candidate-24'];
  const path = `/console/job-iterations/${showcase}/compare/${complete}`;
  await visit(context, path);
  const answer = await seeded.ada.client.get(`/api/job-iterations/${showcase}/compare/${complete}/`);
  assert.is(answer.status, 200, answer.text);
  const results = answer.body.results as ResultsComparison;
  assert.is(results.verdict, 'improved', 'the seed makes candidate-24 better');

  // The verdict leads, in words, with the API's numbers; then flips, scatter, regressions, dimensions, what the iterations report.
  assert.is(await page.locator('#view .block').first().getAttribute('data-verdict'), 'improved', 'the first block is the verdict');
  const sentence = await page.locator('.verdict-sentence').textContent();
  assert.is(sentence, verdictSentence(results, fromName, toName));
  assert.match(sentence!, /^candidate-24 is better than candidate-23 by \+0\.\d{3} \(95% CI \+0\.\d{3} to \+0\.\d{3}, p [=<] 0\.\d{3}\) on 34 paired datapoints\.$/);
  assert.equal([results.missing_in_from, results.missing_in_to], [6, 0], 'candidate-24 scored six datapoints candidate-23 did not (three errors, three missing)');
  assert.is(await page.locator('[data-unpaired]').textContent(), 'Not paired: 6 scored by candidate-24 only (never imputed).');
  assert.ok((await page.locator('.verdict-notes').first().textContent())?.startsWith(`Mean score on the paired datapoints ${three.format(results.score.mean_from)} → ${three.format(results.score.mean_to)}`), 'the paired means');
  const tops = await Promise.all(['[data-verdict]', '[data-flips]', '[data-scatter]', 'section:has(> h2:text-is("Regressions"))', '.dimensions-slot', '[data-reported]'].map(async (selector) => (await page.locator(selector).boundingBox())!.y));
  assert.equal(tops, [...tops].sort((a, b) => a - b), `in that order down the page: ${tops.join(', ')}`);

  // Flips.
  const flips = results.passed!;
  assert.ok(flips.pass_to_fail > 0 && flips.fail_to_pass > 0, 'the seed flips both ways');
  const flipStats = await page.locator('[data-flips] .stat').evaluateAll((cards) => cards.map((card) => [card.querySelector('.stat-label')?.textContent, card.querySelector('.stat-value')?.textContent]));
  assert.equal(flipStats, [
    ['Pass rate', `${onePercent.format(flips.pass_rate_from)} → ${onePercent.format(flips.pass_rate_to)}`],
    ['Pass → fail', String(flips.pass_to_fail)],
    ['Fail → pass', String(flips.fail_to_pass)],
    ['McNemar', pStatement(flips.mcnemar_p_value)],
  ]);
  assert.equal(await clippedNotes(page), [], 'no note is cut');

  // The scatter: one mark per paired datapoint, coloured by its change, on the right side of the diagonal.
  const list = await seeded.ada.client.get(`/api/job-iterations/${showcase}/compare/${complete}/datapoints/`, { page_size: 100 });
  assert.is(list.status, 200, list.text);
  const pairs = list.body.results as Paired[];
  assert.is(list.body.count, pairs.length, 'every datapoint on one page');
  const scored = pairs.filter((pair) => pair.score_from !== null && pair.score_to !== null);
  assert.is(scored.length, results.n_paired);
  const marks = await page.locator('svg.scatter .scatter-point').evaluateAll((elements) => {
    const diagonal = document.querySelector('svg.scatter .scatter-diagonal')!.getBoundingClientRect();
    return elements.map((element) => {
      const box = element.getBoundingClientRect();
      const [x, y] = [box.left + box.width / 2, box.top + box.height / 2];
      // The plot is square and the diagonal runs from its bottom-left to its top-right corner.
      const above = (diagonal.bottom - y) / diagonal.height - (x - diagonal.left) / diagonal.width;
      return { order: Number((element as SVGElement).dataset.order), className: element.getAttribute('class'), above, label: element.getAttribute('aria-label') };
    });
  });
  assert.equal(marks.map((mark) => mark.order).sort((a, b) => a - b), scored.map((pair) => pair.datapoint_order).sort((a, b) => a - b), 'one mark per paired datapoint');
  for (const mark of marks) {
    const pair = scored.find((candidate) => candidate.datapoint_order === mark.order)!;
    assert.is(mark.className, `scatter-point change-${pair.change}`, `datapoint ${mark.order} coloured as ${pair.change}`);
    const rise = pair.score_to! - pair.score_from!;
    if (Math.abs(rise) > 0.02) assert.is(mark.above > 0, rise > 0, `datapoint ${mark.order} (${pair.score_from} → ${pair.score_to}) is on the right side of the diagonal`);
    assert.is(mark.label, `Datapoint #${pair.datapoint_order}: ${scoreText(pair.score_from)} → ${scoreText(pair.score_to)}, ${pair.change.replace('pass_to_fail', 'pass → fail').replace('fail_to_pass', 'fail → pass')}`);
  }
  // Datapoints with the same two scores share a spot, which says how many it holds.
  const spots = new Map<string, number>();
  for (const pair of scored) spots.set(`${pair.score_from} ${pair.score_to}`, (spots.get(`${pair.score_from} ${pair.score_to}`) ?? 0) + 1);
  const stacked = [...spots.values()].filter((n) => n >= Math.max(2, Math.ceil(scored.length * 0.01))).map((n) => `×${n}`).sort();
  assert.equal((await page.locator('svg.scatter .scatter-count').allTextContents()).sort(), stacked);
  const legend = await page.locator('.scatter-legend li[data-change]').allTextContents();
  const countOf = (change: string) => scored.filter((pair) => pair.change === change).length;
  assert.equal(legend.map((item) => item.trim()), [['improved', 'improved'], ['regressed', 'regressed'], ['unchanged', 'unchanged'], ['fail → pass', 'fail_to_pass'], ['pass → fail', 'pass_to_fail']].map(([label, change]) => `${label} ${countOf(change!)}`));
  assert.ok(await page.locator('svg.scatter').getByText('Score of candidate-23 (from)').isVisible(), 'the x axis says whose score');
  assert.ok(await page.locator('svg.scatter').getByText('Score of candidate-24 (to)').isVisible(), 'and so does the y axis');

  // A mark clicked: its datapoint (linked to the dataset page) and both traces.
  const picked = pairs.find((pair) => pair.datapoint_order === 3)!;
  assert.is(picked.change, 'pass_to_fail');
  await page.locator('svg.scatter .scatter-point[data-order="3"]').click();
  const detail = page.locator('[data-picked] [data-datapoint]');
  await detail.waitFor();
  assert.is(await detail.getAttribute('data-datapoint'), picked.datapoint);
  assert.is(await detail.locator('h3').textContent(), 'Datapoint #3');
  assert.is(await detail.locator('h3 a').getAttribute('href'), `/console/datasets/${dataset}?datapoint=${picked.datapoint}`);
  assert.is(await detail.locator('a[data-side="from"]').getAttribute('href'), `/console/traces/${seeded.results.traces[3]}`);
  assert.is(await detail.locator('a[data-side="to"]').getAttribute('href'), `/console/traces/${seeded.results.tracesComplete[3]}`);
  assert.ok((await detail.textContent())?.includes(`${scoreText(picked.score_from)} · passed`), 'its score and verdict on each side');
  assert.is(await page.locator('.scatter-point[data-order="3"]').getAttribute('aria-selected'), 'true');
  // The keyboard moves between marks in datapoint order.
  await page.keyboard.press('ArrowRight');
  assert.is(await detail.locator('h3').textContent(), 'Datapoint #4');
  assert.is(await page.evaluate(() => (document.activeElement as SVGElement | null)?.dataset.order), '4', 'the focus follows');
  await page.keyboard.press('ArrowLeft');
  assert.is(await detail.locator('h3').textContent(), 'Datapoint #3');
  await shoot(page, '18-compare-results');
  await assertAccessible(page, 'two iterations\' results compared, a datapoint picked');

  // Regressions (every one the seed made, each with its traces) and improvements, as the API lists them.
  const asRow = (row: Moved) => [`#${row.datapoint_order}`, scoreText(row.score_from), scoreText(row.score_to), scoreDelta(row.delta), traceCell(row)];
  assert.equal(await sectionRows(page, 'Regressions'), results.regressions.map(asRow));
  assert.equal(results.regressions.map((row) => row.datapoint_order).sort((a, b) => a - b), resultRegressed);
  for (const row of results.regressions.filter((one) => resultTracedComplete.includes(one.datapoint_order))) {
    const cells = page.locator('section:has(> h2:text-is("Regressions")) tbody tr', { hasText: `#${row.datapoint_order}` });
    assert.is(await cells.getByRole('link', { name: `Trace of datapoint ${row.datapoint_order} with ${fromName}` }).getAttribute('href'), `/console/traces/${row.trace_id_from}`);
    assert.is(await cells.getByRole('link', { name: `Trace of datapoint ${row.datapoint_order} with ${toName}` }).getAttribute('href'), `/console/traces/${row.trace_id_to}`);
    assert.is(await cells.getByRole('link', { name: `Datapoint #${row.datapoint_order}` }).getAttribute('href'), `/console/datasets/${dataset}?datapoint=${row.datapoint}`);
  }
  assert.equal(await sectionRows(page, 'Improvements'), results.improvements.map(asRow));

  // Dimensions with their intervals, p and Holm's p.
  const dimensionRows = () => page.locator('.dimensions-slot tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  const asDimension = (dimension: ResultsComparison['dimensions'][number]) => [dimension.name, String(dimension.n), meanDelta(dimension.delta),
    dimension.ci95 ? `[${meanDelta(dimension.ci95.low)}, ${meanDelta(dimension.ci95.high)}]` : '—', pValue(dimension.p_value), pValue(dimension.p_value_holm)];
  assert.equal(await dimensionRows(), results.dimensions.map(asDimension));
  assert.equal(results.dimensions.map((dimension) => dimension.name), ['accuracy', 'tone', 'tool_use']);

  // A trace of the picked datapoint, followed; back to the comparison.
  await detail.locator('a[data-side="to"]').click();
  await page.waitForFunction(() => document.querySelectorAll('.wf-rows .wf-row').length === 3);
  assert.is(new URL(page.url()).pathname, `/console/traces/${seeded.results.tracesComplete[3]}`);
  assert.is(await page.locator('h1').textContent(), 'evaluate case 3 (candidate-24)');
  await page.goBack();
  await settled(page);
  assert.is(new URL(page.url()).pathname, path);

  // Another confidence: kept in the URL, every interval and the verdict at it.
  await page.getByLabel('Confidence').selectOption('0.99');
  await page.waitForFunction(() => document.querySelector('.verdict-sentence')?.textContent?.includes('99% CI'));
  await settled(page);
  assert.is(new URL(page.url()).searchParams.get('confidence'), '0.99');
  const strict = (await seeded.ada.client.get(`/api/job-iterations/${showcase}/compare/${complete}/`, { confidence: 0.99 })).body.results as ResultsComparison;
  assert.ok(strict.score.ci95!.low < results.score.ci95!.low && strict.score.ci95!.high > results.score.ci95!.high, 'a wider interval');
  assert.is(await page.locator('.verdict-sentence').textContent(), verdictSentence(strict, fromName, toName));
  assert.ok((await page.locator('.dimensions-slot thead').textContent())?.includes('99% CI'));
  assert.equal(await dimensionRows(), strict.dimensions.map(asDimension));
  // The API's default (what the plain URL answered) leaves the URL plain again.
  await page.getByLabel('Confidence').selectOption('0.95');
  await page.waitForFunction(() => document.querySelector('.verdict-sentence')?.textContent?.includes('95% CI'));
  await settled(page);
  assert.is(new URL(page.url()).search, '', 'the default leaves the URL plain');
  await page.getByLabel('Confidence').selectOption('0.99');
  await page.waitForFunction(() => document.querySelector('.verdict-sentence')?.textContent?.includes('99% CI'));
  await settled(page);
  await page.reload();
  await settled(page);
  assert.is(await page.getByLabel('Confidence').inputValue(), '0.99', 'reload keeps it');
  assert.is(await page.locator('.verdict-sentence').textContent(), verdictSentence(strict, fromName, toName));
  // A confidence the API does not take is dropped from the URL, and the comparison shown at its default.
  await page.goto(`${new URL(page.url()).origin}${path}?confidence=0.5`);
  await settled(page);
  assert.is(await page.getByLabel('Confidence').inputValue(), '0.95');
  assert.is(new URL(page.url()).search, '');
  assertNoProblems(context);
});

walk('two iterations with few datapoints in common compared: the verdict worded as the API decides it', async (context) => {
  const { page, seeded } = context;
  const { partial, showcase } = seeded.results;
  await visit(context, `/console/job-iterations/${partial}/compare/${showcase}`);
  const results = (await seeded.ada.client.get(`/api/job-iterations/${partial}/compare/${showcase}/`)).body.results as ResultsComparison;
  assert.is(results.n_paired, 11, 'the first twelve datapoints, less candidate-23\'s error on #5');
  assert.is(await page.locator('#view .block').first().getAttribute('data-verdict'), results.verdict);
  assert.is(await page.locator('.verdict-sentence').textContent(), verdictSentence(results, 'candidate-22', 'candidate-23'));
  assert.is(await page.locator('svg.scatter .scatter-point').count(), 11);
  assert.ok((await page.locator('[data-scatter-note]').textContent())?.includes('Not drawn (scored on one side only): 1 by candidate-22, 23 by candidate-23.'), 'what is not drawn, said');
  await shoot(page, '19-compare-few');
  await assertAccessible(page, 'two iterations with few datapoints in common compared');
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
  const iterationsOfJob = await seeded.ada.client.listAll('/api/job-iterations/', { job: seeded.runningJob.id }) as { id: string; iteration_name: string }[];
  const byName = new Map(iterationsOfJob.map((iteration) => [iteration.iteration_name, byIteration.get(iteration.id)]));
  const shown = await rows(page, 'iterations');
  assert.equal(shown.map((row) => [row[iterationColumns.mean], row[iterationColumns.coverage]]), shown.map((row) => resultCells(byName.get(row[iterationColumns.name]!))), 'every row as its summary says');
  const cellsOf = (name: string) => shown.find((row) => row[iterationColumns.name] === name)!.slice(iterationColumns.mean, iterationColumns.coverage + 1);
  assert.is(cellsOf('candidate-23')[1], '34 / 40 3 errors', 'the showcase: 37 datapoints run, three of them errors');
  assert.is(cellsOf('candidate-24')[1], '40 / 40');
  assert.is(cellsOf('candidate-22')[1], '12 / 40');
  assert.equal(cellsOf('candidate-1'), ['—', '—'], 'no results: dashes');
  assert.match(cellsOf('candidate-23')[0]!, /^0\.\d{3} ± 0\.\d{3}$/);
  const showcase = byIteration.get(seeded.results.showcase)!;
  const meanTitle = await page.locator('[data-table="iterations"] tr', { hasText: 'candidate-23' }).locator('td').nth(iterationColumns.mean).locator('span[title]').getAttribute('title');
  assert.ok(meanTitle?.includes(`95% CI ${Number(showcase.score_ci95!.low.toFixed(4))} to ${Number(showcase.score_ci95!.high.toFixed(4))}`), `the whole interval in the title: ${meanTitle}`);
  await shoot(page, '13-job-results');
  await assertAccessible(page, "a job's iterations with their results");

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
  const stats = await page.locator('.stats .stat').evaluateAll((cards) => cards.map((card) =>
    [card.querySelector('.stat-label')?.textContent, card.querySelector('.stat-value')?.textContent, [...card.querySelectorAll('.note-line')].map((line) => line.textContent)]));
  const judged = summary.passed + summary.failed;
  const ci = summary.pass_rate_ci95!;
  assert.equal(stats, [
    ['Mean score', three.format(summary.mean_score!), [`95% CI [${three.format(summary.score_ci95!.low)}, ${three.format(summary.score_ci95!.high)}]`, 'over 34 scored datapoints']],
    ['Pass rate', onePercent.format(summary.pass_rate!), [`95% CI [${onePercent.format(ci.low)}, ${onePercent.format(ci.high)}]`, `${summary.passed} of ${judged} passed`]],
    ['Coverage', '34 / 40', ['datapoints scored', 'of dataset v3']],
    ['Errors', '3', ['datapoints with only errors', `${summary.error_results} error rows in all`]],
    ['Missing', '3', ['datapoints without a result']],
  ]);
  const clippedNotes = await page.locator('.stats .note-line').evaluateAll((notes) => notes.filter((note) => note.scrollWidth > note.clientWidth).map((note) => note.textContent));
  assert.equal(clippedNotes, [], 'no note is cut');
  const dimensions = await page.locator('section', { has: page.locator('h2', { hasText: 'Dimensions' }) }).locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  assert.equal(dimensions, summary.dimensions.map((dimension) => [dimension.name, String(dimension.n), three.format(dimension.mean!), `[${three.format(dimension.ci95!.low)}, ${three.format(dimension.ci95!.high)}]`]));
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
  await assertAccessible(page, "an iteration's failed results");

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
  await assertAccessible(page, "an iteration's results");

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
  await assertAccessible(page, 'a dataset version at a datapoint');

  await visit(context, `/console/job-iterations/${seeded.runningIterations[0]!.id}/results`);
  assert.ok(await page.getByText('This iteration has no results yet.').isVisible(), 'an iteration without results says so');

  // Live: the page follows its job's events. The first results replace "no results yet", more
  // redraw the summary and the rows' page, a decision redraws the head; no reload.
  await page.locator('.live[data-state="live"]').waitFor();
  const fresh = seeded.runningIterations[0]!;
  const coverage = () => page.locator('.stats .stat', { hasText: 'Coverage' }).locator('.stat-value').textContent();
  const writeLive = async (orders: number[], shown: string, pager: string) => {
    const sent = performance.now();
    await writeResults(seeded.ada.client, fresh.id, dataset, orders.map((order) => caseResult(order, 0, 5)));
    await page.waitForFunction(([value, summary]) =>
      [...document.querySelectorAll('.stats .stat')].find((card) => card.textContent?.startsWith('Coverage'))?.querySelector('.stat-value')?.textContent === value &&
      document.querySelector('[data-table="results"] .pager-summary')?.textContent === summary, [shown, pager] as const, { timeout: 10_000, polling: 10 });
    return performance.now() - sent;
  };
  const firstMs = await writeLive(Array.from({ length: 10 }, (_, order) => order), '10 / 40', '1–10 of 10');
  const moreMs = await writeLive(Array.from({ length: 20 }, (_, i) => 10 + i), '30 / 40', '1–25 of 30');
  console.log(`  results written to an iteration reached its results page in ${firstMs.toFixed(0)} ms (its first) and ${moreMs.toFixed(0)} ms (more)`);
  assert.ok(firstMs < interactiveMs && moreMs < interactiveMs, `${firstMs.toFixed(0)} ms, ${moreMs.toFixed(0)} ms`);
  const freshSummary = (await seeded.ada.client.get(`/api/job-iterations/${fresh.id}/results/summary/`)).body as Summary;
  assert.is(await coverage(), `${freshSummary.scored} / ${freshSummary.datapoints}`);
  assert.is(await page.locator('.stats .stat.primary .stat-value').textContent(), three.format(freshSummary.mean_score!), 'the mean as the API sums it up');
  assert.equal((await rows(page, 'results')).slice(0, 2).map((row) => row[0]), ['#0', '#1']);
  assert.is((await seeded.ada.client.patch(`/api/job-iterations/${fresh.id}/`, { status: 'keep' })).status, 200);
  await page.locator('.page-head .actions .badge', { hasText: 'keep' }).waitFor();
  assert.is(await page.locator('.live').getAttribute('data-state'), 'live');
  await shoot(page, '22-results-live');
  await assertAccessible(page, "an iteration's results, written while the page is open");
  assertNoProblems(context);
});

/** Each stat card as the page shows it: label, value, note. */
function statCards(page: Page): Promise<string[][]> {
  return page.locator('.stats .stat').evaluateAll((cards) => cards.map((card) =>
    [card.querySelector('.stat-label')?.textContent ?? '', card.querySelector('.stat-value')?.textContent ?? '', card.querySelector('.stat-note')?.textContent ?? '']));
}

/** A run page's counts of tasks by state, as shown. */
function shownCounts(page: Page): Promise<Record<string, string>> {
  return page.locator('.task-counts li').evaluateAll((items) => Object.fromEntries(items.map((item) => [(item as HTMLElement).dataset.state, item.querySelector('.task-count')?.textContent ?? ''])));
}

interface RunAnswer {
  id: string; status: string; reason: string | null; counts: Record<string, number>; spent: { cost: number; tasks: number }; iterations: string[];
  created_at: string; started_at: string | null; finished_at: string | null;
}
interface TaskAnswer { iteration: string; datapoint: string; datapoint_order: number; attempt: number; tries: number; last_error: string | null; state: string }

const taskStateOrder = ['done', 'dead', 'skipped', 'cancelled', 'leased', 'queued'];
const countsAsShown = (counts: Record<string, number>) => Object.fromEntries(taskStateOrder.map((state) => [state, counts[state]!.toLocaleString('en-US')]));

/** A run page's iterations as shown (name, scored, mean) against what their summaries say. */
async function runIterationRows(context: Context, iterations: { id: string; iteration_name: string }[]): Promise<{ shown: string[][]; expected: string[][] }> {
  const expected = [];
  for (const iteration of iterations) {
    const summary = (await context.seeded.ada.client.get(`/api/job-iterations/${iteration.id}/results/summary/`)).body as Summary;
    const [meanText, coverage] = resultCells(summary);
    expected.push([iteration.iteration_name, coverage, meanText]);
  }
  return { shown: await sectionRows(context.page, 'Iterations'), expected };
}

walk('a job evaluated by runs lists them, newest first, with their status and progress, each linked to its page', async (context) => {
  const { page, seeded } = context;
  const { runs } = seeded;
  await visit(context, `/console/jobs/${runs.job.id}`);
  await page.locator('.live[data-state="live"]').waitFor();
  const listed = (await seeded.ada.client.get(`/api/jobs/${runs.job.id}/runs/`)).body.results as RunAnswer[];
  assert.equal(listed.map((run) => run.id), [runs.run, runs.budgetRun], 'newest first');
  assert.equal(listed.map((run) => [run.status, run.reason]), [['running', null], ['completed', 'budget']]);
  assert.equal(listed[1]!.counts, { total: runDatapoints, queued: 0, leased: 0, done: 30, dead: 0, skipped: 10, cancelled: 0 }, 'the budget of 30 tasks reached, the rest skipped');
  assert.equal((await rows(page, 'runs')).map((row) => row.slice(0, 3)), [
    ['baseline-prompt and concise-prompt', 'running', `${runEnded} / 80 ${runErrors.length} dead`],
    ['friendly-prompt', 'completed budget', `30 / ${runDatapoints} ${runDatapoints - 30} not run`],
  ]);
  assert.equal(await page.locator('[data-table="runs"] tbody a').evaluateAll((links) => links.map((a) => a.getAttribute('href'))), listed.map((run) => `/console/runs/${run.id}`));
  const bar = page.locator('[data-table="runs"] [role=progressbar]').first();
  assert.equal([await bar.getAttribute('aria-valuenow'), await bar.getAttribute('aria-valuemax'), await bar.getAttribute('aria-label')],
    [String(runEnded), '80', 'Tasks ended of baseline-prompt and concise-prompt']);
  const tops = await Promise.all(['.stats', '[data-runs]', '.score-chart', '[data-table="iterations"]'].map(async (selector) => (await page.locator(selector).boundingBox())!.y));
  assert.equal(tops, [...tops].sort((a, b) => a - b), `the runs after the headline, before the chart and the iterations: ${tops.join(', ')}`);
  await assertAccessible(page, 'a job with runs');
  // The run its budget ended ran 30 of its tasks: it says so, not "100%" (every task ended, most skipped).
  await visit(context, `/console/runs/${runs.budgetRun}`);
  assert.equal((await statCards(page))[0], ['Ran', '75.0%', `30 of ${runDatapoints} tasks ran${runDatapoints - 30} not run (skipped)`]);
  assert.match((await statCards(page))[1]![2]!, /^average from its first lease to its end$|^no task was leased$/);
  assert.is(await page.locator('.facts dd').filter({ hasText: 'ended' }).first().textContent(), 'none (ended)');
  // A job without runs shows no such section.
  await visit(context, `/console/jobs/${seeded.runningJob.id}`);
  assert.ok(await page.locator('[data-runs]').isHidden(), 'no runs, no section');
  assertNoProblems(context);
});

walk('a run: its progress, rate and time left, tasks by state, errors, iterations with their results, the workers of its project, and its settings', async (context) => {
  const { page, seeded } = context;
  const { runs } = seeded;
  // A run's page has its own URL: loaded directly (the job's page links to it, checked above).
  await visit(context, `/console/runs/${runs.run}`);
  const run = (await seeded.ada.client.get(`/api/runs/${runs.run}/`)).body as RunAnswer;
  const done = runEnded - runErrors.length;
  assert.equal([run.status, run.counts], ['running', { total: 80, queued: 80 - runEnded - runHeld, leased: runHeld, done, dead: runErrors.length, skipped: 0, cancelled: 0 }]);

  assert.is(await page.locator('h1').textContent(), 'baseline-prompt and concise-prompt on dataset v3');
  assert.equal(await page.locator('.trail a').allTextContents(), ['Projects', 'Customer support', 'Support bot · judge scoring']);
  assert.is(await page.locator('.page-head .page-id').textContent(), runs.run);
  assert.is(await page.locator('.page-head .actions .badge').textContent(), 'running');
  assert.is(await page.locator('.run-sentence').textContent(), `Running since ${dateText(run.started_at!)}.`);

  // The numbers: progress, the rate (the average since it started, until an event measures it), the time left at it, what it spent.
  const cards = await statCards(page);
  assert.equal(cards.map((card) => card[0]), ['Progress', 'Rate', 'Time left', 'Spent']);
  assert.equal(cards[0], ['Progress', '65.0%', `${runEnded} of 80 tasks ended`]);
  assert.match(cards[1]![1]!, /^\d[\d,.]* tasks\/(s|min)$/);
  assert.is(cards[1]![2], 'average since it started');
  assert.equal(cards[2], ['Time left', '—', 'measured as tasks end'], 'not guessed from the average: the run may have stopped since');
  assert.equal(cards[3], ['Spent', scoreText(run.spent.cost), `over ${run.spent.tasks} completions (each try counts)`]);
  assert.is(run.spent.tasks, runEnded, 'every completion accepted counts, errors too');

  // Tasks by state: the counts, and the bar's parts in proportion.
  assert.equal(await shownCounts(page), countsAsShown(run.counts));
  const bar = page.locator('.run-tasks [role=progressbar]');
  assert.equal([await bar.getAttribute('aria-valuenow'), await bar.getAttribute('aria-valuemax'), await bar.getAttribute('aria-valuetext')],
    [String(runEnded), '80', `${runEnded} of 80 tasks ended`]);
  const parts = await bar.locator('.task-bar-part').evaluateAll((elements) => elements.map((element) =>
    [(element as HTMLElement).dataset.state!, element.getBoundingClientRect().width / element.parentElement!.getBoundingClientRect().width] as const));
  assert.equal(parts.map(([state]) => state), ['done', 'dead', 'leased'], 'the states with tasks, ended first');
  for (const [state, share] of parts) assert.ok(Math.abs(share - run.counts[state]! / 80) < 0.01, `${state}: ${share}`);

  // Errors: the dead tasks with their last error, linked to their iteration's errors and their datapoint.
  const dead = (await seeded.ada.client.get(`/api/runs/${runs.run}/tasks/`, { state: 'dead' })).body.results as TaskAnswer[];
  const nameOf = (id: string) => runs.iterations.find((iteration) => iteration.id === id)!.iteration_name;
  assert.equal(dead.map((task) => `${task.datapoint_order} ${nameOf(task.iteration)}: ${task.last_error}`).sort(),
    runErrors.map(([order, iteration, error]) => `${order} ${runs.iterations[iteration]!.iteration_name}: ${error}`).sort(), 'the seed\'s errors, as the API lists them');
  assert.equal(await rows(page, 'errors'), dead.map((task) => [nameOf(task.iteration), `#${task.datapoint_order}`, String(task.attempt), String(task.tries), task.last_error!]));
  const firstError = page.locator('[data-table="errors"] tbody tr').first();
  assert.is(await firstError.getByRole('link', { name: nameOf(dead[0]!.iteration) }).getAttribute('href'), `/console/job-iterations/${dead[0]!.iteration}/results?filter=errors`);
  assert.is(await firstError.getByRole('link', { name: `Datapoint #${dead[0]!.datapoint_order}` }).getAttribute('href'), `/console/datasets/${seeded.datasets[2]!.id}?datapoint=${dead[0]!.datapoint}`);
  assert.is(await firstError.locator('.error-text').getAttribute('title'), dead[0]!.last_error, 'the whole message in the tooltip');
  // A command's error (its summary, then its stderr's end) shows its first line and its last: the exception.
  const headline = await page.evaluate(async () => {
    const { errorHeadline } = await import('/static/console/format.js' as string);
    return [errorHeadline('exit code 1\nTraceback (most recent call last):\n  File "agent.py", line 3\nValueError: could not parse 502 Bad Gateway\n'), errorHeadline('one line')];
  });
  assert.equal(headline, ['exit code 1 · ValueError: could not parse 502 Bad Gateway', 'one line']);

  // Its iterations, each linked to its results, with what they say so far.
  const { shown, expected } = await runIterationRows(context, runs.iterations.slice(0, 2));
  assert.equal(shown, expected);
  assert.equal(shown.map((row) => row[1]), ['29 / 40 3 errors', '17 / 40 3 errors'], 'baseline-prompt\'s first 32 datapoints ended and concise-prompt\'s first 20, three of each iteration\'s dead');
  assert.equal(await page.locator('[data-iterations] tbody a').evaluateAll((links) => links.map((a) => a.getAttribute('href'))),
    runs.iterations.slice(0, 2).map((iteration) => `/console/job-iterations/${iteration.id}/results`));

  // The project's workers: what each is doing and when it was last heard from.
  const workers = (await page.locator('[data-workers] tbody tr').evaluateAll((trs) => trs.map((tr) => [
    tr.querySelector('.worker-name')?.textContent ?? '', tr.querySelector('.worker-host')?.textContent ?? '', ...[...tr.querySelectorAll('td')].slice(1).map((td) => td.textContent?.trim() ?? ''),
  ]))).sort((a, b) => a[0]!.localeCompare(b[0]!));
  assert.equal(workers.map((row) => row.slice(0, 4)), [
    ['eval-worker-1', 'gpu-box-1', 'idle', '0'],
    ['eval-worker-2', 'gpu-box-2', 'working', String(runHeld)],
    ['eval-worker-3', 'ada-laptop', 'not seen', '0'],
  ]);
  assert.match(workers[0]![4]!, /^(just now|\d+ s ago|\d+ min ago)$/);
  assert.is(workers[2]![4], '—');

  // Its settings, linked to its job and dataset version.
  assert.is(await page.locator('.facts').getByRole('link', { name: 'Support bot · judge scoring' }).getAttribute('href'), `/console/jobs/${runs.job.id}`);
  assert.is(await page.locator('.facts').getByRole('link', { name: 'v3' }).getAttribute('href'), `/console/datasets/${seeded.datasets[2]!.id}`);
  await page.locator('.live[data-state="live"]').waitFor();
  await shoot(page, '23-run');
  await assertAccessible(page, 'a run half way');

  // Reload shows it again, as it is, and follows it live again.
  const before = { counts: await shownCounts(page), errors: await rows(page, 'errors'), iterations: await sectionRows(page, 'Iterations') };
  await page.reload();
  await settled(page);
  assert.is(new URL(page.url()).pathname, `/console/runs/${runs.run}`);
  assert.is(await page.locator('h1').textContent(), 'baseline-prompt and concise-prompt on dataset v3', 'reload keeps the page and the sign-in');
  assert.equal({ counts: await shownCounts(page), errors: await rows(page, 'errors'), iterations: await sectionRows(page, 'Iterations') }, before);
  await page.locator('.live[data-state="live"]').waitFor();
  assertNoProblems(context);
});

walk('a run\'s page follows it live: completions move its bar, counts and rate, a dead task joins the errors, and its end says why', async (context) => {
  const { page, seeded } = context;
  const { runs } = seeded;
  const client = seeded.ada.client;
  const [first, second] = [runs.workers[0]!, runs.workers[1]!];
  await page.locator('.live[data-state="live"]').waitFor();
  const seen = (ended: number, dead: number) => page.waitForFunction(([ended, dead]) =>
    document.querySelector('.run-tasks [role=progressbar]')?.getAttribute('aria-valuenow') === ended &&
    document.querySelector('.task-counts li[data-state="dead"] .task-count')?.textContent === dead &&
    document.querySelectorAll('[data-table="errors"] tbody tr').length === Number(dead) && document.querySelector('[aria-busy]') === null,
  [String(ended), String(dead)] as const, { timeout: 10_000, polling: 10 });

  // eval-worker-2 answers what it holds: an error (one try: dead at once) and three results.
  const sent = performance.now();
  const reply = await complete(client, second, runs.held.map((task, i) => ({ task: task.id, lease: task.lease, ...(i === 0 ? { status: 'error', error: 'the tool crashed while the page was open' } : { score: 0.7, passed: true, cost: 0.001 }) })));
  assert.is(reply.status, 200, reply.text);
  await seen(runEnded + runHeld, runErrors.length + 1);
  const liveMs = performance.now() - sent;
  console.log(`  completions reached the run's page in ${liveMs.toFixed(0)} ms (its bar, counts and errors)`);
  assert.ok(liveMs < interactiveMs, `the run's page moved in ${liveMs.toFixed(0)} ms`);
  assert.ok((await rows(page, 'errors')).some((row) => row[4] === 'the tool crashed while the page was open'), 'the new error listed');
  assert.equal((await statCards(page))[0], ['Progress', '70.0%', `${runEnded + runHeld} of 80 tasks ended`]);

  // eval-worker-1 takes the rest and answers half: the rate is now measured over the last seconds.
  const rest = await lease(client, first, { max: 100, run: runs.run });
  assert.is(rest.length, 80 - runEnded - runHeld);
  const half = rest.length / 2;
  const answer = (tasks: any[]) => complete(client, first, tasks.map((task) => {
    const { datapoint_order: _order, attempt: _attempt, ...result } = caseResult(task.datapoint.order, 0, 43);
    return { task: task.id, lease: task.lease, ...result };
  }));
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.is((await answer(rest.slice(0, half))).status, 200);
  await seen(runEnded + runHeld + half, runErrors.length + 1);
  await page.waitForFunction(() => document.querySelectorAll('.stats .stat')[1]?.querySelector('.stat-note')?.textContent === 'tasks ended, last 10 s', undefined, { timeout: 5_000 });
  const measured = await statCards(page);
  assert.match(measured[1]![1]!, /^\d[\d,.]* tasks\/(s|min)$/);
  assert.match(measured[2]![1]!, /^≈ \d/);
  assert.is(measured[2]![2], 'at this rate');
  // What it spent follows too (the run asked for again after progress).
  await page.waitForFunction((tasks) => document.querySelectorAll('.stats .stat')[3]?.querySelector('.stat-note')?.textContent === `over ${tasks} completions (each try counts)`, runEnded + runHeld + half, { timeout: 5_000 });
  await settled(page);
  await shootTop(page, '24-run-live-top'); // docs/console-run.png

  // The last answers end the run: completed, every task ended, how long it took.
  assert.is((await answer(rest.slice(half))).status, 200);
  await page.locator('.page-head .actions .badge', { hasText: 'completed' }).waitFor({ timeout: 10_000 });
  await seen(80, runErrors.length + 1);
  const run = (await client.get(`/api/runs/${runs.run}/`)).body as RunAnswer;
  assert.equal([run.status, run.reason], ['completed', 'all_done']);
  assert.is(await page.locator('.run-sentence').textContent(), `Completed ${dateText(run.finished_at!)}: every task ended.`);
  const cards = await statCards(page);
  assert.equal(cards.map((card) => card[0]), ['Ran', 'Rate', 'Took', 'Spent']);
  assert.equal(cards[0], ['Ran', '100%', `80 of 80 tasks ran, ${runErrors.length + 1} dead`]);
  assert.is(cards[1]![2], 'average from its first lease to its end');
  assert.is(cards[2]![2], `first lease to end; ended ${dateText(run.finished_at!)}`);
  assert.equal(await shownCounts(page), countsAsShown(run.counts));
  // Its iterations' results follow (results.written), and eval-worker-2 holds nothing any more.
  const { expected } = await runIterationRows(context, runs.iterations.slice(0, 2));
  assert.equal(expected.map((row) => row[1]!.split(' ')[0]).map(Number).reduce((sum, scored) => sum + scored, 0), 80 - runErrors.length - 1, 'every datapoint scored but the dead ones');
  await page.waitForFunction((rows) => JSON.stringify([...document.querySelectorAll('[data-iterations] tbody tr')].map((tr) =>
    [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim()))) === JSON.stringify(rows), expected, { timeout: 10_000 });
  await page.waitForFunction(() => [...document.querySelectorAll('[data-workers] tbody tr')].some((tr) => tr.textContent?.includes('eval-worker-2') && tr.querySelectorAll('td')[2]?.textContent === '0'), undefined, { timeout: 10_000 });
  await settled(page);
  assert.is(await page.locator('.live').getAttribute('data-state'), 'live');
  await shoot(page, '24-run-finished');
  await assertAccessible(page, 'a run that ended while its page was open');
  assertNoProblems(context);
});

walk('a job\'s runs are live on its page: a new run appears, its progress moves, it ends', async (context) => {
  const { page, seeded } = context;
  const { runs } = seeded;
  const client = seeded.ada.client;
  await visit(context, `/console/jobs/${runs.job.id}`);
  await page.locator('.live[data-state="live"]').waitFor();
  const friendly = runs.iterations[2]!;
  const firstRow = (expected: string[]) => page.waitForFunction((cells) => {
    const row = document.querySelector('[data-table="runs"] tbody tr');
    return JSON.stringify([...(row?.querySelectorAll('td') ?? [])].slice(0, 3).map((td) => td.textContent?.trim())) === JSON.stringify(cells);
  }, expected, { timeout: 10_000, polling: 10 });
  const sent = performance.now();
  const created = await client.post(`/api/jobs/${runs.job.id}/runs/`, { dataset: seeded.datasets[2]!.id, iterations: [friendly.id] });
  assert.is(created.status, 201, created.text);
  await firstRow(['friendly-prompt', 'queued', `0 / ${runDatapoints}`]);
  console.log(`  a new run reached its job's page in ${(performance.now() - sent).toFixed(0)} ms`);
  assert.is((await rows(page, 'runs')).length, 3);

  const tasks = await lease(client, runs.workers[2]!, { max: 100, run: created.body.id });
  assert.is(tasks.length, runDatapoints);
  const answer = (some: any[]) => complete(client, runs.workers[2]!, some.map((task) => ({ task: task.id, lease: task.lease, score: 0.8, passed: true })));
  assert.is((await answer(tasks.slice(0, 15))).status, 200);
  await firstRow(['friendly-prompt', 'running', `15 / ${runDatapoints}`]);
  assert.is((await answer(tasks.slice(15))).status, 200);
  await firstRow(['friendly-prompt', 'completed', `${runDatapoints} / ${runDatapoints}`]);
  // The run's completions are the iteration's results: its coverage follows (results.written).
  await page.waitForFunction(([name, column, coverage]) => [...document.querySelectorAll('[data-table="iterations"] tbody tr')]
    .find((tr) => tr.textContent?.includes(name))?.querySelectorAll('td')[column]?.textContent === coverage,
  [friendly.iteration_name, iterationColumns.coverage, `${runDatapoints} / ${runDatapoints}`] as const, { timeout: 10_000 });
  await page.locator('.page-head .actions .badge', { hasText: 'completed' }).waitFor({ timeout: 10_000 });
  // The job's own fields follow its updates too: its runs moved its status, and its updated_at with it.
  const { updated_at: updatedAt } = (await client.get(`/api/jobs/${runs.job.id}/`)).body;
  assert.is(updatedAt, (await client.get(`/api/runs/${created.body.id}/`)).body.finished_at, 'the run ended it then');
  await page.waitForFunction(async (iso) => {
    const { dateTime } = await import('/static/console/format.js' as string);
    const shown = [...document.querySelectorAll('.facts dt')].find((dt) => dt.textContent === 'Updated')?.nextElementSibling?.textContent;
    return shown === dateTime(iso);
  }, updatedAt, { timeout: 10_000, polling: 50 });
  // No iteration of this job has an avg_score: its best score is the best mean of its results, said so.
  await page.waitForFunction(() => document.querySelector('.stats .stat .stat-note')?.textContent === 'mean of results, at friendly-prompt', undefined, { timeout: 10_000 });
  assert.equal((await statCards(page))[0], ['Best score', '0.8', 'mean of results, at friendly-prompt']);
  // Its chart plots the means of the iterations' results instead (none reports an avg_score), and says so.
  await page.waitForFunction(() => /^No iteration reports an avg_score: the chart plots the mean of each iteration's results/.test(document.querySelector('.chart-note')?.textContent ?? ''), undefined, { timeout: 10_000 });
  const plotted = (await chartData(page))!;
  const friendlyAt = (await client.listAll(`/api/job-iterations/`, { job: runs.job.id })).sort((a: any, b: any) => a.order - b.order).findIndex((iteration: any) => iteration.id === friendly.id);
  assert.equal([1, 2, 3].map((series) => plotted[series]![friendlyAt]).filter((value) => value !== null), [0.8], 'friendly-prompt at the mean of its results');
  assert.is(plotted[4]!.at(-1), 0.8, 'the best so far');
  assert.ok(await page.locator('.score-chart .u-legend').isVisible(), 'its legend, with a point plotted');
  await settled(page);
  await shoot(page, '25-job-runs');
  await assertAccessible(page, 'a job whose run ended while its page was open');

  // A run that ends with a dead task, then is retried: its row is made anew (no finish any more).
  const cells = () => page.evaluate(() => [...(document.querySelector('[data-table="runs"] tbody tr')?.querySelectorAll('td') ?? [])].map((td) => td.textContent?.trim()));
  const failing = await client.post(`/api/jobs/${runs.job.id}/runs/`, { dataset: seeded.datasets[2]!.id, iterations: [friendly.id], max_tries: 1 });
  assert.is(failing.status, 201, failing.text);
  const again = await lease(client, runs.workers[2]!, { max: 100, run: failing.body.id });
  await complete(client, runs.workers[2]!, again.map((task, i) => (i === 0 ? { task: task.id, lease: task.lease, status: 'error', error: 'boom' } : { task: task.id, lease: task.lease, score: 0.8 })));
  await firstRow(['friendly-prompt', 'completed', `${runDatapoints} / ${runDatapoints} 1 dead`]);
  await page.waitForFunction(() => document.querySelector('[data-table="runs"] tbody tr td:nth-child(5)')?.textContent !== '—', undefined, { timeout: 10_000 });
  assert.is((await client.post(`/api/runs/${failing.body.id}/retry/`, {})).status, 200);
  await firstRow(['friendly-prompt', 'queued', `${runDatapoints - 1} / ${runDatapoints}`]);
  await page.waitForFunction(() => document.querySelector('[data-table="runs"] tbody tr td:nth-child(5)')?.textContent === '—', undefined, { timeout: 10_000 });
  await completeAll(client, runs.workers[2]!, await lease(client, runs.workers[2]!, { max: 1, run: failing.body.id }));
  await firstRow(['friendly-prompt', 'completed', `${runDatapoints} / ${runDatapoints}`]);

  // A run that ends on its budget says so, and keeps saying so after its last progress.
  const budgeted = await client.post(`/api/jobs/${runs.job.id}/runs/`, { dataset: seeded.datasets[2]!.id, iterations: [friendly.id], budget: { max_tasks: 1 } });
  assert.is(budgeted.status, 201, budgeted.text);
  const [one] = await lease(client, runs.workers[2]!, { max: 1, run: budgeted.body.id });
  await completeAll(client, runs.workers[2]!, [one]);
  await firstRow(['friendly-prompt', 'completed budget', `1 / ${runDatapoints} ${runDatapoints - 1} not run`]);
  await new Promise((resolve) => setTimeout(resolve, 600));
  assert.equal((await cells()).slice(1, 2), ['completed budget'], 'the trailing progress keeps the reason');

  // Once one iteration reports an avg_score, the chart plots what iterations report (never mixed with means), and says how many do.
  assert.is((await client.patch(`/api/job-iterations/${friendly.id}/`, { avg_score: 0.7 })).status, 200);
  await page.waitForFunction(() => /^The chart plots the avg_score each iteration reports: 1 of 3 report one/.test(document.querySelector('.chart-note')?.textContent ?? ''), undefined, { timeout: 10_000 });
  const reported = (await chartData(page))!;
  assert.equal([1, 2, 3].flatMap((series) => reported[series]!.filter((value) => value !== null)), [0.7], 'only the reported score');
  assertNoProblems(context);
});

interface RaceCandidateAnswer {
  iteration: string; state: string; pairs: number; low: number; high: number; stopped_at: number | null; decided_at: string | null;
  stop: { pairs: number; datapoints: number; bound: number; alpha: number; method: string } | null;
}
interface RaceRunAnswer extends RunAnswer { race: { incumbent: string; alpha: number; min_pairs: number; score_range: number[]; tasks_saved: number; candidates: RaceCandidateAnswer[] } }
interface RaceHistoryAnswer { datapoints: number; tasks_total: number; tasks_saved: number; candidates: { iteration: string; state: string; stopped_at: number | null; pairs: number[]; low: number[]; high: number[] }[] }

const raceStateWords: Record<string, string> = { live: 'live', worse: 'worse', better: 'better', cannot_win: 'cannot win', finished: 'finished' };
const deltaInterval = (low: number, high: number) => `[${meanDelta(low)}, ${meanDelta(high)}]`;
/** A candidate's bounds as the race shows them: an interval, or, once they meet, the exact mean difference. */
const raceBounds = (low: number, high: number) => (low === high ? `${meanDelta(low)} exact` : deltaInterval(low, high));
/** A share as run-page.js's percentOf writes it. */
const percentOf = (share: number) => (share >= 1 ? '100%' : `${(Math.floor(share * 1000) / 10).toFixed(1)}%`);

/** Why a candidate stands where it does, as the race's table says it. */
function raceWhy(candidate: RaceCandidateAnswer, minPairs: number): string {
  const { stop } = candidate;
  if (stop?.method === 'exact_maximum') return `at most ${meanDelta(stop.bound)} on the incumbent even scoring 1 on the ${stop.datapoints - stop.pairs} datapoints left (exact)`;
  if (stop) return `${candidate.state === 'better' ? `lower bound ${meanDelta(stop.bound)} > 0` : `upper bound ${meanDelta(stop.bound)} < 0`} (confidence sequence, α = ${scoreText(stop.alpha)})`;
  if (candidate.state === 'finished') return 'every datapoint paired: the exact mean difference';
  return candidate.pairs < minPairs ? `fewer than ${minPairs} pairs: no stop yet` : 'racing: its bounds hold 0';
}

/** The race's table as it should read for the run's answer: candidate, state, paired, bounds, stopped at, why. */
function raceRows(run: RaceRunAnswer, nameOf: (id: string) => string): string[][] {
  return run.race.candidates.map((candidate) => [
    nameOf(candidate.iteration), raceStateWords[candidate.state]!, `${candidate.pairs} / ${raceDatapoints}`, raceBounds(candidate.low, candidate.high),
    candidate.stopped_at === null ? '—' : `${candidate.stopped_at} pairs`, raceWhy(candidate, run.race.min_pairs),
  ]);
}

/** The race's stat cards as they should read: tasks saved of the full grid, stopped, still racing. */
function raceCards(run: RaceRunAnswer): string[][] {
  const { candidates, tasks_saved: saved } = run.race;
  const live = candidates.filter((candidate) => candidate.state === 'live');
  const byState = ['worse', 'cannot_win', 'better', 'live', 'finished'].map((state) => [state, candidates.filter((candidate) => candidate.state === state).length] as const)
    .filter(([, n]) => n > 0).map(([state, n]) => `${n} ${raceStateWords[state]}`).join(' · ');
  return [
    ['Tasks saved', `${saved} of ${run.counts.total}`, `${percentOf(saved / run.counts.total)} of the full grid not run`],
    ['Stopped', `${candidates.length - live.length - candidates.filter((candidate) => candidate.state === 'finished').length} of ${candidates.length}`, byState],
    ['Still racing', `${live.length} of ${candidates.length}`, live.length > 0 ? `the least paired at ${Math.min(...live.map((candidate) => candidate.pairs))} of ${raceDatapoints}` : 'every candidate decided'],
  ];
}

/** What the race chart should draw for a history: x (every pair any candidate has), then each candidate's upper and lower bound. */
function raceSeries(history: RaceHistoryAnswer): (number | null)[][] {
  const xs = [...new Set(history.candidates.flatMap((candidate) => candidate.pairs))].sort((a, b) => a - b);
  return [xs, ...history.candidates.flatMap((candidate) => {
    const at = (values: number[]) => xs.map((x) => { const i = candidate.pairs.indexOf(x); return i < 0 ? null : values[i]!; });
    return [at(candidate.high), at(candidate.low)];
  })];
}

/** What the page shows of its race: the stat cards, the table's rows and the chart's data. */
async function shownRace(page: Page): Promise<{ cards: string[][]; rows: string[][]; chart: (number | null)[][] | undefined }> {
  const cards = await page.locator('[data-race] .stat').evaluateAll((elements) => elements.map((card) =>
    [card.querySelector('.stat-label')?.textContent ?? '', card.querySelector('.stat-value')?.textContent ?? '', card.querySelector('.stat-note')?.textContent ?? '']));
  const rows = await page.locator('[data-race-candidates] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));
  const chart = await page.evaluate(async () => {
    const { raceChartData } = await import('/static/console/race-chart.js' as string);
    return raceChartData(document.querySelector('.race-chart')) as (number | null)[][] | undefined;
  });
  return { cards, rows, chart };
}

/** Waits until the page's race reads as the run and its history say now. */
async function raceAsAnswered(context: Context, timeout = 10_000): Promise<{ run: RaceRunAnswer; history: RaceHistoryAnswer }> {
  const { page, seeded } = context;
  const client = seeded.ada.client;
  const run = (await client.get(`/api/runs/${seeded.race.run}/`)).body as RaceRunAnswer;
  const history = (await client.get(`/api/runs/${seeded.race.run}/race/`)).body as RaceHistoryAnswer;
  const expected = { cards: raceCards(run), rows: raceRows(run, raceNameOf(context)), chart: raceSeries(history) };
  await page.evaluate(async () => {
    (window as any).raceChartDataOf = (await import('/static/console/race-chart.js' as string)).raceChartData;
  });
  await page.waitForFunction((want) => {
    const cards = [...document.querySelectorAll('[data-race] .stat')].map((card) =>
      [card.querySelector('.stat-label')?.textContent ?? '', card.querySelector('.stat-value')?.textContent ?? '', card.querySelector('.stat-note')?.textContent ?? '']);
    const rows = [...document.querySelectorAll('[data-race-candidates] tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? ''));
    const chart = (window as any).raceChartDataOf(document.querySelector('.race-chart'));
    return JSON.stringify({ cards, rows, chart }) === JSON.stringify(want);
  }, expected, { timeout, polling: 20 }).catch(async (error) => {
    assert.equal(await shownRace(page), expected, `the race as answered (${(error as Error).message})`);
  });
  return { run, history };
}

function raceNameOf(context: Context): (id: string) => string {
  const { race } = context.seeded;
  return (id: string) => [race.incumbent, ...race.candidates].find((iteration) => iteration.id === id)?.iteration_name ?? id;
}

walk('a racing run: its race as a chart of each candidate\'s bounds narrowing (0 and the stops marked), its candidates with state, pairs, bounds, where and why stopped, and the tasks saved of the full grid', async (context) => {
  const { page, seeded } = context;
  const { race } = seeded;
  const nameOf = raceNameOf(context);
  await visit(context, `/console/runs/${race.run}`);
  await page.locator('.live[data-state="live"]').waitFor();
  const { run, history } = await raceAsAnswered(context);
  // The seed's race: v8-terse stopped as worse by its confidence sequence, the rest live at 30 pairs.
  assert.equal(run.race.candidates.map((candidate) => [nameOf(candidate.iteration), candidate.state]),
    [['v8-terse', 'worse'], ['v8-strict-json', 'live'], ['v8-few-shot', 'live'], ['v8-reasoning', 'live']]);
  const terse = run.race.candidates[0]!;
  assert.ok(terse.stopped_at! >= run.race.min_pairs && terse.stopped_at! < raceSeededPairs && terse.high < 0, `stopped at ${terse.stopped_at}`);
  assert.equal([terse.stop!.method, terse.stop!.alpha], ['confidence_sequence', 0.05 / 4]);
  assert.ok(run.race.candidates.slice(1).every((candidate) => candidate.pairs === raceSeededPairs));
  assert.equal([history.datapoints, history.tasks_total, history.tasks_saved], [raceDatapoints, 4 * raceDatapoints, run.race.tasks_saved]);
  assert.is(run.race.tasks_saved, raceDatapoints - terse.stopped_at!, 'v8-terse\'s tasks after its stop were not run');

  assert.is(await page.locator('h1').textContent(), 'v8-terse, v8-strict-json and 2 more on dataset v1');
  assert.equal(await page.locator('.trail a').allTextContents(), ['Projects', 'Returns desk', 'Returns bot · prompt tuning']);
  const shown = await shownRace(page);
  assert.equal(shown.cards[0], ['Tasks saved', `${raceDatapoints - terse.stopped_at!} of 240`, `${percentOf((raceDatapoints - terse.stopped_at!) / 240)} of the full grid not run`]);
  assert.equal(shown.cards.slice(1), [['Stopped', '1 of 4', '1 worse · 3 live'], ['Still racing', '3 of 4', `the least paired at ${raceSeededPairs} of ${raceDatapoints}`]]);
  assert.equal(shown.rows[0], ['v8-terse', 'worse', `${terse.pairs} / 60`, deltaInterval(terse.low, terse.high), `${terse.stopped_at} pairs`, `upper bound ${meanDelta(terse.high)} < 0 (confidence sequence, α = 0.0125)`]);
  assert.equal(shown.rows.slice(1).map((row) => [row[1], row[2], row[4], row[5]]), [1, 2, 3].map(() => ['live', `${raceSeededPairs} / 60`, '—', 'racing: its bounds hold 0']));
  // Each candidate linked to its results; the incumbent named (and linked) in the lead and the settings.
  assert.equal(await page.locator('[data-race-candidates] tbody a').evaluateAll((links) => links.map((a) => a.getAttribute('href'))),
    race.candidates.map((candidate) => `/console/job-iterations/${candidate.id}/results`));
  assert.is(await page.locator('.race-lead a').getAttribute('href'), `/console/job-iterations/${race.incumbent.id}/results`);
  assert.is(await page.locator('.race-lead a').textContent(), 'returns-v7');
  // Its iterations' table marks the stopped candidate's mean as partial.
  const notes = await page.locator('[data-iterations] tbody tr').evaluateAll((rows) => rows.map((tr) => tr.lastElementChild?.textContent ?? ''));
  assert.equal(notes, race.candidates.map((candidate) => (candidate.iteration_name === 'v8-terse' ? `stopped by the race at ${terse.stopped_at} datapoints: a partial mean, not its full score` : '')));
  assert.ok((await page.locator('.facts').textContent())?.includes('against returns-v7, α = 0.05 (0.0125 a candidate), at least 10 pairs, scores in [0, 1], better ones run on'));
  // The chart: every pair of every candidate's history, the band between its bounds; v8-terse's ends where it was stopped.
  const [xs, terseHigh] = shown.chart!;
  assert.equal(xs, Array.from({ length: raceSeededPairs }, (_, i) => i + 1), 'a point a pair (fewer than 256)');
  assert.is(terseHigh!.filter((value) => value !== null).length, terse.stopped_at, 'v8-terse\'s band ends at its stop');
  assert.ok(await page.locator('.race-plot[role="img"]').getAttribute('aria-label'), 'the chart is named for screen readers');
  assert.is(await page.locator('.race-legend-head').textContent(), 'Latest bounds');
  assert.equal(await page.locator('.race-legend li').allTextContents(), history.candidates.map((candidate) =>
    `${nameOf(candidate.iteration)}${deltaInterval(candidate.low.at(-1)!, candidate.high.at(-1)!)} at ${candidate.pairs.at(-1)}`));
  // Hovering reads the bands at the cursor's pairs.
  await page.locator('.race-plot').scrollIntoViewIfNeeded();
  const box = (await page.locator('.race-plot .u-over').boundingBox())!;
  await page.mouse.move(box.x + box.width * (12 / raceDatapoints), box.y + box.height / 2);
  await page.waitForFunction(() => /^Bounds at \d+ pairs$/.test(document.querySelector('.race-legend-head')?.textContent ?? ''));
  const at = Number((await page.locator('.race-legend-head').textContent())!.match(/\d+/)![0]);
  const i = history.candidates[1]!.pairs.indexOf(at);
  assert.ok((await page.locator('.race-legend li').nth(1).textContent())?.endsWith(deltaInterval(history.candidates[1]!.low[i]!, history.candidates[1]!.high[i]!)), `v8-strict-json at ${at}`);
  await page.mouse.move(0, 0);
  await shoot(page, '27-race');
  await assertAccessible(page, 'a racing run');

  // Its own URL: reload shows the race again.
  await page.reload();
  await settled(page);
  assert.equal(await shownRace(page), shown, 'reload shows the same race');
  await page.locator('.live[data-state="live"]').waitFor();
  assertNoProblems(context);
});

walk('a race followed live: as the worker goes on, v8-strict-json is stopped (cannot win, the exact rule), the others run to the end, and the chart, table and tasks saved follow', async (context) => {
  const { page, seeded } = context;
  const { race } = seeded;
  const client = seeded.ada.client;
  // On to 50 pairs: v8-strict-json cannot win before (its exact rule), v8-few-shot and v8-reasoning race on.
  const sent = performance.now();
  await raceRounds(client, race.worker, race, 50);
  await page.locator('[data-race-candidates] tbody tr').nth(1).locator('.badge', { hasText: 'cannot win' }).waitFor({ timeout: 10_000 });
  console.log(`  a race's decision reached its run's page in ${(performance.now() - sent).toFixed(0)} ms (50 pairs run meanwhile)`);
  const { run } = await raceAsAnswered(context);
  const strict = run.race.candidates[1]!;
  assert.equal([strict.state, strict.stop!.method], ['cannot_win', 'exact_maximum']);
  assert.ok(strict.stop!.bound <= 0 && strict.high > 0, 'exact: it cannot win, though its sequence still holds 0');
  assert.equal(run.race.candidates.map((candidate) => candidate.state), ['worse', 'cannot_win', 'live', 'live']);
  assert.is((await shownRace(page)).rows[1]![5], `at most ${meanDelta(strict.stop!.bound)} on the incumbent even scoring 1 on the ${raceDatapoints - strict.stopped_at!} datapoints left (exact)`);
  await settled(page);
  await shootFrom(page, '[data-race]', '28-race-live'); // docs/console-race.png
  await assertAccessible(page, 'a race, live');

  // The rest: the live two pair every datapoint, and the run ends.
  await raceRounds(client, race.worker, race, raceDatapoints);
  await page.locator('.page-head .actions .badge', { hasText: 'completed' }).waitFor({ timeout: 10_000 });
  const ended = await raceAsAnswered(context);
  assert.equal([ended.run.status, ended.run.reason], ['completed', 'all_done']);
  assert.equal(ended.run.race.candidates.map((candidate) => [candidate.state, candidate.pairs]), [['worse', terseStop(ended.run)], ['cannot_win', strict.stopped_at], ['finished', 60], ['finished', 60]]);
  assert.is(ended.run.counts.skipped, ended.run.race.tasks_saved);
  const finished = ended.run.race.candidates[2]!;
  assert.is(finished.low, finished.high, 'every datapoint paired: the exact mean difference');
  assert.is((await shownRace(page)).rows[2]![3], `${meanDelta(finished.low)} exact`);
  assert.equal((await shownRace(page)).cards[2], ['Still racing', '0 of 4', 'every candidate decided']);
  await settled(page);
  await shoot(page, '29-race-finished');
  await assertAccessible(page, 'a race that ended while its page was open');
  assertNoProblems(context);
});

function terseStop(run: RaceRunAnswer): number {
  return run.race.candidates[0]!.stopped_at!;
}

walk('a pair a race stopped early, compared: the notice before the verdict (who stopped whom, at how many datapoints, the race\'s bound) says the fixed-sample figures do not apply, linked to the run', async (context) => {
  const { page, seeded } = context;
  const { race } = seeded;
  const [terse, strict, fewShot] = race.candidates;
  const path = `/console/job-iterations/${race.incumbent.id}/compare/${terse!.id}`;
  await visit(context, path);
  const results = (await seeded.ada.client.get(`/api/job-iterations/${race.incumbent.id}/compare/${terse!.id}/`)).body.results;
  const stopped = results.stopped_early as { run: string; iteration: string; state: string; pairs: number; datapoints: number; low: number; high: number; alpha: number; method: string; note: string };
  assert.equal([stopped.run, stopped.iteration, stopped.state, stopped.datapoints], [race.run, terse!.id, 'worse', raceDatapoints]);
  const notice = page.locator('[data-stopped-early]');
  assert.is(await notice.getAttribute('data-stopped-early'), 'worse');
  assert.is(await notice.locator('.stopped-early-sentence').textContent(), `v8-terse was stopped as worse than returns-v7 at ${stopped.pairs} of 60 datapoints by the racing run.`);
  assert.is(await notice.locator('.stopped-early-bound').textContent(),
    `The race’s bound on the mean difference (v8-terse − returns-v7) when it stopped: ${deltaInterval(stopped.low, stopped.high)}, at α = 0.0125 (confidence sequence), valid however often the race looked.`);
  assert.is(await notice.locator('.stopped-early-note').textContent(), `The fixed-sample p-values and intervals below do not apply. ${stopped.note}`);
  const tops = await Promise.all(['[data-stopped-early]', '[data-verdict]'].map(async (selector) => (await page.locator(selector).boundingBox())!.y));
  assert.ok(tops[0]! < tops[1]!, 'the notice comes before the verdict');
  assert.is(await page.locator('[data-verdict]').getAttribute('data-verdict'), results.verdict, 'the verdict is still given, under it');
  await shoot(page, '30-compare-stopped-early');
  await assertAccessible(page, 'a pair a race stopped early, compared');

  // The other way round, a candidate stopped by the exact rule: the bound as to − from.
  await visit(context, `/console/job-iterations/${strict!.id}/compare/${race.incumbent.id}`);
  const reversed = (await seeded.ada.client.get(`/api/job-iterations/${strict!.id}/compare/${race.incumbent.id}/`)).body.results.stopped_early;
  assert.is(await notice.locator('.stopped-early-sentence').textContent(), `v8-strict-json was stopped as unable to beat returns-v7 at ${reversed.pairs} of 60 datapoints by the racing run.`);
  assert.ok((await notice.locator('.stopped-early-bound').textContent())?.startsWith(`The race’s bound on the mean difference (returns-v7 − v8-strict-json) when it stopped: ${deltaInterval(reversed.low, reversed.high)}, at α = 0.0125 (exact:`));
  // A candidate that ran to the end: no notice.
  await visit(context, `/console/job-iterations/${race.incumbent.id}/compare/${fewShot!.id}`);
  assert.is(await page.locator('[data-stopped-early]').count(), 0, 'a finished candidate was not stopped');
  // The notice's link: the run's page, its race.
  await visit(context, path);
  await notice.getByRole('link', { name: 'the racing run' }).click();
  await settled(page);
  assert.is(new URL(page.url()).pathname, `/console/runs/${race.run}`);
  await page.locator('[data-race]').waitFor();
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
  await settled(page); // the results columns, read after the table
  await shoot(page, '09-job-10000');
  await assertAccessible(page, 'a job with 10,000 iterations');
  assertNoProblems(context);
});

walk('traces: root spans with the span filters, kept in the URL', async (context) => {
  const { page } = context;
  await visit(context, '/console/traces');
  const traceRows = await rows(page, 'traces');
  assert.is(traceRows.length, 23, 'twelve small traces, the big one, the hostile one, nine of results (five of candidate-23, four of candidate-24)');
  const shownIds = traceRows.map((row) => row.at(-1)!);
  assert.ok(shownIds.every((id) => /^[0-9a-f]{8}…[0-9a-f]{8}$/.test(id)), 'ids are cut in the middle, whole in the tooltip');
  assert.is(new Set(shownIds).size, 23, 'and still tell the traces apart (the seeded ids share their first characters)');
  await shoot(page, '10-traces');
  await assertAccessible(page, 'the traces');
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
  // A result's trace whose spans never came (the agent exports none): the page says what that means.
  await visit(context, `/console/traces/${'ab'.repeat(16)}`);
  assert.is(await page.locator('h1').textContent(), 'No spans yet');
  assert.match(await page.locator('.lead').textContent() ?? '', /^No span of this trace has reached the service/);
  await shoot(page, '10-trace-without-spans');
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
  await assertAccessible(page, 'a trace');
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
    [`/console/runs/${seeded.hostileRun}`, hostile('task error')],
  ];
  for (const [path, text] of pages) {
    await visit(context, path);
    if (path.startsWith('/console/runs/')) {
      for (const field of ['worker name', 'worker host']) assert.ok((await page.locator('[data-workers]').innerText()).includes(hostile(field)), `the ${field} as text`);
    }
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
    if (path.includes('/console/runs/')) await shoot(page, '26-hostile-run');
    if (path.endsWith('/results')) await shoot(page, '17-hostile-results');
  }
  assertNoProblems(context);
});

/** Datapoints of the large comparison: more than the scatter draws. */
const scaleDatapoints = 10_300;

walk('two iterations compared on 10,300 datapoints: the scatter draws the first 10,000 and says so; too few in common, or another version, said plainly', async (context) => {
  const { page, seeded } = context;
  const client = seeded.ada.client;
  const post = async (path: string, body: unknown) => {
    const reply = await client.post(path, body);
    assert.is(reply.status, 201, `POST ${path}: ${reply.text.slice(0, 300)}`);
    return reply.body as { id: string };
  };
  // A project of its own, so that no other page's lists change.
  const project = await post('/api/projects/', { name: 'Scale', slug: 'scale' });
  const agent = await post('/api/agents/', { project: project.id, name: 'scale-bot', slug: 'scale-bot', display_name: 'Scale bot', model: 'gpt-4o-mini' });
  const dataset = await post('/api/datasets/', { agent: agent.id, name: 'many', datapoints: Array.from({ length: scaleDatapoints }, (_, i) => ({ input: { question: `case ${i}` } })) });
  const job = await post('/api/jobs/', { agent: agent.id, job_type: 'prompt_tuning', status: 'completed', baseline_score: 0.5 });
  const sides = [];
  for (const [i, seed] of [[0, 51], [1, 52]] as const) {
    const iteration = await post('/api/job-iterations/', { job: job.id, iteration_name: `scale-${i + 1}`, order: i, avg_score: 0.5 });
    for (let start = 0; start < scaleDatapoints; start += 1_000) {
      await writeResults(client, iteration.id, dataset.id, Array.from({ length: Math.min(1_000, scaleDatapoints - start) }, (_, k) => caseResult(start + k, 0, seed)));
    }
    sides.push(iteration.id);
  }
  // Cold: the comparison's statistics (a bootstrap of 10,000 resamples) are computed on this visit.
  const started = performance.now();
  await page.goto(`${context.running.url}/console/job-iterations/${sides[0]}/compare/${sides[1]}`);
  await page.locator('.verdict-sentence').waitFor({ timeout: 30_000 });
  const verdictMs = performance.now() - started;
  await page.waitForFunction((count) => document.querySelectorAll('svg.scatter .scatter-point').length === count, 10_000, { timeout: 30_000, polling: 50 });
  console.log(`  a cold comparison of ${scaleDatapoints.toLocaleString('en-US')} paired datapoints: the verdict in ${verdictMs.toFixed(0)} ms, the scatter (10,000 drawn) in ${(performance.now() - started).toFixed(0)} ms`);
  // Finely scored datapoints meet on a spot only by chance, in twos: no spot holds 1% of them, so none is counted (nor explained).
  assert.is(await page.locator('svg.scatter .scatter-count').count(), 0);
  assert.not.match((await page.locator('.scatter-side .hint').first().textContent()) ?? '', /×N/);
  await settled(page);
  assert.is(await page.locator('[data-scatter-note]').textContent(), 'Showing the first 10,000 of 10,300 paired datapoints, in datapoint order.');
  assert.equal(await clippedNotes(page), [], 'no note is cut, with counts of five digits');
  const orders = await page.locator('svg.scatter .scatter-point').evaluateAll((marks) => marks.map((mark) => Number((mark as SVGElement).dataset.order)));
  assert.equal([Math.min(...orders), Math.max(...orders), new Set(orders).size], [0, 9_999, 10_000], 'the first 10,000, each once');
  // Picking from the keyboard at this size: End goes to the last drawn.
  await page.locator('svg.scatter .scatter-point[tabindex="0"]').focus();
  await page.keyboard.press('End');
  assert.is(await page.locator('[data-picked] h3').textContent(), 'Datapoint #9999');
  await shoot(page, '20-compare-10000');
  await assertAccessible(page, 'two iterations compared on 10,300 datapoints');

  // Five datapoints in common: too few for a verdict, and said so.
  const few = await post('/api/job-iterations/', { job: job.id, iteration_name: 'scale-3', order: 2, avg_score: 0.5 });
  await writeResults(client, few.id, dataset.id, Array.from({ length: 5 }, (_, order) => caseResult(order, 0, 53)));
  await visit(context, `/console/job-iterations/${sides[0]}/compare/${few.id}`);
  assert.is(await page.locator('#view .block').first().getAttribute('data-verdict'), 'insufficient_data');
  assert.is(await page.locator('.verdict-sentence').textContent(), 'Too few paired datapoints for a verdict: 5 paired, at least 10 are needed.');
  assert.is(await page.locator('[data-unpaired]').textContent(), 'Not paired: 10,295 scored by scale-1 only (never imputed).');
  assert.is(await page.locator('svg.scatter .scatter-point').count(), 5);
  await shoot(page, '21-compare-insufficient');
  await assertAccessible(page, 'two iterations compared on five datapoints');

  // Results of another version of the dataset: not comparable, with the API's reason.
  const other = await post('/api/datasets/', { agent: agent.id, name: 'few', datapoints: [{ input: { question: 'one' } }, { input: { question: 'two' } }] });
  const moved = await post('/api/job-iterations/', { job: job.id, iteration_name: 'scale-4', order: 3, avg_score: 0.5 });
  await writeResults(client, moved.id, other.id, [caseResult(0, 0, 54), caseResult(1, 0, 54)]);
  await visit(context, `/console/job-iterations/${sides[0]}/compare/${moved.id}`);
  assert.is(await page.locator('#view .block').first().getAttribute('data-verdict'), 'not_comparable');
  assert.is(await page.locator('.verdict-sentence').textContent(), 'Not comparable: different dataset versions: 1 and 2.');
  assert.equal(await page.locator('svg.scatter, [data-flips]').count(), 0);
  await assertAccessible(page, 'two iterations of different dataset versions compared');

  // Pass/fail scores: many datapoints share each spot, and each spot says how many it holds.
  const passFail = [];
  for (const [i, scores] of [[5, [0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]], [6, [1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0]]] as const) {
    const iteration = await post('/api/job-iterations/', { job: job.id, iteration_name: `scale-${i}`, order: i });
    await writeResults(client, iteration.id, dataset.id, scores.map((score, order) => ({ datapoint_order: order, attempt: 0, score, passed: score === 1 })));
    passFail.push(iteration.id);
  }
  await visit(context, `/console/job-iterations/${passFail[0]}/compare/${passFail[1]}`);
  assert.is(await page.locator('svg.scatter .scatter-point').count(), 12);
  assert.equal((await page.locator('svg.scatter .scatter-count').allTextContents()).sort(), ['×2', '×3', '×6'], '0 → 1 three times, 1 → 1 six, 1 → 0 two (0 → 0 once: no count)');
  assert.match((await page.locator('.scatter-side .hint').first().textContent()) ?? '', /×N beside a mark: N datapoints with the same two scores \(on spots holding at least 1% of them\)\.$/);
  const outside = await page.locator('svg.scatter .scatter-count').evaluateAll((labels) => labels.filter((label) => {
    const box = (label as SVGTextElement).getBBox();
    return box.x < 0 || box.x + box.width > 520 || box.y < 0;
  }).length);
  assert.is(outside, 0, 'every count within the chart (those at the right edge on the mark\'s left)');
  await shoot(page, '21-compare-pass-fail');

  // A run cancelled before any lease: it took no time, and its card says only when it ended.
  const unleased = await post(`/api/jobs/${job.id}/runs/`, { dataset: dataset.id, iterations: [passFail[0]] }) as { id: string };
  const cancelled = await client.post(`/api/runs/${unleased.id}/cancel/`, {});
  assert.is(cancelled.status, 200, cancelled.text);
  await visit(context, `/console/runs/${unleased.id}`);
  const cards = await statCards(page);
  assert.equal(cards[1], ['Rate', '—', 'no task was leased']);
  assert.equal(cards[2], ['Took', '—', `ended ${dateText(cancelled.body.finished_at)}`]);
  assertNoProblems(context);
});

walk.run();
