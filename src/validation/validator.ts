// The one validation module. Every request body and query string is checked against a JSON
// Schema file in schemas/, referenced by its $id. Bodies are not coerced; query strings are (they
// are all text). Failures become DRF field maps. The schema files are read at boot, but each
// validator is compiled on its first use (a PATCH's partial form on the first partial body): a
// start compiled all of them, ~350 ms of the start command's time to /health/, and Ajv itself is
// loaded then too (~80 ms). compileAll() compiles every one at once, as a test does, so a broken
// schema fails there and not a request.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import type { Ajv, AnySchemaObject, ErrorObject, ValidateFunction } from 'ajv';
import { RE2JS } from 're2js';
import { schemasDir } from '../assets.ts';
import { invalid } from '../domain/rejection.ts';
import { bodyMessage, queryMessage, toFieldErrors, unreadableQueryValue } from './drf-errors.ts';
import { isDateOrDateTime, isDateTime, parseDateTime, toTimestamp } from './datetime.ts';


export type Body = Record<string, unknown>;
export type Query = Record<string, unknown>;

/** Which string fields DRF's CharFields would trim, here and inside nested lists. */
interface TrimPlan {
  fields: readonly string[];
  nested: ReadonlyMap<string, TrimPlan>;
}

interface CompiledBody {
  full: ValidateFunction;
  /** The same schema with nothing required (PATCH), compiled on first use. */
  partial: ValidateFunction | undefined;
  trim: TrimPlan;
  uuids: readonly string[];
  datetimes: readonly string[];
}

export class Validator {
  private readonly bodies = new Map<string, CompiledBody>();
  private readonly queries = new Map<string, ValidateFunction>();
  private readonly numericFields = new Map<string, ReadonlyMap<string, string>>();
  /** Each schema's top-level defaults (read once). */
  private readonly defaults = new Map<string, ReadonlyMap<string, unknown>>();
  /** One Ajv for bodies and one for query strings (coercing), each holding every schema; each made on first use. */
  private readonly ajvs = new Map<'body' | 'query', Ajv>();

  private constructor(readonly documents: ReadonlyMap<string, AnySchemaObject>) {}

  /** Compiles every body (full and partial) and query validator now, rather than on first use. */
  compileAll(): void {
    for (const [id, schema] of this.documents) {
      if (schema['x-use'] === 'body') this.partialBody(this.compiledBody(id)!, id);
      else if (schema['x-use'] === 'query') this.compiledQuery(id);
    }
  }

  /** Loads every schema file under `dir` (by default the repository's schemas/). */
  static load(dir: string = schemasDir): Validator {
    const documents = new Map<string, AnySchemaObject>();
    for (const file of listJsonFiles(dir)) {
      const schema = JSON.parse(readFileSync(file, 'utf8')) as AnySchemaObject;
      const id = schema.$id;
      if (typeof id !== 'string') throw new Error(`${relative(dir, file)} has no $id`);
      if (documents.has(id)) throw new Error(`two schema files declare $id "${id}"`);
      documents.set(id, schema);
    }
    for (const [id, schema] of documents) if (schema['x-pick']) documents.set(id, picked(schema, documents));
    return new Validator(documents);
  }

  /** Validates a JSON body; returns it with strings trimmed, UUIDs and date-times in canonical form. */
  body(id: string, data: unknown, options: { partial?: boolean } = {}): Body {
    const compiled = this.compiledBody(id);
    if (!compiled) throw new Error(`no body schema "${id}"`);
    trimStrings(data, compiled.trim);
    const validate = options.partial ? this.partialBody(compiled, id) : compiled.full;
    if (!validate(data)) throw invalid(toFieldErrors(validate.errors ?? [], data, bodyMessage));
    const body = data as Body;
    for (const field of compiled.uuids) {
      const value = body[field];
      if (typeof value === 'string') body[field] = canonicalUuid(value);
    }
    for (const field of compiled.datetimes) {
      const value = body[field];
      if (typeof value === 'string') body[field] = toTimestamp(parseDateTime(value)!);
    }
    return body;
  }

  /**
   * Validates query parameters: the last value of a repeated parameter counts, empty values are
   * ignored (django-filter's behaviour), values longer than `valueCharsMax` are refused, values
   * are coerced to the schema's types, and a parameter left out takes its schema's `default`.
   */
  query(id: string, raw: Readonly<Record<string, string | string[] | undefined>>, valueCharsMax = Infinity): Query {
    const validate = this.compiledQuery(id);
    if (!validate) throw new Error(`no query schema "${id}"`);
    const query: Query = {};
    const tooLong: Record<string, string[]> = {};
    for (const [name, value] of Object.entries(raw)) {
      const last = Array.isArray(value) ? value[value.length - 1] : value;
      if (last === undefined || last === '') continue;
      if (last.length > valueCharsMax) tooLong[name] = [`Ensure this value has at most ${valueCharsMax} characters.`];
      else query[name] = last;
    }
    if (Object.keys(tooLong).length > 0) throw invalid(tooLong);
    // Coercion reads numbers as JavaScript's Number does ("0x10" is 16, "Infinity" and "1e400" are
    // infinite); django-filter's number fields read finite decimal notation alone.
    const numeric = this.numericQueryFields(id);
    let unreadable: Record<string, string[]> | undefined;
    for (const name in query) {
      const message = numeric.get(name);
      const text = query[name] as string;
      if (message !== undefined && !(decimalText.test(text) && Number.isFinite(Number(text)))) (unreadable ??= {})[name] = [message];
    }
    if (!validate(query)) {
      const errors = toFieldErrors((validate.errors ?? []).filter((error: ErrorObject) => error.instancePath !== ''), query, queryMessage);
      for (const name in unreadable) errors[name] ??= unreadable[name]!;
      throw invalid(errors);
    }
    if (unreadable) throw invalid(unreadable);
    for (const [name, value] of this.defaultsOf(id)) if (!(name in query)) query[name] = value;
    return query;
  }

  /** A validated body with its schema's defaults for the fields it leaves out (or sends as null). */
  withDefaults<T extends object>(id: string, body: T): T {
    const filled = { ...body } as Record<string, unknown>;
    for (const [name, value] of this.defaultsOf(id)) filled[name] ??= value;
    return filled as T;
  }

  /** Follows a `$ref` ("common#/$defs/pk") to the schema it names. */
  resolve(schema: AnySchemaObject): AnySchemaObject {
    const ref = schema.$ref as string | undefined;
    if (!ref) return schema;
    const [documentId, pointer = ''] = ref.split('#');
    let target: unknown = this.documents.get(documentId!);
    for (const part of pointer.split('/').filter(Boolean)) target = (target as Record<string, unknown> | undefined)?.[part];
    if (!target) throw new Error(`schema reference "${ref}" names nothing`);
    return this.resolve(target as AnySchemaObject);
  }

  private ajv(use: 'body' | 'query'): Ajv {
    let ajv = this.ajvs.get(use);
    if (!ajv) {
      ajv = createAjv(use === 'query');
      for (const schema of this.documents.values()) ajv.addSchema(schema);
      this.ajvs.set(use, ajv);
    }
    return ajv;
  }

  /** Body schema `id` compiled (on its first use), or undefined if there is none. */
  private compiledBody(id: string): CompiledBody | undefined {
    let compiled = this.bodies.get(id);
    if (compiled) return compiled;
    const schema = this.documents.get(id);
    if (schema?.['x-use'] !== 'body') return undefined;
    compiled = {
      full: this.ajv('body').getSchema(id)!,
      partial: undefined,
      trim: this.trimPlan(schema),
      uuids: this.propertiesWhere(schema, (property) => property.format === 'uuid'),
      datetimes: this.propertiesWhere(schema, (property) => property.format === 'datetime'),
    };
    this.bodies.set(id, compiled);
    return compiled;
  }

  private partialBody(compiled: CompiledBody, id: string): ValidateFunction {
    compiled.partial ??= this.ajv('body').compile({ ...this.documents.get(id)!, $id: `${id}#partial`, required: [] });
    return compiled.partial;
  }

  /** Query schema `id` compiled (on its first use), or undefined if there is none. */
  private compiledQuery(id: string): ValidateFunction | undefined {
    let validate = this.queries.get(id);
    if (validate) return validate;
    if (this.documents.get(id)?.['x-use'] !== 'query') return undefined;
    validate = this.ajv('query').getSchema(id)!;
    this.queries.set(id, validate);
    return validate;
  }

  /** The number and integer parameters of query schema `id` (which coercion reads from strings), each with its message for a value that is none. */
  /**
   * A schema's top-level properties that have a `default`, with it: a query takes them for the
   * parameters it leaves out; a route fills a body's in with withDefaults.
   */
  defaultsOf(id: string): ReadonlyMap<string, unknown> {
    let defaults = this.defaults.get(id);
    if (!defaults) {
      const properties = (this.documents.get(id)!.properties ?? {}) as Record<string, AnySchemaObject>;
      defaults = new Map(Object.entries(properties).filter(([, property]) => 'default' in property).map(([name, property]) => [name, property.default]));
      this.defaults.set(id, defaults);
    }
    return defaults;
  }

  private numericQueryFields(id: string): ReadonlyMap<string, string> {
    let fields = this.numericFields.get(id);
    if (!fields) {
      const properties = (this.documents.get(id)!.properties ?? {}) as Record<string, AnySchemaObject>;
      const numeric = Object.entries(properties)
        .map(([name, property]) => [name, this.resolve(property)] as const)
        .filter(([, property]) => property.type === 'number' || property.type === 'integer');
      fields = new Map(numeric.map(([name, property]) => [name, unreadableQueryValue(property)]));
      this.numericFields.set(id, fields);
    }
    return fields;
  }

  private propertiesWhere(schema: AnySchemaObject, test: (property: AnySchemaObject) => boolean): string[] {
    const properties = (schema.properties ?? {}) as Record<string, AnySchemaObject>;
    return Object.entries(properties).filter(([, property]) => test(this.resolve(property))).map(([name]) => name);
  }

  private trimPlan(schema: AnySchemaObject): TrimPlan {
    const nested = new Map<string, TrimPlan>();
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, AnySchemaObject>)) {
      const resolved = this.resolve(property);
      if (resolved['x-kind'] === 'nested-list' && resolved.items) {
        nested.set(name, this.trimPlan(this.resolve(resolved.items as AnySchemaObject)));
      }
    }
    const fields = this.propertiesWhere(schema, (property) => hasType(property, 'string') && property['x-trim'] !== false);
    return { fields, nested };
  }
}

let shared: Validator | undefined;

/** The validator for the repository's schemas, loaded once per process (each schema compiled on first use). */
export function sharedValidator(): Validator {
  shared ??= Validator.load();
  return shared;
}

const canonicalPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function canonicalUuid(value: string): string {
  return canonicalPattern.test(value) ? value : rewrittenCanonical(value);
}

/** An accepted UUID not in canonical form, written canonically: lower case, hyphenated, no URN prefix. */
function rewrittenCanonical(value: string): string {
  const hex = value.toLowerCase().replace(/^urn:uuid:/, '').replace(/-/g, '');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const uuidPattern = /^(?:urn:uuid:)?(?:[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12})$/i;

/** The `uuid` format: any form Django's UUID field accepts. */
function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}

/** The canonical form of a UUID in any accepted form, or undefined; ids as sent are canonical already (one test). */
export function canonicalUuidOf(value: string): string | undefined {
  if (canonicalPattern.test(value)) return value;
  return uuidPattern.test(value) ? rewrittenCanonical(value) : undefined;
}

const require = createRequire(import.meta.url);

/**
 * Ajv's engine for a user schema's `pattern` and `patternProperties`: RE2 (re2js), whose matching
 * is linear in the text, as the regex scorer's, so that a pattern such as `^(a+)+$` cannot stall
 * the event loop on an agent's output. Lookarounds and backreferences are not RE2: such a schema
 * does not compile.
 */
const re2Engine = Object.assign(
  (pattern: string, flags: string) => {
    const regex = RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
    return { test: (text: string) => regex.matcher(text).find() };
  },
  { code: 're2js' },
);

/**
 * A user's JSON Schema (a json_schema scorer's, or an agent's output_schema) compiled into a
 * check, with an Ajv of its own each time: its `$id`s cannot meet the service's schemas or another
 * user's, and unknown keywords are allowed as most schemas in the wild use some. Throws when the
 * schema is not valid.
 */
export function compileUserSchema(schema: object | boolean): (value: unknown) => boolean {
  const { Ajv } = require('ajv') as typeof import('ajv');
  const addFormats = require('ajv-formats') as typeof import('ajv-formats');
  const ajv = new Ajv({ strict: false, allErrors: false, allowUnionTypes: true, validateFormats: true, code: { regExp: re2Engine } });
  addFormats.default(ajv);
  const check = ajv.compile(schema);
  return (value) => check(value) === true;
}

/** A number as Python's Decimal (django-filter's NumberFilter) reads one, less its underscores: "1.5", "-2", ".5", "5.", "1e3", spaces around. */
const decimalText = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

function createAjv(coerce: boolean): Ajv {
  // Both are CommonJS: required (synchronously) with the first schema compiled, not at start.
  const { Ajv } = require('ajv') as typeof import('ajv');
  const addFormats = require('ajv-formats') as typeof import('ajv-formats');
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    coerceTypes: coerce,
    strict: true,
    allowUnionTypes: true,
    useDefaults: false,
    // A oneOf told apart by a property (a scorer's `type`): only the branch it names is checked,
    // so its errors are the ones reported, under its fields.
    discriminator: true,
  });
  addFormats.default(ajv, ['email']);
  ajv.addFormat('uuid', { type: 'string', validate: isUuid });
  ajv.addFormat('datetime', { type: 'string', validate: isDateTime });
  ajv.addFormat('datetime-or-date', { type: 'string', validate: isDateOrDateTime });
  ajv.addVocabulary(['x-kind', 'x-trim', 'x-use', 'x-filter', 'x-ordering', 'x-search', 'x-description', 'x-pick', 'x-partition']);
  return ajv;
}

/**
 * A schema written as a pick of another's properties (a list item is its record's full form,
 * fewer fields, in an order of its own): `"x-pick": {"from": "<$id>", "properties": [...]}`, or
 * every property but some, in the source's order (`"omit": [...]` instead of `properties`),
 * becomes an object schema holding exactly those properties, each as the full schema defines it,
 * followed by the view's own computed fields, if any (`"computed": {"<name>": <schema>}`).
 */
function picked(schema: AnySchemaObject, documents: ReadonlyMap<string, AnySchemaObject>): AnySchemaObject {
  const { from, properties: listed, omit, computed = {} } = schema['x-pick'] as {
    from: string;
    properties?: string[];
    omit?: string[];
    computed?: Record<string, AnySchemaObject>;
  };
  const source = documents.get(from)?.properties as Record<string, AnySchemaObject> | undefined;
  if (!source) throw new Error(`${schema.$id} picks from "${from}", which has no properties`);
  for (const name of omit ?? []) if (!source[name]) throw new Error(`${schema.$id} omits "${name}", which ${from} does not define`);
  const names = listed ?? Object.keys(source).filter((name) => !omit?.includes(name));
  const properties: Record<string, AnySchemaObject> = {};
  for (const name of names) {
    const property = source[name];
    if (!property) throw new Error(`${schema.$id} picks "${name}", which ${from} does not define`);
    properties[name] = property;
  }
  for (const [name, property] of Object.entries(computed)) {
    if (name in properties) throw new Error(`${schema.$id} computes "${name}", which it also picks`);
    properties[name] = property;
  }
  return { ...schema, type: 'object', additionalProperties: false, required: Object.keys(properties), properties };
}

function trimStrings(data: unknown, plan: TrimPlan): void {
  if (!isPlainObject(data)) return;
  for (const field of plan.fields) {
    const value = data[field];
    if (typeof value === 'string') data[field] = value.trim();
  }
  for (const [field, itemPlan] of plan.nested) {
    const items = data[field];
    if (Array.isArray(items)) for (const item of items) trimStrings(item, itemPlan);
  }
}

function hasType(schema: AnySchemaObject, type: string): boolean {
  return Array.isArray(schema.type) ? schema.type.includes(type) : schema.type === type;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function listJsonFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...listJsonFiles(path));
    else if (entry.name.endsWith('.json')) files.push(path);
  }
  return files.sort();
}
