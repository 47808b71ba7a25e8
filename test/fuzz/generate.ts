// Generates requests for any route of the route table: near-valid ones built from the route's
// body and query schemas (so they reach the handlers' deeper checks) with hostile changes on top:
// wrong types, missing and extra fields, huge strings and numbers, deep nesting, invalid UTF-8,
// malformed JSON, bad ids, absurd pages, bogus filters, wrong media types, bad credentials and
// oversized bodies. Every change made is named in `mutations`, for the failure report.
import { gzipSync } from 'node:zlib';
import type { AnySchemaObject } from 'ajv';
import type { Limits } from '../../src/config.ts';
import type { Route } from '../../src/http/route.ts';
import type { Validator } from '../../src/validation/validator.ts';
import { protobufOf } from '../traces/helpers.ts';
import { referenceFields, resourceOfParam, type Fixtures } from './fixtures.ts';
import type { Random } from './random.ts';

export interface FuzzRequest {
  method: string;
  /** Path and query string, exactly as sent. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Sent without Content-Length, in chunks. */
  chunked?: boolean;
  mutations: string[];
}

export interface GeneratorContext {
  random: Random;
  validator: Validator;
  limits: Limits;
  fixtures: Fixtures;
}

const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE'];

export async function generateRequest(route: Route, context: GeneratorContext): Promise<FuzzRequest> {
  const { random } = context;
  const mutations: string[] = [];
  let method: string = route.method;
  if (random.chance(0.04)) {
    method = random.pick(methods);
    mutations.push(`method ${method}`);
  }
  const destructive = method === 'DELETE';
  const path = (await fillPath(route, context, destructive, mutations)) + queryString(route, context, mutations);
  const headers = { ...credentials(context, mutations), ...requestIdHeader(random, mutations) };
  const request: FuzzRequest = { method, path, headers, mutations };
  let part: BodyPart | undefined;
  if (route.body) part = jsonBody(context.validator.documents.get(route.body)!, route, context, mutations);
  else if (isOtlp(route)) part = otlpBody(context, mutations);
  else if (random.chance(0.05)) part = junkBody(random, mutations);
  if (part) {
    part = withMediaMutations(part, route, random, mutations);
    request.body = part.body;
    request.chunked = part.chunked;
    headers['content-type'] = part.contentType;
    if (part.contentEncoding !== undefined) headers['content-encoding'] = part.contentEncoding;
  }
  return request;
}

interface BodyPart {
  body: Buffer;
  contentType: string;
  contentEncoding?: string;
  chunked?: boolean;
}

const isOtlp = (route: Route) => route.path.endsWith('/v1/traces');

// ---------------------------------------------------------------------------------------------
// Paths

function hostileSegments(random: Random): string[] {
  const uuid = random.uuid();
  return [
    'x', '0', '-1', '..', '%2e%2e', '%00', '%zz', '%', '%FF%FE', 'null', 'undefined', '%20', encodeURIComponent('💥'),
    'a'.repeat(300), uuid.toUpperCase(), uuid.replace(/-/g, ''), `urn:uuid:${uuid}`, `${uuid}x`, `%7B${uuid}%7D`,
    uuid.slice(0, -1), '__proto__', 'constructor', '0'.repeat(32), 'g'.repeat(32), `${uuid}%2F..`, '1e400',
  ];
}

async function fillPath(route: Route, context: GeneratorContext, destructive: boolean, mutations: string[]): Promise<string> {
  const { random, fixtures } = context;
  const filled = await Promise.all(
    route.path.split('/').map(async (segment) => {
      if (!segment.startsWith(':')) return segment;
      const param = segment.slice(1);
      const resource = resourceOfParam(route.path, param);
      const draw = random.next();
      if (resource && draw < 0.65) return destructive ? fixtures.fresh(resource) : fixtures.own[resource];
      if (resource && draw < 0.75) {
        mutations.push(`${param}: another tenant's`);
        return fixtures.foreign[resource];
      }
      if (draw < 0.85) {
        mutations.push(`${param}: unknown id`);
        return resource === 'trace' ? random.hex(16) : random.uuid();
      }
      const hostile = random.pick(hostileSegments(random));
      mutations.push(`${param}: hostile ${hostile.slice(0, 40)}`);
      return hostile;
    }),
  );
  let path = filled.join('/');
  if (random.chance(0.8)) path += '/';
  if (random.chance(0.03)) {
    const variant = random.pick(['double slash', 'upper case', 'dot segment', 'encoded slash']);
    mutations.push(`path: ${variant}`);
    if (variant === 'double slash') path = path.replace('/', '//');
    else if (variant === 'upper case') path = path.toUpperCase();
    else if (variant === 'dot segment') path = `${path.replace(/\/$/, '')}/./`;
    else path = path.replace(/^(\/[^/]+)\//, '$1%2F');
  }
  return path;
}

// ---------------------------------------------------------------------------------------------
// Query strings

function hostileQueryValues(property: AnySchemaObject, context: GeneratorContext): string[] {
  const { random, limits } = context;
  const common = ['x'.repeat(limits.queryValueCharsMax + 1), '%00', '%FF%FE', '%zz', encodeURIComponent('💥\u202e'), '%20', '+'];
  if (property.type === 'number' || property.type === 'integer') {
    return [...common, 'abc', '1e400', '-1e400', 'Infinity', '-Infinity', 'NaN', '0x1A', '1,5', '1_000', '%E0%A5%AD', '1e308', '9'.repeat(400), '-0', '.5', '5.', '+5'];
  }
  if (property.format === 'uuid') return [...common, ...hostileSegments(random)];
  if (property.type === 'boolean') return [...common, 'maybe', 'TRUE', '1', '0', 'yes', 'on', 'null'];
  if (property.format === 'datetime-or-date') {
    return [...common, '2024-13-45', 'yesterday', '2024-02-30T25:61:61Z', '0000-00-00', '99999-01-01', '2024-01-01T00:00:00%2B99:00', '1700000000', '2024-01-01T00:00:00.123456789123Z'];
  }
  return [...common, 'x'.repeat(limits.queryValueCharsMax + 1)];
}

function validQueryValue(name: string, property: AnySchemaObject, schema: AnySchemaObject, context: GeneratorContext): string {
  const { random, fixtures } = context;
  if (Array.isArray(property.enum)) return String(random.pick(property.enum));
  if (property.format === 'uuid') {
    const resource = referenceFields[name] ?? (name === 'iteration' ? 'iteration' : undefined);
    return resource && random.chance(0.7) ? fixtures.own[resource] : random.uuid();
  }
  if (property.format === 'datetime-or-date') return random.chance(0.5) ? '2026-01-01' : new Date(random.int(0, 2e12)).toISOString();
  if (property.type === 'number') return random.chance(0.5) ? String(random.int(-5, 5)) : String(random.next() * 100);
  if (property.type === 'integer') return String(random.int(0, 5));
  if (property.type === 'boolean') return random.pick(['true', 'false']);
  switch (name) {
    case 'page':
      return String(random.int(1, 3));
    case 'page_size':
      return String(random.int(1, 150));
    case 'ordering': {
      const fields = (schema['x-ordering'] as string[] | undefined) ?? ['id'];
      return Array.from({ length: random.int(1, 3) }, () => `${random.chance(0.5) ? '-' : ''}${random.pick(fields)}`).join(',');
    }
    default:
      return encodeURIComponent(randomText(random, random.int(0, 12)));
  }
}

/** Values of the parameters every list shares, chosen to break pagination, ordering and search. */
function hostileListValue(name: string, context: GeneratorContext): string | undefined {
  const { random, limits } = context;
  switch (name) {
    case 'page':
      return random.pick(['0', '-1', '1.5', 'abc', '999999999999999999999', '1e3', 'last', '%202', '%2B3', '%00', String(limits.pageNumberMax + 1), '%EF%BC%92', '0x10', 'Infinity']);
    case 'page_size':
      return random.pick(['0', '-5', '1000000', 'abc', '1e9', '99999999999999999999', '2.5', 'all']);
    case 'ordering':
      return random.pick(['nope', '-', '--name', '%2C%2C%2C', 'id,-id', 'name,'.repeat(50), '__proto__', 'x'.repeat(900), 'created_at%00']);
    case 'search':
      return random.pick(['%22unbalanced', 'a,b,,c', Array.from({ length: 100 }, (_, i) => `w${i}`).join('+'), '.*%5B(', '%25', '%5C', encodeURIComponent('ǅ ß ﬃ'), 'x'.repeat(900)]);
    default:
      return undefined;
  }
}

function queryString(route: Route, context: GeneratorContext, mutations: string[]): string {
  const { random, validator } = context;
  const pairs: string[] = [];
  const schema = route.query ? validator.documents.get(route.query) : undefined;
  const properties = Object.entries((schema?.properties ?? {}) as Record<string, AnySchemaObject>);
  for (const [name, property] of properties) {
    if (!random.chance(0.25)) continue;
    let value = validQueryValue(name, property, schema!, context);
    if (random.chance(0.3)) {
      value = hostileListValue(name, context) ?? random.pick(hostileQueryValues(property, context));
      mutations.push(`query ${name}=${value.slice(0, 40)}`);
    }
    pairs.push(`${name}=${value}`);
    if (random.chance(0.05)) {
      pairs.push(`${name}=${validQueryValue(name, property, schema!, context)}`);
      mutations.push(`query ${name} repeated`);
    }
  }
  if (random.chance(0.1)) {
    const name = random.pick(['foo', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'page%5B%5D', 'a%5Bb%5D', '%FF', 'all_spans', '']);
    pairs.push(`${name}=${random.pick(['1', 'x', '', '%FF'])}`);
    mutations.push(`query extra ${name}`);
  }
  return pairs.length > 0 ? `?${pairs.join('&')}` : random.chance(0.02) ? '?' : '';
}

// ---------------------------------------------------------------------------------------------
// Credentials and other headers

function credentials(context: GeneratorContext, mutations: string[]): Record<string, string> {
  const { random, fixtures } = context;
  const access = fixtures.caller.access;
  if (random.chance(0.88)) return { authorization: `Bearer ${access}` };
  const forged = `${access.slice(0, -4)}${access.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
  const variants: [string, Record<string, string>][] = [
    ['none', {}],
    ['empty bearer', { authorization: 'Bearer' }],
    ['bearer space', { authorization: 'Bearer ' }],
    ['junk jwt', { authorization: 'Bearer a.b.c' }],
    ['forged signature', { authorization: `Bearer ${forged}` }],
    ['refresh token as access', { authorization: `Bearer ${fixtures.caller.refresh}` }],
    ['basic', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['unknown API key', { authorization: `Api-Key ovr_${random.text(43)}` }],
    ['unknown X-Api-Key', { 'x-api-key': `ovr_${random.text(43)}` }],
    ['short X-Api-Key', { 'x-api-key': 'ovr_' }],
    ['other scheme', { authorization: `Token ${access}` }],
    ['huge bearer', { authorization: `Bearer ${'x'.repeat(8000)}` }],
    ['two credentials', { authorization: `Bearer ${access}`, 'x-api-key': `ovr_${random.text(43)}` }],
  ];
  const [name, headers] = random.pick(variants);
  mutations.push(`credentials: ${name}`);
  return headers;
}

function requestIdHeader(random: Random, mutations: string[]): Record<string, string> {
  if (!random.chance(0.03)) return {};
  const id = random.pick(['a'.repeat(500), 'has spaces', '%00', 'ok-id.1:2', '\u00ff\u00fe']);
  mutations.push(`x-request-id ${id.slice(0, 20)}`);
  return { 'x-request-id': id };
}

// ---------------------------------------------------------------------------------------------
// JSON bodies

const textAlphabets = [
  'abcdefghijklmnopqrstuvwxyz ',
  'ÀÉÎÕÜßæøåçñ',
  '日本語中文한국어',
  '😀🚀💥👩‍👩‍👧',
  '\u202e\u200b\u200d\u0301\ufeff',
  '\t\n\r"\\/\u0007',
];

function randomText(random: Random, length: number): string {
  return random.text(length, random.pick(textAlphabets));
}

function randomJson(random: Random, depth = 0): unknown {
  switch (random.int(0, depth >= 3 ? 3 : 5)) {
    case 0:
      return randomText(random, random.int(0, 10));
    case 1:
      return random.chance(0.5) ? random.int(-1000, 1000) : random.next() * 1e6;
    case 2:
      return random.chance(0.5);
    case 3:
      return null;
    case 4:
      return Array.from({ length: random.int(0, 3) }, () => randomJson(random, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: random.int(0, 3) }, () => [randomText(random, random.int(1, 6)), randomJson(random, depth + 1)]));
  }
}

function typesOf(schema: AnySchemaObject): string[] {
  return Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
}

function validValue(field: string, schema: AnySchemaObject, context: GeneratorContext): unknown {
  const { random, fixtures, validator } = context;
  const resolved = validator.resolve(schema);
  const types = typesOf(resolved);
  if (types.includes('null') && random.chance(0.1)) return null;
  if (Array.isArray(resolved.enum)) return random.pick(resolved.enum);
  if (resolved.format === 'uuid') {
    const resource = referenceFields[field];
    return resource ? fixtures.own[resource] : random.uuid();
  }
  if (resolved.format === 'datetime') return new Date(Date.now() + random.int(1, 1000) * 86_400_000).toISOString();
  if (resolved.format === 'email') return field === 'email' && random.chance(0.3) ? fixtures.guest.email : `fz-${random.text(10)}@example.com`;
  if (field === 'user_id') return random.chance(0.7) ? fixtures.guest.id : random.int(-5, 100000);
  if (field === 'refresh') return random.chance(0.05) ? fixtures.caller.refresh : random.text(40);
  if (types.includes('string')) {
    const min = Math.max(resolved.minLength ?? 0, 1);
    const max = Math.min(resolved.maxLength ?? 40, Math.max(min, 40));
    return random.text(random.int(min, max), 'abcdefghijklmnopqrstuvwxyz0123456789-');
  }
  if (types.includes('integer')) return random.int(Math.max(resolved.minimum ?? -1000, -1000), Math.min(resolved.maximum ?? 1000, 1000));
  if (types.includes('number')) return random.next() * 100;
  if (types.includes('boolean')) return random.chance(0.5);
  if (types.includes('array')) {
    const itemSchema = validator.resolve(resolved.items as AnySchemaObject);
    return Array.from({ length: random.int(0, 3) }, () => validObject(itemSchema, context));
  }
  return randomJson(random);
}

function validObject(schema: AnySchemaObject, context: GeneratorContext): Record<string, unknown> {
  const { random } = context;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const body: Record<string, unknown> = {};
  for (const [field, property] of Object.entries((schema.properties ?? {}) as Record<string, AnySchemaObject>)) {
    if (required.has(field) || random.chance(0.4)) body[field] = validValue(field, property, context);
  }
  if ('password_confirm' in body && 'password' in body && random.chance(0.8)) body.password_confirm = body.password;
  return body;
}

/** Markers replaced in the JSON text by what JSON.stringify cannot write. */
const rawMarker = '\u0001raw\u0001';

type FieldMutation = (body: Record<string, unknown>, field: string, schema: AnySchemaObject, context: GeneratorContext) => string;

const fieldMutations: Record<string, FieldMutation> = {
  missing(body, field) {
    delete body[field];
    return 'missing';
  },
  'wrong type'(body, field, _schema, { random }) {
    body[field] = random.pick([12345, -1.5, true, false, [], [1, 'a'], {}, { a: 1 }, 'text', '', ' ', null]);
    return `wrong type ${JSON.stringify(body[field])}`;
  },
  'huge string'(body, field, schema, { random, validator }) {
    const maxLength = validator.resolve(schema).maxLength as number | undefined;
    const length = maxLength !== undefined && random.chance(0.6) ? maxLength + 1 : random.int(1000, 30_000);
    body[field] = randomText(random, length);
    return `string of ${length}`;
  },
  'huge number'(body, field, _schema, { random }) {
    body[field] = random.pick([1e308, -1e308, 2 ** 63, 2 ** 64, -(2 ** 63) - 4096, 2 ** 53 + 1, 1.5, -0, 5e-324, Number.MAX_SAFE_INTEGER]);
    return `number ${body[field]}`;
  },
  'raw number'(body, field, _schema, { random }) {
    const raw = random.pick(['1e400', '-1e400', '1e-400', '123456789012345678901234567890', '-0', '0.00000000000000000000001', '1E5', '-9223372036854775809']);
    body[field] = rawMarker + raw;
    return `raw number ${raw}`;
  },
  'deep nesting'(body, field, _schema, { random }) {
    const depth = random.pick([63, 64, 65, 200, 5000, 20_000]);
    body[field] = `${rawMarker}${random.chance(0.5) ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)}`;
    return `nested ${depth} deep`;
  },
  'odd text'(body, field, _schema, { random }) {
    const raw = random.pick(['"\\ud800"', '"a\\u0000b"', '"\\udfff\\ud800"', '"\\u202e\\u0000"', '"\\uffff"']);
    body[field] = rawMarker + raw;
    return `odd text ${raw}`;
  },
  'bad id'(body, field, _schema, context) {
    const { random, fixtures } = context;
    const resource = referenceFields[field];
    const choices: unknown[] = [...hostileSegments(random).map(decodeURIComponentSafe), random.uuid(), 0, -1, 1e20];
    if (resource) choices.push(fixtures.foreign[resource], fixtures.foreign[resource].toUpperCase());
    body[field] = random.pick(choices);
    return `id ${String(body[field]).slice(0, 40)}`;
  },
  'bad date'(body, field, _schema, { random }) {
    body[field] = random.pick(['2024-13-45T00:00:00Z', 'tomorrow', '1999-01-01T00:00:00Z', '', 1700000000, '2024-01-01', '+275760-09-13T00:00:00.001Z']);
    return `date ${body[field]}`;
  },
};

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function mutateFields(body: Record<string, unknown>, schema: AnySchemaObject, context: GeneratorContext, mutations: string[]): void {
  const { random } = context;
  const properties = (schema.properties ?? {}) as Record<string, AnySchemaObject>;
  const fields = Object.keys(properties);
  for (let count = random.int(1, 3); count > 0 && fields.length > 0; count--) {
    const field = random.pick(fields);
    const name = random.pick(Object.keys(fieldMutations));
    mutations.push(`${field}: ${fieldMutations[name]!(body, field, properties[field]!, context)}`);
  }
  if (random.chance(0.2)) {
    const extra = random.pick(['__proto__', 'constructor', 'id', 'created_at', 'version', 'num_datapoints', 'triggered_by', 'unknown', '']);
    body[extra] = randomJson(random);
    mutations.push(`extra field ${extra}`);
  }
}

/** Hostile changes to items of a nested list (datapoints), where DRF reports per item. */
function mutateNestedList(body: Record<string, unknown>, schema: AnySchemaObject, context: GeneratorContext, mutations: string[]): void {
  const { random, validator, limits } = context;
  for (const [field, property] of Object.entries((schema.properties ?? {}) as Record<string, AnySchemaObject>)) {
    const resolved = validator.resolve(property);
    if (resolved['x-kind'] !== 'nested-list' || !random.chance(0.5)) continue;
    const itemSchema = validator.resolve(resolved.items as AnySchemaObject);
    const items = Array.from({ length: random.int(1, 4) }, () => validObject(itemSchema, context) as unknown);
    const variant = random.pick(['item mutated', 'item not an object', 'too many items']);
    if (variant === 'item mutated') mutateFields(items[random.int(0, items.length - 1)] as Record<string, unknown>, itemSchema, context, mutations);
    else if (variant === 'item not an object') items[random.int(0, items.length - 1)] = random.pick([1, 'x', null, [], true]);
    else items.push(...Array.from({ length: limits.datapointsPerDatasetMax }, () => ({})));
    body[field] = items;
    mutations.push(`${field}: ${variant}`);
  }
}

/** A raw marker as JSON.stringify writes it, with the escaped raw text after it. */
const rawPattern = /"\\u0001raw\\u0001((?:[^"\\]|\\.)*)"/g;

function jsonText(body: unknown): string {
  return JSON.stringify(body).replace(rawPattern, (_match, escaped: string) => JSON.parse(`"${escaped}"`) as string);
}

function jsonBody(schema: AnySchemaObject, route: Route, context: GeneratorContext, mutations: string[]): BodyPart {
  const { random, limits } = context;
  const wholeBody = random.next();
  if (wholeBody < 0.05) {
    const raw = random.pick(['[]', '"text"', '1', 'null', 'true', '{', '{"a":}', "{'a':1}", '{"a":1,}', 'NaN', '\ufeff{}', '{"a":1}{"b":2}', '/* c */{}', ' '.repeat(5000), '', '{"a":"\\x41"}', '{"a":01}', '[1,2', '{"a" 1}']);
    mutations.push(`body ${JSON.stringify(raw.slice(0, 20))}`);
    return { body: Buffer.from(raw), contentType: 'application/json' };
  }
  const body = validObject(schema, context);
  if (random.chance(0.6)) mutateFields(body, schema, context, mutations);
  mutateNestedList(body, schema, context, mutations);
  let bytes: Buffer = Buffer.from(jsonText(body));
  if (random.chance(0.04)) {
    bytes = withInvalidUtf8(bytes, random);
    mutations.push('invalid UTF-8');
  } else if (random.chance(0.03)) {
    bytes = bytes.subarray(0, random.int(0, bytes.length - 1));
    mutations.push('truncated');
  }
  if (random.chance(0.03)) {
    const bytesMax = route.bodyBytesMax ?? limits.bodyBytesMax;
    const chunked = random.chance(0.5);
    mutations.push(`oversized${chunked ? ', chunked' : ''}`);
    return { body: Buffer.from(JSON.stringify({ ...body, padding: 'x'.repeat(bytesMax) })), contentType: 'application/json', chunked };
  }
  return { body: bytes, contentType: 'application/json', chunked: random.chance(0.05) };
}

function withInvalidUtf8(bytes: Buffer, random: Random): Buffer {
  const invalid = Buffer.from(random.pick([[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xf0, 0x90, 0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xfe, 0xfe, 0xff]]));
  // Inside the first string value, or at a random place when there is none.
  const quote = bytes.indexOf(':"');
  const at = quote >= 0 ? quote + 2 : random.int(0, bytes.length);
  return Buffer.concat([bytes.subarray(0, at), invalid, bytes.subarray(at)]);
}

// ---------------------------------------------------------------------------------------------
// OTLP bodies and others

function otlpBody(context: GeneratorContext, mutations: string[]): BodyPart {
  const { random, fixtures, limits } = context;
  const span = () => ({
    traceId: random.chance(0.9) ? random.hex(16) : random.pick(['', 'zz', random.hex(8), random.hex(17), 'x'.repeat(32)]),
    spanId: random.chance(0.9) ? random.hex(8) : random.pick(['', random.hex(4), random.hex(9)]),
    name: randomText(random, random.int(0, 20)),
    kind: random.chance(0.9) ? random.int(0, 5) : random.pick([99, -1, 'SPAN_KIND_SERVER', 2 ** 40]),
    startTimeUnixNano: random.chance(0.9) ? String(random.int(0, 2e9) * 1e9) : random.pick(['-1', 'abc', '1e400', '99999999999999999999999', 1.5, null]),
    endTimeUnixNano: String(random.int(0, 2e9) * 1e9),
    attributes: [
      { key: 'overmind.agent.id', value: { stringValue: random.chance(0.5) ? fixtures.own.agent : fixtures.foreign.agent } },
      { key: random.pick(['overmind.job.id', 'overmind.agent.name', 'x']), value: random.chance(0.8) ? { stringValue: randomText(random, 8) } : randomJson(random) },
      ...(random.chance(0.1) ? [{ key: 'deep', value: nestedAnyValue(random.pick([10, 70, 500])) }] : []),
    ],
    status: random.chance(0.9) ? { code: random.int(0, 2) } : random.pick([{ code: 'ERROR' }, 'bad', { code: 2 ** 33 }]),
  });
  const spanCount = random.chance(0.03) ? limits.spanBatchMax + 1 : random.int(0, 3);
  const request = {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'overmind.project.id', value: { stringValue: random.chance(0.7) ? fixtures.own.project : random.uuid() } }] },
        scopeSpans: [{ scope: { name: 'fuzz' }, spans: Array.from({ length: spanCount }, span) }],
      },
    ],
  };
  const encoding = random.pick(['json', 'protobuf', 'protobuf garbage', 'json garbage']);
  mutations.push(`otlp ${encoding}, ${spanCount} spans`);
  let body: Buffer;
  if (encoding === 'json') body = Buffer.from(JSON.stringify(random.chance(0.1) ? { resourceSpans: randomJson(random) } : request));
  else if (encoding === 'json garbage') body = Buffer.from(JSON.stringify(randomJson(random)));
  else if (encoding === 'protobuf garbage') body = Buffer.from(Array.from({ length: random.int(0, 200) }, () => random.int(0, 255)));
  else body = protobufOrGarbage(request, random);
  const contentType = encoding.startsWith('json') ? 'application/json' : 'application/x-protobuf';
  if (random.chance(0.1)) {
    mutations.push('gzip');
    return { body: gzipSync(body), contentType, contentEncoding: 'gzip' };
  }
  return { body, contentType };
}

/** Protobuf of a request; values protobuf cannot hold make garbage instead, which is as good a test. */
function protobufOrGarbage(request: object, random: Random): Buffer {
  try {
    return Buffer.from(protobufOf(request));
  } catch {
    return Buffer.from(Array.from({ length: 50 }, () => random.int(0, 255)));
  }
}

function nestedAnyValue(depth: number): unknown {
  let value: unknown = { stringValue: 'leaf' };
  for (let i = 0; i < depth; i++) value = { arrayValue: { values: [value] } };
  return value;
}

function junkBody(random: Random, mutations: string[]): BodyPart {
  mutations.push('unexpected body');
  return { body: Buffer.from(JSON.stringify(randomJson(random))), contentType: 'application/json' };
}

/** Sometimes another media type, or a content encoding (compressed or, lying, not). */
function withMediaMutations(part: BodyPart, route: Route, random: Random, mutations: string[]): BodyPart {
  let changed = part;
  if (random.chance(0.06)) {
    const contentType = random.pick([
      '', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1',
      'application/json; charset=utf-16', 'APPLICATION/JSON', 'application/vnd.api+json', 'application/json, text/plain', ';;;',
      'application/x-protobuf', 'application/json; charset="utf-8"', 'application/merge-patch+json',
    ]);
    mutations.push(`content-type ${JSON.stringify(contentType)}`);
    changed = { ...changed, contentType };
  }
  if (random.chance(0.04) && !isOtlp(route)) {
    const contentEncoding = random.pick(['gzip', 'deflate', 'br', 'x-unknown', 'identity', 'gzip, gzip']);
    const compressed = contentEncoding === 'gzip' && random.chance(0.5);
    mutations.push(`content-encoding ${contentEncoding}${compressed ? ' (compressed)' : ''}`);
    changed = { ...changed, contentEncoding, body: compressed ? gzipSync(changed.body) : changed.body };
  }
  return changed;
}
