// The OpenAPI 3.1 document of the whole interface, generated from the route table and the JSON
// Schema files in schemas/: request bodies and query strings are described by the very schemas
// the service validates with, and responses by the schemas the tests hold every answer to, so the
// document cannot say one thing while the service does another. Pure: no I/O, no clock.
import { STATUS_CODES } from 'node:http';
import type { AnySchemaObject } from 'ajv';
import type { Limits } from '../config.ts';
import type { FilterOp } from '../query/filters.ts';
import { listDeclaration } from '../validation/list-vocabulary.ts';
import type { PageSizes } from '../query/pagination.ts';
import type { HttpMethod, ResponseBody, Route } from './route.ts';

export type JsonObject = { [key: string]: unknown };

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  paths: Record<string, Partial<Record<Lowercase<HttpMethod>, Operation>>>;
  components: {
    schemas: Record<string, JsonObject>;
    responses: Record<string, ResponseObject>;
    securitySchemes: Record<string, JsonObject>;
  };
}

export interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters?: JsonObject[];
  requestBody?: JsonObject;
  responses: Record<string, ResponseObject | { $ref: string }>;
}

export interface ResponseObject {
  description: string;
  headers?: Record<string, JsonObject>;
  content?: Record<string, { schema?: JsonObject }>;
}

export interface DocumentOptions {
  version: string;
  limits: Pick<Limits, 'pageSizeDefault' | 'pageSizeMax'>;
}

/** The envelope schema that every list's page is made from (its results.items is filled in). */
const pageSchemaId = 'responses.page';
const errorSchemaRef = '#/components/schemas/responses.errors.detail';
const fieldErrorsRef = '#/components/schemas/responses.errors.fieldErrors';

const securitySchemes = {
  jwtAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'An access token from POST /api/auth/token/ or /api/auth/register/ (`Authorization: Bearer <jwt>`). An API key is accepted the same way.',
  },
  apiKeyAuth: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'An API key from POST /api/auth/api-keys/; it sees only its own project. `Authorization: Api-Key <key>` works too.',
  },
};

const authenticated: Record<string, string[]>[] = [{ jwtAuth: [] }, { apiKeyAuth: [] }];

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } } };

/** Every error answer: its name in components.responses, when it happens, and what it carries. */
const errorResponses: Record<number, [name: string, ResponseObject]> = {
  400: ['BadRequest', {
    description: 'Invalid input: a DRF field map (`{"field": ["message"]}`, nested records as maps, nested lists as one map per item, errors about no one field under `non_field_errors`), or `{"detail", "code"}` for a body that is not JSON (`parse_error`).',
    content: { 'application/json': { schema: { anyOf: [{ $ref: fieldErrorsRef }, { $ref: errorSchemaRef }] } } },
  }],
  401: ['Unauthorized', {
    description: 'No credentials (`not_authenticated`) or bad ones (`authentication_failed`; `token_not_valid` for JWTs).',
    headers: { 'WWW-Authenticate': { description: 'Bearer realm="api"', schema: { type: 'string' } } },
    content: { 'application/json': { schema: { $ref: errorSchemaRef } } },
  }],
  403: ['Forbidden', { description: 'Not allowed (`permission_denied`).', content: { 'application/json': { schema: { $ref: errorSchemaRef } } } }],
  404: ['NotFound', {
    description: 'No such record, or not one the caller can see (`not_found`); also a page past the last one ("Invalid page.") and any unknown path.',
    content: { 'application/json': { schema: { $ref: errorSchemaRef } } },
  }],
  405: ['MethodNotAllowed', {
    description: 'A known path with a method it does not offer (`method_not_allowed`).',
    headers: { Allow: { description: 'The methods the path offers.', schema: { type: 'string' } } },
    content: { 'application/json': { schema: { $ref: errorSchemaRef } } },
  }],
  409: ['Conflict', { description: 'An illegal state change (`conflict`).', content: { 'application/json': { schema: { $ref: errorSchemaRef } } } }],
  413: ['PayloadTooLarge', { description: 'The body is over its byte limit (`payload_too_large`).', content: { 'application/json': { schema: { $ref: errorSchemaRef } } } }],
  415: ['UnsupportedMediaType', { description: 'The body is not of a media type the endpoint reads (`unsupported_media_type`).', content: { 'application/json': { schema: { $ref: errorSchemaRef } } } }],
  429: ['Throttled', { description: 'Too many attempts (`throttled`).', headers: retryAfter, content: { 'application/json': { schema: { $ref: errorSchemaRef } } } }],
  500: ['InternalError', {
    description: 'An unexpected error (`internal_error`), logged with the `error_id` the body carries.',
    content: { 'application/json': { schema: { $ref: errorSchemaRef } } },
  }],
  503: ['Unavailable', {
    description: 'Overloaded (a full mailbox, or too much heavy work waiting for a worker thread) or the store cannot take writes (`unavailable`); nothing was changed.',
    headers: retryAfter,
    content: { 'application/json': { schema: { $ref: errorSchemaRef } } },
  }],
};

export function openApiDocument(routes: readonly Route[], documents: ReadonlyMap<string, AnySchemaObject>, options: DocumentOptions): OpenApiDocument {
  const schemas = componentSchemas(documents);
  const ids = operationIds(routes);
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const item = (paths[canonicalPath(route.path)] ??= {});
    const method = route.method.toLowerCase() as Lowercase<HttpMethod>;
    if (item[method]) throw new Error(`two routes for ${route.method} ${route.path}`);
    item[method] = operation(route, ids.get(route)!, documents, schemas, options);
  }
  checkReferences({ paths, schemas, errorResponses }, schemas);
  return {
    openapi: '3.1.0',
    info: { title: 'Agent evaluation and optimization service', version: options.version, description: overview(options) },
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : 1))),
      responses: Object.fromEntries(Object.values(errorResponses)),
      securitySchemes,
    },
  };
}

/** Paths under /api/ are written with their canonical trailing slash; `:id` becomes `{id}`. */
export function canonicalPath(path: string): string {
  const templated = path.replace(/:(\w+)/g, '{$1}');
  return templated.startsWith('/api/') ? `${templated}/` : templated;
}

/**
 * Body and response schemas become components named by their $id; every `$defs` entry becomes a
 * component of its own ("common.pk"). Query schemas become parameters instead, and a document
 * that only holds `$defs` (common, responses.errors) is no schema of its own.
 */
function componentSchemas(documents: ReadonlyMap<string, AnySchemaObject>): Record<string, JsonObject> {
  const schemas: Record<string, JsonObject> = {};
  const add = (name: string, schema: JsonObject) => {
    if (schemas[name]) throw new Error(`two schemas would be component "${name}"`);
    schemas[name] = schema;
  };
  for (const [id, document] of documents) {
    const { $defs, ...schema } = document;
    for (const [name, definition] of Object.entries(($defs ?? {}) as Record<string, AnySchemaObject>)) {
      add(`${id}.${name}`, toComponent(definition, id));
    }
    const use = schema['x-use'];
    if ((use === 'body' || use === 'response') && id !== pageSchemaId && describesValues(schema)) add(id, toComponent(schema, id));
  }
  return schemas;
}

function describesValues(schema: AnySchemaObject): boolean {
  return Object.keys(schema).some((key) => !['$id', '$comment', 'description', 'x-use'].includes(key));
}

/** A schema as a component: `$id` and `x-use` dropped, references pointed into components. */
function toComponent(node: unknown, documentId: string): JsonObject {
  return rewrite(node, documentId) as JsonObject;
}

function rewrite(node: unknown, documentId: string): unknown {
  if (Array.isArray(node)) return node.map((item) => rewrite(item, documentId));
  if (typeof node !== 'object' || node === null) return node;
  const copy: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$id' || key === 'x-use') continue;
    copy[key] = key === '$ref' ? componentRef(value as string, documentId) : rewrite(value, documentId);
  }
  return copy;
}

/** "common#/$defs/pk" -> "#/components/schemas/common.pk"; "auth.user-response" -> its component. */
function componentRef(ref: string, documentId: string): string {
  const [target, pointer = ''] = ref.split('#');
  const document = target || documentId;
  if (pointer === '') return `#/components/schemas/${document}`;
  const definition = /^\/\$defs\/([^/]+)$/.exec(pointer);
  if (!definition) throw new Error(`schema reference "${ref}" in ${documentId} names neither a schema nor one of its $defs`);
  return `#/components/schemas/${document}.${definition[1]}`;
}

/** Fails generation when any reference names a component that does not exist. */
function checkReferences(node: unknown, schemas: Record<string, JsonObject>): void {
  if (Array.isArray(node)) {
    for (const item of node) checkReferences(item, schemas);
  } else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
        if (!schemas[value.slice('#/components/schemas/'.length)]) throw new Error(`"${value}" names no schema`);
      } else {
        checkReferences(value, schemas);
      }
    }
  }
}

function operation(
  route: Route,
  operationId: string,
  documents: ReadonlyMap<string, AnySchemaObject>,
  schemas: Record<string, JsonObject>,
  options: DocumentOptions,
): Operation {
  const sizes = route.pageSizes ?? { sizeDefault: options.limits.pageSizeDefault, sizeMax: options.limits.pageSizeMax };
  const parameters = [...pathParameters(route), ...(route.query ? queryParameters(schemaOf(documents, route.query), route.query, sizes) : [])];
  const requestBody = route.body ? jsonRequestBody(route, documents, schemas) : route.rawBody ? rawRequestBody(route.rawBody) : undefined;
  const responses: Operation['responses'] = {};
  for (const [status, body] of Object.entries(route.responses)) responses[status] = successResponse(Number(status), body, documents, schemas);
  for (const status of errorStatuses(route)) {
    const [name] = errorResponses[status]!;
    responses[status] ??= { $ref: `#/components/responses/${name}` };
  }
  return {
    operationId,
    summary: route.summary,
    tags: [route.tag ?? tagOf(route.path)],
    security: route.auth ? authenticated : [],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b))),
  };
}

/**
 * The errors a route can answer, from what it declares: input (400), credentials (401), a record
 * named in the path, a page number or a write into a project being deleted (404), a body (413,
 * 415), a write that may meet a full mailbox or a failing store (503), and the handler's own.
 */
export function errorStatuses(route: Route): number[] {
  const statuses = new Set<number>([...(route.errors ?? []), 500]);
  const readsBody = route.body !== undefined || route.rawBody !== undefined;
  if (readsBody || route.query) statuses.add(400);
  if (route.auth) statuses.add(401);
  if (route.path.includes(':') || answersList(route) || (route.auth && route.method !== 'GET')) statuses.add(404);
  if (readsBody) {
    statuses.add(413);
    statuses.add(415);
  }
  if (route.method !== 'GET') statuses.add(503);
  return [...statuses].sort((a, b) => a - b);
}

function answersList(route: Route): boolean {
  return Object.values(route.responses).some((body) => typeof body === 'object' && body !== null && 'list' in body);
}

function pathParameters(route: Route): JsonObject[] {
  return [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => {
    const pattern = route.params?.[name!];
    return {
      name,
      in: 'path',
      required: true,
      schema: pattern ? { type: 'string', pattern: pattern.source } : { type: 'string', format: 'uuid' },
    };
  });
}

function queryParameters(schema: AnySchemaObject, documentId: string, sizes: PageSizes): JsonObject[] {
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries((schema.properties ?? {}) as Record<string, AnySchemaObject>).map(([name, property]) => {
    const description = parameterDescription(name, property, schema, sizes);
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(description ? { description } : {}),
      schema: toComponent(property, documentId),
    };
  });
}

const filterWording: Record<FilterOp, string> = {
  exact: 'equals this',
  icontains: 'contains this (case-insensitive)',
  gte: 'is at least this',
  lte: 'is at most this',
  in: 'is one of these (comma-separated)',
};

/** What a list parameter does, from what its query schema declares (validation/list-vocabulary.ts). */
function parameterDescription(name: string, property: AnySchemaObject, schema: AnySchemaObject, sizes: PageSizes): string | undefined {
  const declaration = listDeclaration(schema);
  switch (name) {
    case 'page':
      return 'A page number within the paginated result set (from 1), or "last".';
    case 'page_size':
      return `Number of results to return per page (default ${sizes.sizeDefault}, at most ${sizes.sizeMax}).`;
    case 'ordering':
      return `Which field to use when ordering the results: ${[...declaration.ordering].join(', ')}. Prefix "-" for descending; separate several with commas.`;
    case 'search':
      return `A search term, matched case-insensitively against ${declaration.search.join(', ')}. Every term (split on spaces and commas, "quoted phrases" whole) must match.`;
  }
  const filter = declaration.filters.find((candidate) => candidate.param === name);
  if (filter) {
    const scaled = filter.scale ? `, times ${filter.scale}` : '';
    return `Only items whose ${filter.field} ${filterWording[filter.op]}${scaled}.`;
  }
  return (property.description ?? property['x-description']) as string | undefined;
}

function jsonRequestBody(route: Route, documents: ReadonlyMap<string, AnySchemaObject>, schemas: Record<string, JsonObject>): JsonObject {
  const id = route.body!;
  const schema = schemaOf(documents, id);
  // PATCH validates the same schema with nothing required.
  const partial = route.method === 'PATCH';
  if (partial && !schemas[`${id}-patch`]) {
    const { required: _required, ...optional } = schemas[id]!;
    schemas[`${id}-patch`] = optional;
  }
  const required = !partial && ((schema.required ?? []) as string[]).length > 0;
  return { required, content: { 'application/json': { schema: { $ref: `#/components/schemas/${partial ? `${id}-patch` : id}` } } } };
}

function rawRequestBody(rawBody: NonNullable<Route['rawBody']>): JsonObject {
  return { required: true, description: rawBody.description, content: Object.fromEntries(rawBody.media.map((media) => [media, {}])) };
}

function successResponse(
  status: number,
  body: ResponseBody,
  documents: ReadonlyMap<string, AnySchemaObject>,
  schemas: Record<string, JsonObject>,
): ResponseObject {
  const description = STATUS_CODES[status] ?? String(status);
  if (body === null) return { description };
  if (typeof body === 'string') return { description, content: { 'application/json': { schema: schemaRef(documents, body) } } };
  if ('list' in body) return { description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${pageOf(body.list, documents, schemas)}` } } } };
  const content: Record<string, { schema?: JsonObject }> = {};
  for (const [media, id] of Object.entries(body.media)) content[media] = id === null ? {} : { schema: schemaRef(documents, id) };
  return { description, content };
}

function schemaRef(documents: ReadonlyMap<string, AnySchemaObject>, id: string): JsonObject {
  if (schemaOf(documents, id)['x-use'] !== 'response') throw new Error(`"${id}" is not a response schema`);
  return { $ref: `#/components/schemas/${id}` };
}

/** The page component of a list: the envelope with results.items set ("agents.agent-list-item-page"). */
function pageOf(itemId: string, documents: ReadonlyMap<string, AnySchemaObject>, schemas: Record<string, JsonObject>): string {
  schemaRef(documents, itemId);
  const name = `${itemId.replace(/-response$/, '')}-page`;
  if (!schemas[name]) {
    const page = toComponent(schemaOf(documents, pageSchemaId), pageSchemaId) as { properties: Record<string, JsonObject> };
    const results = { ...page.properties.results, items: { $ref: `#/components/schemas/${itemId}` } };
    schemas[name] = { ...page, description: `A page of ${itemId}.`, properties: { ...page.properties, results } };
  }
  return name;
}

function schemaOf(documents: ReadonlyMap<string, AnySchemaObject>, id: string): AnySchemaObject {
  const schema = documents.get(id);
  if (!schema) throw new Error(`no schema "${id}"`);
  return schema;
}

/** A route's tag is its resource: the first path segment after /api/ (and /v1/). */
function tagOf(path: string): string {
  return path.split('/').find((segment) => segment !== '' && segment !== 'api' && segment !== 'v1')!;
}

const actions: Record<HttpMethod, string> = { GET: 'retrieve', POST: 'create', PUT: 'update', PATCH: 'partial_update', DELETE: 'destroy' };

/**
 * drf-spectacular's operation ids: the path's words joined by "_", then the action
 * ("agents_list", "agents_partial_update", "datasets_activate_create"). Where two routes would
 * share an id, their path parameters are named too ("docs_file_retrieve"), then the leading "api"
 * (/health and /api/health).
 */
function operationIds(routes: readonly Route[]): Map<Route, string> {
  const idFor = (route: Route, [withParams, withApi]: readonly [boolean, boolean]) => {
    const words = route.path
      .split('/')
      .filter((segment) => segment !== '' && (withApi || segment !== 'api'))
      .map((segment) => (segment.startsWith(':') ? (withParams ? segment.slice(1) : '') : segment))
      .filter(Boolean);
    return [...words, answersList(route) ? 'list' : actions[route.method]].join('_').replace(/[^A-Za-z0-9_]/g, '_');
  };
  const variants = ([[false, false], [true, false], [true, true]] as const).map((variant) => routes.map((route) => idFor(route, variant)));
  const ids = new Map<Route, string>();
  routes.forEach((route, index) => {
    const unique = variants.find((variant) => variant.indexOf(variant[index]!) === variant.lastIndexOf(variant[index]!)) ?? variants.at(-1)!;
    ids.set(route, unique[index]!);
  });
  if (new Set(ids.values()).size !== routes.length) throw new Error('two routes share an operation id');
  return ids;
}

function overview(options: DocumentOptions): string {
  const { pageSizeDefault, pageSizeMax } = options.limits;
  return [
    'JSON over HTTP, with the conventions of a Django REST Framework service.',
    '',
    '- **Credentials**: `Authorization: Bearer <access token>` (from `/api/auth/token/` or `/api/auth/register/`), or an API key in `X-Api-Key: <key>` (also `Authorization: Api-Key <key>` or `Bearer <key>`). Health, registration, tokens, this document and the reference page are open.',
    '- **Paths** answer with and without their trailing slash; the slashed form is canonical.',
    `- **Lists** answer \`{"count", "next", "previous", "results"}\`; \`page\` counts from 1, \`page_size\` defaults to ${pageSizeDefault} and is clamped to ${pageSizeMax}.`,
    '- **Errors** are JSON: a field map for invalid input, otherwise `{"detail", "code"}`. Records of projects the caller cannot see are 404, never 403. An unknown path is 404; a known path with another method is 405 with `Allow`.',
  ].join('\n');
}
