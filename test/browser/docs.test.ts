// The interactive API reference in a real browser: GET /api/docs/ in headless Chromium renders
// every operation of the document, "Try it out" -> "Execute" on GET /api/health/ shows the live
// answer, and the page never reaches for a host other than the service (this machine has no
// network, and the reference must work without one). axe-core checks the page as the console's
// pages are checked (WCAG 2 A/AA, nothing serious or critical), less the violations of Swagger UI's
// own markup and styles listed below. Needs Debian's chromium package.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { OpenApiDocument } from '../../src/http/openapi.ts';
import { browserTimeoutMs as timeoutMs, launchChromium as launch } from '../helpers/chromium.ts';
import { withService } from '../helpers/service.ts';
import { assertAccessible, type KnownViolation } from './axe.ts';

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;
/**
 * What axe finds in Swagger UI itself (swagger-ui-dist, served as it ships: its markup is made by
 * its own script and styled by its own stylesheet, none of it in src/console/), set aside rule by
 * rule on exactly the elements it was found on: every other rule still checks them, and what is
 * set aside is printed on each run.
 */
const swaggerViolations: KnownViolation[] = [
  { rule: 'color-contrast', selector: '.opblock-summary-method', why: 'the method badges: white bold 14px on Swagger UI\'s method colours, 1.6:1 (PATCH #50e3c2) to 3.6:1 (DELETE #f93e3e)' },
  { rule: 'nested-interactive', selector: '.opblock-summary-control', why: 'each operation\'s summary is a <button> that holds a link (the path, <a class="nostyle"> to the operation\'s own anchor)' },
  { rule: 'color-contrast', selector: '.json-schema-2020-12-expand-deep-button', why: 'the schemas\' "Expand all" buttons: #afaeae on #efefef, 1.9:1' },
  { rule: 'color-contrast', selector: '.json-schema-2020-12__constraint', why: 'the schemas\' constraint chips ("non-empty", "uuid"): white on #d69e2e, 2.4:1' },
  { rule: 'color-contrast', selector: '.info .title small pre', why: 'the title\'s version badges: white on #7d8492 (3.8:1) and the OAS badge white on #89bf04 (2.2:1)' },
  { rule: 'color-contrast', selector: '.info hgroup .link, .info hgroup .url', why: 'the link to the document under the title: #4990e2 on white, 3.3:1' },
  { rule: 'color-contrast', selector: '.btn.authorize, .btn.authorize *', why: 'the Authorize button: #49cc90 on white, 2.0:1' },
  { rule: 'color-contrast', selector: '.try-out__btn', why: 'an operation\'s "Cancel" (once tried out): #ff6060 on #fcfdff, 2.9:1' },
  { rule: 'color-contrast', selector: '.btn.execute', why: 'the "Execute" button: white bold on #4990e2, 3.3:1' },
  { rule: 'color-contrast', selector: '.download-contents', why: 'the response\'s "Download" button: white on #7d8293, 3.8:1' },
  { rule: 'color-contrast', selector: '.highlight-code .microlight span', why: 'the response body\'s syntax colours on #333333: numbers #d36363, 3.5:1' },
];

/** Where the page is screenshotted, to be looked at as a reader would (as the console's are). */
const screenshots = process.env.DOCS_SCREENSHOTS ?? join(tmpdir(), 'overmind-docs-screenshots');

test('Swagger UI renders every operation, executes a call, and loads nothing from another host', async () => {
  await withService(async ({ url }) => {
    const apiDocument = (await (await fetch(`${url}/api/schema/`)).json()) as OpenApiDocument;
    const operations = Object.entries(apiDocument.paths).flatMap(([path, item]) =>
      methods.filter((method) => item[method]).map((method) => ({ path, method, summary: item[method]!.summary })));
    assert.ok(operations.length > 40, 'the document has operations');

    const browser = await launch();
    try {
      const page = await browser.newPage();
      page.setDefaultTimeout(timeoutMs);
      const requested: string[] = [];
      const pageErrors: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      page.on('pageerror', (error) => pageErrors.push(error.message));

      const response = await page.goto(`${url}/api/docs/`, { waitUntil: 'load', timeout: timeoutMs });
      assert.is(response?.status(), 200, 'GET /api/docs/');

      // Swagger UI fetches the document, then renders every operation at once (tags expanded).
      await page.locator('.opblock').first().waitFor({ state: 'visible' });
      await page.waitForFunction((count) => document.querySelectorAll('.opblock').length >= count, operations.length, { timeout: 5_000 }).catch(() => undefined);
      const rendered = await page.locator('.opblock').evaluateAll((blocks) =>
        blocks.map((block) => ({
          method: block.querySelector('.opblock-summary-method')?.textContent?.trim().toLowerCase() ?? '',
          path: block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '',
          summary: block.querySelector('.opblock-summary-description')?.textContent?.trim() ?? '',
        })));
      assert.is(rendered.length, operations.length, `Swagger UI rendered ${rendered.length} operations, the document has ${operations.length}`);
      const describe = (operation: { method: string; path: string; summary: string }) => `${operation.method.toUpperCase()} ${operation.path} ${operation.summary}`;
      assert.equal(rendered.map(describe).sort(), operations.map(describe).sort(), 'the rendered operations are the document\'s');
      for (const known of ['/api/health/', '/api/projects/{id}/', '/api/agents/{id}/eval_spec/', '/v1/traces']) {
        assert.ok(await page.locator(`.opblock-summary-path[data-path="${known}"]`).first().isVisible(), `${known} is visible`);
      }
      assert.ok(await page.getByText('Service health.').first().isVisible(), 'a summary is visible');
      mkdirSync(screenshots, { recursive: true });
      await page.screenshot({ path: join(screenshots, '01-reference.png') });
      await assertAccessible(page, 'the API reference', swaggerViolations);

      // Try it out -> Execute on GET /api/health/, which needs no credentials.
      const health = page.locator('.opblock.opblock-get').filter({ has: page.locator('.opblock-summary-path[data-path="/api/health/"]') });
      assert.is(await health.count(), 1, 'one GET /api/health/ block');
      await health.locator('.opblock-summary').click();
      await health.locator('button.try-out__btn').click();
      const [answer] = await Promise.all([
        page.waitForResponse((candidate) => new URL(candidate.url()).pathname === '/api/health/'),
        health.locator('button.execute').click(),
      ]);
      assert.is(answer.status(), 200, 'the browser\'s GET /api/health/');
      const live = health.locator('.live-responses-table');
      await live.waitFor({ state: 'visible' });
      assert.is((await live.locator('.response .response-col_status').first().textContent())?.trim(), '200', 'the rendered status');
      const bodyText = (await live.locator('.response-col_description pre').first().textContent()) ?? '';
      let body: { status?: string; storage?: string };
      try {
        body = JSON.parse(bodyText) as typeof body;
      } catch {
        throw new Error(`the rendered response body is not JSON: ${bodyText.slice(0, 300)}`);
      }
      assert.is(body.status, 'healthy', 'the rendered body');
      assert.is(body.storage, 'memory', 'the rendered body');
      assert.ok((await health.locator('.request-url').textContent())?.includes(`${url}/api/health/`), 'the request URL shown is the service\'s');
      await health.screenshot({ path: join(screenshots, '02-health-executed.png') });
      await assertAccessible(page, 'the API reference, a call executed', swaggerViolations);

      // Nothing but the service (and inline data) was asked for.
      const origin = new URL(url).origin;
      const foreign = requested.filter((requestUrl) => !/^(?:data|blob):/.test(requestUrl) && new URL(requestUrl).origin !== origin);
      assert.equal(foreign, [], `requests to other hosts: ${foreign.join(', ')}`);
      assert.ok(requested.some((requestUrl) => requestUrl === `${url}/api/schema/`), 'the page loaded the document from the service');
      assert.equal(pageErrors, [], `errors in the page: ${pageErrors.join('; ')}`);
    } finally {
      await browser.close();
    }
  });
});

test.run();
