// The API document (GET /api/schema/) and the reference page (GET /api/docs/), held to the
// service that serves them: the document is valid OpenAPI 3.1, it names exactly the operations
// the router serves (checked against the route table and against the live service), its security
// and its parameters, bodies and statuses say what the routes do, and the reference page needs
// nothing but the service itself.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { allRoutes } from '../../src/app.ts';
import type { OpenApiDocument, Operation, ResponseObject } from '../../src/http/openapi.ts';
import type { Route } from '../../src/http/route.ts';
import { escapePointer } from '../helpers/documented-responses.ts';
import { start, type Running } from '../helpers/service.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
const methods: readonly Method[] = ['get', 'post', 'put', 'patch', 'delete'];

interface Context {
  running: Running;
  document: OpenApiDocument;
  routes: Route[];
}

const openapi = suite<Context>('openapi');

openapi.before(async (context) => {
  context.running = await start();
  context.routes = allRoutes(context.running.service.deps);
  // Over real HTTP, with no credentials: the document is open to everyone.
  const response = await fetch(`${context.running.url}/api/schema/`);
  assert.is(response.status, 200, 'GET /api/schema/ without credentials');
  assert.match(response.headers.get('content-type') ?? '', /^application\/json\b/);
  context.document = (await response.json()) as OpenApiDocument;
});

openapi.after(async (context) => {
  await context.running?.stop();
});

/** The path the document is expected to use for a route: `{id}` for `:id`, and under /api/ the canonical trailing slash. */
function documentedPath(routePath: string): string {
  const templated = routePath.replace(/:(\w+)/g, '{$1}');
  return templated.startsWith('/api/') ? `${templated}/` : templated;
}

/** A value for each path parameter that the route accepts (so a request reaches the route, not a 404 for a malformed id). */
const sampleParams: Record<string, string> = {
  trace_id: '0123456789abcdef0123456789abcdef',
};
/** Files are named per folder: each static route serves its own list. */
const sampleFiles: Record<string, string> = {
  '/static/swagger-ui/{file}': 'swagger-ui.css',
  '/static/console/{file}': 'main.js',
};
const sampleUuid = '00000000-0000-4000-8000-000000000000';

function samplePath(template: string): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => sampleParam(template, name));
}

function sampleParam(template: string, name: string): string {
  return (name === 'file' ? sampleFiles[template] : sampleParams[name]) ?? sampleUuid;
}

function operations(document: OpenApiDocument): { path: string; method: Method; operation: Operation }[] {
  const found: { path: string; method: Method; operation: Operation }[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of methods) {
      const operation = item[method];
      if (operation) found.push({ path, method, operation });
    }
  }
  return found;
}

function key(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}

function formatErrors(errors: unknown): string {
  if (!Array.isArray(errors)) return String(errors);
  const lines = errors.slice(0, 30).map((error: { instancePath?: string; schemaPath?: string; message?: string; params?: unknown }) =>
    `  at ${error.instancePath || '/'}: ${error.message ?? 'invalid'} ${JSON.stringify(error.params ?? {})} (schema ${error.schemaPath ?? '?'})`);
  if (errors.length > 30) lines.push(`  ... and ${errors.length - 30} more`);
  return lines.join('\n');
}

// (a) A valid OpenAPI 3.1 document.

openapi('the document is valid OpenAPI 3.1', async ({ document }) => {
  assert.match(document.openapi, /^3\.1\.\d+$/, 'openapi version');
  const validator = new Validator();
  // The validator resolves references in place: give it a copy.
  const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
  assert.ok(result.valid, `the document is not valid OpenAPI ${validator.version}:\n${formatErrors(result.errors)}`);
  assert.is(validator.version, '3.1');
  // Every $ref resolves (resolveRefs throws on one that does not).
  validator.resolveRefs();
});

openapi('every schema in the document compiles as JSON Schema 2020-12 (the 3.1 dialect)', ({ document }) => {
  // Formats are annotations in OpenAPI (the service has its own, such as "datetime"): not checked here.
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  addFormats.default(ajv);
  ajv.addSchema(structuredClone(document), 'openapi');
  const pointers: string[] = Object.keys(document.components.schemas).map((name) => `/components/schemas/${escapePointer(name)}`);
  for (const { path, method, operation } of operations(document)) {
    const at = `/paths/${escapePointer(path)}/${method}`;
    (operation.parameters ?? []).forEach((_, index) => pointers.push(`${at}/parameters/${index}/schema`));
    const content = (operation.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content ?? {};
    for (const [media, { schema }] of Object.entries(content)) if (schema) pointers.push(`${at}/requestBody/content/${escapePointer(media)}/schema`);
  }
  const failures: string[] = [];
  for (const pointer of pointers) {
    try {
      ajv.compile({ $ref: `openapi#${pointer}` });
    } catch (error) {
      failures.push(`  ${pointer}: ${(error as Error).message}`);
    }
  }
  assert.is(failures.length, 0, `schemas that do not compile:\n${failures.join('\n')}`);
});

// (b) The document and the router name the same operations.

openapi('every route the router serves is documented, and nothing else is', ({ document, routes }) => {
  const served = new Set(routes.map((route) => key(route.method, documentedPath(route.path))));
  assert.is(served.size, routes.length, 'two routes share a method and path');
  const documented = new Set(operations(document).map(({ path, method }) => key(method, path)));
  const undocumented = [...served].filter((operation) => !documented.has(operation));
  const unserved = [...documented].filter((operation) => !served.has(operation));
  assert.equal(undocumented, [], `routes the document does not describe: ${undocumented.join(', ')}`);
  assert.equal(unserved, [], `documented operations no route serves: ${unserved.join(', ')}`);
  for (const item of Object.values(document.paths)) {
    const extra = Object.keys(item).filter((name) => !methods.includes(name as Method));
    assert.equal(extra, [], 'a path item holds something other than operations (head, options, trace...)');
  }
});

openapi('operation ids are unique', ({ document }) => {
  const ids = operations(document).map(({ operation }) => operation.operationId);
  const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
  assert.equal(repeated, [], `operation ids used twice: ${repeated.join(', ')}`);
  assert.ok(ids.every((id) => typeof id === 'string' && id !== ''), 'every operation has an id');
});

openapi('the live service offers exactly the documented methods on every documented path, with and without the slash', async ({ document, running }) => {
  for (const [template, item] of Object.entries(document.paths)) {
    const documented = methods.filter((method) => item[method]).map((method) => method.toUpperCase()).sort();
    const path = samplePath(template);
    // Every path under /api/ answers with and without its trailing slash.
    const forms = template.startsWith('/api/') ? [path, path.replace(/\/$/, '')] : [path];
    for (const form of forms) {
      const options = await fetch(running.url + form, { method: 'OPTIONS' });
      await options.arrayBuffer();
      assert.is(options.status, 200, `OPTIONS ${form}`);
      const allowed = (options.headers.get('allow') ?? '').split(',').map((method) => method.trim()).filter((method) => method && method !== 'HEAD' && method !== 'OPTIONS').sort();
      assert.equal(allowed, documented, `Allow of ${form} (documented as ${template})`);
      const absent = methods.map((method) => method.toUpperCase()).find((method) => !documented.includes(method))!;
      const wrong = await running.client.request(absent, form);
      assert.is(wrong.status, 405, `${absent} ${form}: ${wrong.text}`);
      assert.is(wrong.body.code, 'method_not_allowed');
    }
  }
});

openapi('every documented operation reaches its route without credentials: 401 when it needs them, an answer otherwise', async ({ document, running }) => {
  for (const { path: template, method, operation } of operations(document)) {
    const path = samplePath(template);
    const forms = template.startsWith('/api/') ? [path, path.replace(/\/$/, '')] : [path];
    for (const form of forms) {
      const where = `${method.toUpperCase()} ${form}`;
      const body = ['post', 'put', 'patch'].includes(method) ? {} : undefined;
      // The client also holds the answer to the document: its status must be declared there.
      const reply = await running.client.request(method.toUpperCase(), form, body);
      if (operation.security.length > 0) {
        assert.is(reply.status, 401, `${where}: ${reply.text}`);
        assert.is(reply.body.code, 'not_authenticated', where);
        assert.ok(reply.headers.get('www-authenticate'), `${where}: WWW-Authenticate`);
      } else {
        assert.not.ok([401, 404, 405].includes(reply.status), `${where} is open, yet answered ${reply.status}: ${reply.text.slice(0, 200)}`);
      }
    }
  }
});

openapi('an unknown path is 404 and documented as such', async ({ running }) => {
  for (const path of ['/api/nothing-here/', '/api/projects/extra/segments/here/', '/nothing']) {
    const reply = await running.client.get(path);
    assert.is(reply.status, 404, path);
    assert.equal(reply.body, { detail: 'Not found.', code: 'not_found' });
  }
});

// (c) Security.

const openOperations = [
  'GET /health',
  'GET /api/health/',
  'POST /api/auth/register/',
  'POST /api/auth/token/',
  'POST /api/auth/token/refresh/',
  'GET /api/schema/',
  'GET /api/docs/',
  'GET /static/swagger-ui/{file}',
  'GET /metrics',
  'GET /',
  'GET /console',
  'GET /console/projects',
  'GET /console/projects/{id}',
  'GET /console/agents/{id}',
  'GET /console/datasets/{id}',
  'GET /console/datasets/{id}/diff/{other_id}',
  'GET /console/jobs/{id}',
  'GET /console/job-iterations/{id}/compare/{other_id}',
  'GET /console/job-iterations/{id}/results',
  'GET /console/runs/{id}',
  'GET /console/traces',
  'GET /console/traces/{trace_id}',
  'GET /static/console/{file}',
].sort();

openapi('both security schemes exist, authenticated operations accept either, open ones need none', ({ document, routes }) => {
  const schemes = document.components.securitySchemes as Record<string, Record<string, unknown>>;
  const bearer = Object.keys(schemes).filter((name) => schemes[name]!.type === 'http' && String(schemes[name]!.scheme).toLowerCase() === 'bearer');
  const apiKey = Object.keys(schemes).filter((name) => schemes[name]!.type === 'apiKey');
  assert.is(bearer.length, 1, 'one HTTP bearer scheme');
  assert.is(schemes[bearer[0]!]!.bearerFormat, 'JWT');
  assert.is(apiKey.length, 1, 'one API key scheme');
  assert.is(schemes[apiKey[0]!]!.in, 'header');
  assert.is(schemes[apiKey[0]!]!.name, 'X-Api-Key');
  const global = (document as { security?: unknown[] }).security;
  assert.ok(global === undefined || global.length === 0, 'no document-wide security: it would apply to the open operations');

  const open: string[] = [];
  for (const { path, method, operation } of operations(document)) {
    const where = key(method, path);
    const security = operation.security ?? [];
    for (const requirement of security) {
      for (const name of Object.keys(requirement)) assert.ok(schemes[name], `${where} names an unknown security scheme "${name}"`);
    }
    if (security.length === 0) {
      open.push(where);
      continue;
    }
    // Alternatives, each enough on its own: a bearer token (JWT or key) or an X-Api-Key header.
    assert.equal(security, [{ [bearer[0]!]: [] }, { [apiKey[0]!]: [] }], `${where} security`);
  }
  assert.equal(open.sort(), openOperations, 'the open operations');
  const openRoutes = routes.filter((route) => !route.auth).map((route) => key(route.method, documentedPath(route.path)));
  assert.equal(openRoutes.sort(), openOperations, 'the routes that need no credentials');
});

// (d) Parameters, bodies and statuses.

function declared(operation: Operation): Set<number> {
  return new Set(Object.keys(operation.responses).map(Number));
}

openapi('every operation declares its path and query parameters', ({ document, routes, running }) => {
  const documents = running.service.deps.validator.documents;
  for (const route of routes) {
    const path = documentedPath(route.path);
    const where = key(route.method, path);
    const operation = document.paths[path]![route.method.toLowerCase() as Method]!;
    const parameters = (operation.parameters ?? []) as { name: string; in: string; required?: boolean; schema?: Record<string, unknown> }[];
    const pairs = parameters.map((parameter) => `${parameter.in}:${parameter.name}`);
    assert.is(new Set(pairs).size, pairs.length, `${where}: a parameter is declared twice`);

    const inPath = [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name!);
    const pathParameters = parameters.filter((parameter) => parameter.in === 'path');
    assert.equal(pathParameters.map((parameter) => parameter.name).sort(), [...inPath].sort(), `${where}: path parameters`);
    for (const parameter of pathParameters) {
      assert.is(parameter.required, true, `${where}: path parameter ${parameter.name} is required`);
      const pattern = route.params?.[parameter.name];
      if (pattern) {
        assert.is(parameter.schema?.pattern, pattern.source, `${where}: ${parameter.name} pattern`);
        assert.ok(new RegExp(String(parameter.schema?.pattern), 'u').test(sampleParam(path, parameter.name)), `${where}: the test's sample ${parameter.name} fits its pattern`);
      } else {
        assert.equal(parameter.schema, { type: 'string', format: 'uuid' }, `${where}: ${parameter.name} is a UUID`);
      }
    }

    const queryNames = parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name).sort();
    if (route.query) {
      const properties = Object.keys((documents.get(route.query)!.properties ?? {}) as object).sort();
      assert.ok(properties.length > 0, `${where}: query schema ${route.query} has properties`);
      assert.equal(queryNames, properties, `${where}: query parameters are those of ${route.query}`);
    } else {
      assert.equal(queryNames, [], `${where}: no query parameters without a query schema`);
    }
    assert.ok(parameters.every((parameter) => ['path', 'query'].includes(parameter.in)), `${where}: only path and query parameters`);
  }
});

openapi('list operations declare page, page_size, ordering and search', ({ document, routes }) => {
  const lists = routes.filter((route) => Object.values(route.responses).some((body) => typeof body === 'object' && body !== null && 'list' in body));
  assert.ok(lists.length >= 8, 'the lists');
  for (const route of lists) {
    const path = documentedPath(route.path);
    const operation = document.paths[path]![route.method.toLowerCase() as Method]!;
    const names = (operation.parameters ?? []).map((parameter) => parameter.name);
    for (const name of ['page', 'page_size']) assert.ok(names.includes(name), `${key(route.method, path)} declares ${name}`);
  }
});

openapi('every operation declares its request body', ({ document, routes }) => {
  const components = document.components.schemas;
  for (const route of routes) {
    const path = documentedPath(route.path);
    const where = key(route.method, path);
    const operation = document.paths[path]![route.method.toLowerCase() as Method]!;
    const requestBody = operation.requestBody as { required?: boolean; content: Record<string, { schema?: { $ref?: string } }> } | undefined;
    if (route.body) {
      assert.ok(requestBody, `${where}: requestBody`);
      assert.equal(Object.keys(requestBody!.content), ['application/json'], `${where}: JSON body`);
      const ref = requestBody!.content['application/json']!.schema?.$ref ?? '';
      const name = ref.replace('#/components/schemas/', '');
      assert.ok(components[name], `${where}: its body schema ${ref} exists`);
      if (route.method === 'PATCH') {
        assert.not.ok(requestBody!.required, `${where}: a partial update may send nothing`);
        assert.is(components[name]!.required, undefined, `${where}: nothing is required in a partial update`);
        assert.equal({ ...components[name], required: undefined }, { ...components[route.body], required: undefined }, `${where}: the same fields as ${route.body}`);
      } else {
        assert.is(name, route.body, `${where}: body schema`);
        const required = (components[name]!.required ?? []) as string[];
        assert.is(requestBody!.required ?? false, required.length > 0, `${where}: requestBody.required`);
      }
    } else if (route.rawBody) {
      assert.ok(requestBody, `${where}: requestBody`);
      assert.is(requestBody!.required, true, `${where}: required`);
      assert.equal(Object.keys(requestBody!.content).sort(), [...route.rawBody.media].sort(), `${where}: media types`);
    } else {
      assert.is(requestBody, undefined, `${where}: no body, no requestBody`);
    }
  }
});

openapi('every operation declares its success and error statuses', ({ document, routes }) => {
  const components = document.components.responses;
  for (const route of routes) {
    const path = documentedPath(route.path);
    const where = key(route.method, path);
    const operation = document.paths[path]![route.method.toLowerCase() as Method]!;
    const statuses = declared(operation);
    const has = (status: number) => statuses.has(status);
    const readsBody = route.body !== undefined || route.rawBody !== undefined;
    const handlerErrors = new Set<number>(route.errors ?? []);

    for (const status of Object.keys(route.responses).map(Number)) assert.ok(has(status), `${where}: declares its success ${status}`);
    // Invalid input: bodies and query strings.
    assert.is(has(400), readsBody || route.query !== undefined || handlerErrors.has(400), `${where}: 400 exactly when it reads a body or a query`);
    // Credentials: every authenticated operation; the open ones only when they check credentials themselves (token, refresh).
    assert.is(has(401), route.auth !== false || handlerErrors.has(401), `${where}: 401 exactly when it needs credentials`);
    // A record named in the path may not exist.
    if (path.includes('{')) assert.ok(has(404), `${where}: 404 for the record in its path`);
    // Bodies: over the size limit, or not a media type the route reads.
    assert.is(has(413), readsBody, `${where}: 413 exactly when it reads a body`);
    assert.is(has(415), readsBody, `${where}: 415 exactly when it reads a body`);
    // Writes can meet an overloaded actor or a store that cannot write.
    if (route.method !== 'GET') assert.ok(has(503), `${where}: 503 for a write`);
    assert.ok(has(500), `${where}: 500`);
    for (const status of handlerErrors) assert.ok(has(status), `${where}: declares ${status}, which its handler answers`);

    for (const [status, response] of Object.entries(operation.responses)) {
      const code = Number(status);
      if (code < 400 || String(code) in route.responses) continue;
      // Errors are the shared responses in components, JSON {"detail", "code"} or a field map.
      const ref = (response as { $ref?: string }).$ref;
      assert.ok(ref?.startsWith('#/components/responses/'), `${where} ${status}: a reference to a shared response`);
      const shared: ResponseObject | undefined = components[ref!.slice('#/components/responses/'.length)];
      assert.ok(shared, `${where} ${status}: ${ref} exists`);
      assert.ok(shared!.content?.['application/json']?.schema, `${where} ${status}: a JSON body`);
    }
  }
  // Shared responses every path can meet without it being an operation's own: 404 (unknown path) and 405 (wrong method).
  for (const name of ['NotFound', 'MethodNotAllowed']) assert.ok(components[name], `components.responses.${name}`);
  assert.ok(components.MethodNotAllowed!.headers?.Allow, '405 declares Allow');
  assert.ok(components.Unauthorized!.headers?.['WWW-Authenticate'], '401 declares WWW-Authenticate');
  assert.ok(components.Unavailable!.headers?.['Retry-After'], '503 declares Retry-After');
});

openapi('every operation has a summary and a tag', ({ document, routes }) => {
  for (const route of routes) {
    const path = documentedPath(route.path);
    const operation = document.paths[path]![route.method.toLowerCase() as Method]!;
    assert.is(operation.summary, route.summary, `${key(route.method, path)}: summary`);
    assert.ok(operation.summary.length > 0 && operation.tags.length === 1 && operation.tags[0], `${key(route.method, path)}: summary and tag`);
  }
});

// (e) The reference page.

const assetTypes: Record<string, RegExp> = {
  css: /^text\/css\b/,
  js: /^(?:text|application)\/javascript\b/,
  png: /^image\/png$/,
};

openapi('the reference page is HTML, open, and uses only the service\'s own files', async ({ running }) => {
  for (const page of ['/api/docs/', '/api/docs']) {
    const response = await fetch(running.url + page);
    const html = await response.text();
    assert.is(response.status, 200, `GET ${page}`);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html\b/, `${page} is HTML`);
    assert.not.match(html, /(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]/i, `${page} names no other host`);

    const references = [...html.matchAll(/<(script|link|img)\b[^>]*?\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map(([, tag, url]) => ({ tag: tag!, url: url! }));
    assert.ok(references.some(({ tag }) => tag === 'script'), `${page} loads a script`);
    assert.ok(references.some(({ tag }) => tag === 'link'), `${page} loads a stylesheet`);
    for (const { tag, url } of references) {
      const resolved = new URL(url, running.url + page);
      assert.is(resolved.origin, running.url, `${page}: <${tag}> ${url} is on the service`);
      const asset = await fetch(resolved);
      const bytes = await asset.arrayBuffer();
      assert.is(asset.status, 200, `${page}: GET ${resolved.pathname}`);
      assert.ok(bytes.byteLength > 0, `${resolved.pathname} is not empty`);
      const extension = resolved.pathname.split('.').pop()!;
      assert.ok(assetTypes[extension], `${resolved.pathname}: an asset of a known kind`);
      assert.match(asset.headers.get('content-type') ?? '', assetTypes[extension]!, `${resolved.pathname} content type`);
    }
    // The page reads the document from the service itself.
    const documentUrl = /\burl:\s*["']([^"']+)["']/.exec(html)?.[1];
    assert.ok(documentUrl, `${page} names the document it shows`);
    const documentResponse = await fetch(new URL(documentUrl!, running.url + page));
    await documentResponse.arrayBuffer();
    assert.is(documentResponse.status, 200, `${page}: the document at ${documentUrl}`);
    assert.match(documentResponse.headers.get('content-type') ?? '', /^application\/json\b/);
  }
});

openapi('only the reference page\'s own files are served from /static/swagger-ui/', async ({ running }) => {
  for (const path of ['/static/swagger-ui/index.html', '/static/swagger-ui/package.json', '/static/swagger-ui/..%2F..%2Fpackage.json', '/static/swagger-ui/swagger-ui.css.map']) {
    const reply = await running.client.get(path);
    assert.is(reply.status, 404, path);
  }
});

openapi.run();
