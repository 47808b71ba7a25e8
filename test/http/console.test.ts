// The console's page and files over HTTP: every console URL answers the one page, the files are
// exactly those of src/console/ (plus uPlot) with their media types, each answer carries the
// strict Content-Security-Policy and revalidates with its ETag, and nothing else is served.
import { readdirSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { consoleFileNames, consolePolicy } from '../../src/http/resources/console.ts';
import { start, type Running } from '../helpers/service.ts';

const consoleSuite = suite<{ running: Running }>('console files');

consoleSuite.before(async (context) => {
  context.running = await start();
});

consoleSuite.after(async (context) => {
  await context.running?.stop();
});

const uuid = '00000000-0000-4000-8000-000000000000';
const pages = [
  '/',
  '/console/',
  '/console/projects',
  `/console/projects/${uuid}`,
  `/console/agents/${uuid}`,
  `/console/datasets/${uuid}`,
  `/console/datasets/${uuid}/diff/${uuid}`,
  `/console/jobs/${uuid}/`,
  `/console/job-iterations/${uuid}/compare/${uuid}`,
  `/console/job-iterations/${uuid}/results`,
  `/console/runs/${uuid}`,
  '/console/traces',
  `/console/traces/${'ab'.repeat(16)}`,
];

function assertGuarded(response: Response, where: string): void {
  assert.is(response.headers.get('content-security-policy'), consolePolicy, `${where}: Content-Security-Policy`);
  assert.is(response.headers.get('x-content-type-options'), 'nosniff', `${where}: nosniff`);
  assert.is(response.headers.get('referrer-policy'), 'no-referrer', `${where}: Referrer-Policy`);
  assert.is(response.headers.get('cache-control'), 'no-cache', `${where}: Cache-Control`);
  assert.ok(response.headers.get('etag'), `${where}: ETag`);
}

consoleSuite('every console URL answers the same page, with no credentials and the strict policy', async ({ running }) => {
  let first: string | undefined;
  for (const path of pages) {
    const response = await fetch(running.url + path);
    const html = await response.text();
    assert.is(response.status, 200, path);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html; charset=utf-8$/, path);
    assertGuarded(response, path);
    first ??= html;
    assert.is(html, first, `${path} is the one page`);
  }
  assert.match(first!, /<script type="module" src="\/static\/console\/main\.js"><\/script>/);
  assert.not.match(first!, /<script>|<style|\sstyle=|\son\w+=/i, 'no inline script, style or handler');
  assert.not.match(first!, /(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]/i, 'names no other host');
});

consoleSuite('the policy allows this origin only, and no inline script or style', () => {
  assert.is(consolePolicy, "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
});

consoleSuite('every file of src/console/ the browser loads is served with its media type, and uPlot with it', async ({ running }) => {
  const folder = readdirSync(new URL('../../src/console/', import.meta.url)).filter((name) => /\.(?:js|css)$/.test(name));
  assert.equal([...consoleFileNames].filter((name) => !name.startsWith('uplot.')).sort(), folder.sort(), 'the served list is the folder');
  for (const name of consoleFileNames) {
    const response = await fetch(`${running.url}/static/console/${name}`);
    const bytes = await response.arrayBuffer();
    assert.is(response.status, 200, name);
    assert.ok(bytes.byteLength > 0, `${name} is not empty`);
    const type = name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
    assert.is(response.headers.get('content-type'), type, `${name}: media type`);
    assertGuarded(response, name);
  }
});

consoleSuite('a file the browser already has answers 304 to its ETag', async ({ running }) => {
  for (const path of ['/', '/static/console/main.js', '/static/console/uplot.js']) {
    const first = await fetch(running.url + path);
    await first.arrayBuffer();
    const etag = first.headers.get('etag')!;
    // fetch adds "Cache-Control: no-cache" (skip every cache) to a conditional request unless the
    // request names its own Cache-Control; a browser revalidating sends max-age=0.
    const again = await fetch(running.url + path, { headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' } });
    assert.is(again.status, 304, `${path} revalidated`);
    assert.is((await again.arrayBuffer()).byteLength, 0, `${path}: no body`);
    assertGuarded(again, `${path} (304)`);
  }
});

consoleSuite('nothing but the listed files is served: not the page, its config, its types, or another path', async ({ running }) => {
  const refused = [
    '/static/console/index.html',
    '/static/console/tsconfig.json',
    '/static/console/uplot.d.ts',
    '/static/console/uPlot.esm.js',
    '/static/console/..%2Fconsole.ts',
    '/static/console/..%2F..%2Fpackage.json',
    '/static/console/main.js.map',
    '/static/console/',
    '/console/unknown',
    '/console/jobs/not-a-uuid',
    '/console/runs/not-a-uuid',
    `/console/jobs/${uuid}/extra`,
    '/console/traces/not-a-trace-id',
    '/index.html',
  ];
  for (const path of refused) {
    const reply = await running.client.get(path);
    assert.is(reply.status, 404, path);
  }
});

consoleSuite.run();
