// The console: a single-page app for the browser, served by this process from local files (the
// browser code in src/console/, the chart library from the installed uplot package), so that
// `npm start` and a browser are all a person needs. The page and its files are open; everything
// they show comes from the public API with the token the person signs in with.
//
// Each page of the console has a URL of its own (so reload and back/forward work): "/console" and
// the API path of what it shows. Every one of them answers the same HTML; the browser code reads
// the URL. Only the files listed here are served: a name not in the list is 404.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { consoleDir } from '../../assets.ts';
import type { ApiContext, Route } from '../route.ts';

const uplotDir = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');

const javascript = 'text/javascript; charset=utf-8';
const css = 'text/css; charset=utf-8';

/** The console's files: the name served under /static/console/, where it is read from, its media type. */
const files: Readonly<Record<string, { path: string; type: string }>> = {
  'console.css': { path: join(consoleDir, 'console.css'), type: css },
  'uplot.css': { path: join(uplotDir, 'uPlot.min.css'), type: css },
  'uplot.js': { path: join(uplotDir, 'uPlot.esm.js'), type: javascript },
  ...Object.fromEntries(
    [
      'agent-page.js',
      'api.js',
      'compare-page.js',
      'dataset-page.js',
      'diff-page.js',
      'dom.js',
      'event-stream.js',
      'format.js',
      'job-page.js',
      'live.js',
      'main.js',
      'project-page.js',
      'projects-page.js',
      'race-chart.js',
      'results-page.js',
      'router.js',
      'run-page.js',
      'scatter.js',
      'score-chart.js',
      'sign-in.js',
      'table.js',
      'trace-page.js',
      'traces-page.js',
      'waterfall.js',
    ].map((name) => [name, { path: join(consoleDir, name), type: javascript }]),
  ),
};

/** The names a browser may ask for; the pattern is also the parameter's schema in the API document. */
export const consoleFileNames: readonly string[] = Object.keys(files);
const filePattern = new RegExp(`^(?:${consoleFileNames.map((name) => name.replace(/\./g, '\\.')).join('|')})$`, 'u');

/**
 * The console talks only to this service and runs only its own files: no inline script or style,
 * no other origin, no framing. Styles set from script (CSSOM, as uPlot and the waterfall do) are
 * not inline styles, so the policy needs no 'unsafe-inline'.
 */
export const consolePolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The pages of the console: "/" and "/console" + the API path of what the page shows. */
const pages: readonly { path: string; summary: string; params?: Route['params'] }[] = [
  { path: '/', summary: 'The console: projects.' },
  { path: '/console', summary: 'The console: projects (as at /).' },
  { path: '/console/projects', summary: 'The console: projects (as at /).' },
  { path: '/console/projects/:id', summary: 'The console: a project, its agents, recent jobs and members.' },
  { path: '/console/agents/:id', summary: 'The console: an agent, its eval spec, dataset versions and jobs.' },
  { path: '/console/datasets/:id', summary: 'The console: a dataset version and its datapoints.' },
  { path: '/console/datasets/:id/diff/:other_id', summary: 'The console: what changed between two dataset versions.' },
  { path: '/console/jobs/:id', summary: 'The console: a job, its score curve and its iterations, live.' },
  { path: '/console/job-iterations/:id/compare/:other_id', summary: 'The console: two iterations of a job compared.' },
  { path: '/console/job-iterations/:id/results', summary: "The console: an iteration's results, filtered and sorted, each linked to its trace and datapoint." },
  { path: '/console/runs/:id', summary: "The console: a run, its progress, tasks, errors, iterations and workers (and a racing run's race), live." },
  { path: '/console/traces', summary: 'The console: traces (root spans), filtered.' },
  { path: '/console/traces/:trace_id', summary: 'The console: one trace as a waterfall.', params: { trace_id: /^[0-9a-fA-F]{32}$/ } },
];

interface Loaded {
  content: Buffer;
  etag: string;
}

/** Read once per process, on first use (a console nobody opens costs nothing). */
const loaded = new Map<string, Loaded>();
function load(path: string): Loaded {
  let file = loaded.get(path);
  if (!file) {
    const content = readFileSync(path);
    loaded.set(path, (file = { content, etag: `"${createHash('sha256').update(content).digest('base64url').slice(0, 27)}"` }));
  }
  return file;
}

/**
 * Files keep their names across versions, so the browser keeps them but asks each time whether
 * they changed (`no-cache` + ETag): a 304 is cheap, and a new version is never hidden by a cache.
 */
function send(ctx: ApiContext, path: string, type: string): void {
  const file = load(path);
  ctx.set('Content-Security-Policy', consolePolicy);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('ETag', file.etag);
  // Koa compares the ETag only for an answer that would be a success.
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.type = type;
  ctx.body = file.content;
}

export function consoleRoutes(): Route[] {
  const pageRoutes: Route[] = pages.map(({ path, summary, params }) => ({
    method: 'GET',
    path,
    auth: false,
    tag: 'console',
    ...(params ? { params } : {}),
    summary,
    responses: { 200: { media: { 'text/html': null } }, 304: null },
    handle: (ctx) => send(ctx, join(consoleDir, 'index.html'), 'text/html; charset=utf-8'),
  }));
  return [
    ...pageRoutes,
    {
      method: 'GET',
      path: '/static/console/:file',
      auth: false,
      tag: 'console',
      params: { file: filePattern },
      summary: 'A file of the console (its code, styles and chart library).',
      responses: { 200: { media: { 'text/css': null, 'text/javascript': null } }, 304: null },
      handle(ctx) {
        const file = files[ctx.params.file!]!;
        send(ctx, file.path, file.type);
      },
    },
  ];
}
