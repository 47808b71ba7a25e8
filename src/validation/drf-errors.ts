// Turns ajv errors into DRF's error maps and wording. Bodies speak as DRF serializers do
// ("A valid integer is required."), query strings as django-filter's form fields do
// ("Enter a number."). Schemas mark what DRF would treat specially with `x-kind`:
//   "pk"          a reference to another record (PrimaryKeyRelatedField)
//   "nested-list" a list of nested records (ListSerializer: its own errors go in non_field_errors)
//   "slug"        a SlugField (letters, numbers, underscores or hyphens)
import type { AnySchemaObject, ErrorObject } from 'ajv';
import type { FieldErrors } from '../domain/rejection.ts';
import { pythonFloatRepr } from '../python-float.ts';

type SchemaNode = {
  type?: string | string[];
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  maxItems?: number;
  'x-kind'?: 'pk' | 'nested-list' | 'slug';
};

const int64Max = 2 ** 63;

/** Python's name for the type of a JSON value, as DRF prints it. */
export function pythonType(value: unknown): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  switch (typeof value) {
    case 'string':
      return 'str';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(value) ? 'int' : 'float';
    default:
      return 'dict';
  }
}

/**
 * A schema's bound as DRF (and Django's validators, for a query) prints it: the int64 limits
 * written out (JSON's 9223372036854775807 reads as 2^63), a whole number below 1e16 as an int, any
 * other as Python prints a float (1e-09, 1e+100).
 */
function bound(value: number): string {
  if (value === int64Max) return '9223372036854775807';
  if (value === -int64Max) return '-9223372036854775808';
  return Number.isInteger(value) && Math.abs(value) < 1e16 ? String(value) : pythonFloatRepr(value);
}

function expectedType(schema: SchemaNode): string {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? ''];
  return types.find((type) => type !== 'null') ?? '';
}

export function bodyMessage(error: ErrorObject): string {
  const schema = (error.parentSchema ?? {}) as SchemaNode;
  const data: unknown = error.data;
  switch (error.keyword) {
    case 'required':
      return 'This field is required.';
    case 'type': {
      if (data === null) return 'This field may not be null.';
      if (schema['x-kind'] === 'pk') return `Incorrect type. Expected pk value, received ${pythonType(data)}.`;
      switch (expectedType(schema)) {
        case 'string':
          return 'Not a valid string.';
        case 'integer':
          return 'A valid integer is required.';
        case 'number':
          return 'A valid number is required.';
        case 'boolean':
          return 'Must be a valid boolean.';
        case 'object':
          return `Invalid data. Expected a dictionary, but got ${pythonType(data)}.`;
        case 'array':
          return `Expected a list of items but got type "${pythonType(data)}".`;
        default:
          return 'Invalid value.';
      }
    }
    case 'minLength':
      return schema.minLength === 1 ? 'This field may not be blank.' : `Ensure this field has at least ${schema.minLength} characters.`;
    case 'maxLength':
      return `Ensure this field has no more than ${schema.maxLength} characters.`;
    case 'minimum':
      return `Ensure this value is greater than or equal to ${bound(schema.minimum!)}.`;
    case 'maximum':
      return `Ensure this value is less than or equal to ${bound(schema.maximum!)}.`;
    case 'exclusiveMinimum':
      return `Ensure this value is greater than ${bound(schema.exclusiveMinimum!)}.`;
    case 'minItems':
      return schema.minItems === 1 ? 'This list may not be empty.' : `Ensure this field has at least ${schema.minItems} elements.`;
    case 'maxItems':
      return `Ensure this field has no more than ${schema.maxItems} elements.`;
    case 'enum':
      return `"${String(data)}" is not a valid choice.`;
    case 'format':
      return formatMessage(schema.format);
    case 'pattern':
      return schema['x-kind'] === 'slug' ? slugMessage : 'Enter a valid value.';
    case 'additionalProperties':
      return 'Unknown field.';
    case 'discriminator': {
      // The property that tells a oneOf's records apart (a scorer's `type`): missing, or none of its choices.
      const { tagValue } = error.params as DiscriminatorParams;
      if (tagValue === undefined) return 'This field is required.';
      if (tagValue === null) return 'This field may not be null.';
      const text = typeof tagValue === 'string' ? tagValue : typeof tagValue === 'boolean' ? (tagValue ? 'True' : 'False') : JSON.stringify(tagValue);
      return `"${text}" is not a valid choice.`;
    }
    default:
      return error.message ?? 'Invalid value.';
  }
}

/** DRF's SlugField message, curly quotes included. */
const slugMessage = 'Enter a valid \u201cslug\u201d consisting of letters, numbers, underscores or hyphens.';

function formatMessage(format: string | undefined): string {
  switch (format) {
    case 'uuid':
      return 'Must be a valid UUID.';
    case 'email':
      return 'Enter a valid email address.';
    case 'datetime':
      return 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].';
    default:
      return 'Invalid value.';
  }
}

/** django-filter's form-field wording for an unusable query-string value. */
export function queryMessage(error: ErrorObject): string {
  const schema = (error.parentSchema ?? {}) as SchemaNode;
  if (error.keyword === 'format') {
    if (schema.format === 'uuid') return 'Enter a valid UUID.';
    if (schema.format === 'datetime' || schema.format === 'datetime-or-date') return 'Enter a valid date/time.';
  }
  if (error.keyword === 'enum') return `Select a valid choice. ${String(error.data)} is not one of the available choices.`;
  // Django's MinValueValidator and MaxValueValidator.
  if (error.keyword === 'minimum') return `Ensure this value is greater than or equal to ${bound(schema.minimum!)}.`;
  if (error.keyword === 'maximum') return `Ensure this value is less than or equal to ${bound(schema.maximum!)}.`;
  return unreadableQueryValue(schema);
}

/** django-filter's wording for a query-string value its field cannot read as the schema's type. */
export function unreadableQueryValue(schema: AnySchemaObject): string {
  switch (expectedType(schema as SchemaNode)) {
    case 'number':
      return 'Enter a number.';
    case 'integer':
      return 'Enter a whole number.';
    case 'boolean':
      return 'Enter a valid boolean.';
    default:
      return 'Enter a valid value.';
  }
}

/**
 * Places each error's message at its field in DRF's nested shape: items of a nested list are a
 * list with one map per item ({} for valid ones); an error about a nested record itself, or about
 * the whole body, goes under `non_field_errors`. One message per field, the first.
 */
export function toFieldErrors(errors: readonly ErrorObject[], data: unknown, message: (error: ErrorObject) => string): FieldErrors {
  const root: FieldErrors = {};
  const explained = explainedPaths(errors);
  for (const error of errors) {
    if (isAboutAlternative(error) && explained.has(error.instancePath)) continue;
    const path = error.instancePath.split('/').slice(1).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (error.keyword === 'required') path.push((error.params as { missingProperty: string }).missingProperty);
    if (error.keyword === 'discriminator') path.push((error.params as DiscriminatorParams).tag);
    if (error.keyword === 'additionalProperties') path.push((error.params as { additionalProperty: string }).additionalProperty);
    const schema = (error.parentSchema ?? {}) as SchemaNode;
    // These name a field of the record (pushed above): the message is that field's.
    const aboutField = error.keyword === 'required' || error.keyword === 'discriminator' || error.keyword === 'additionalProperties';
    const aboutContainer = !aboutField && (expectedType(schema) === 'object' || schema['x-kind'] === 'nested-list');
    place(root, data, path, message(error), aboutContainer);
  }
  return root;
}

interface DiscriminatorParams {
  error: 'tag' | 'mapping';
  tag: string;
  tagValue?: unknown;
}

/**
 * An error that only says the value was not some other alternative of an `anyOf` (a field that
 * is a record or null): the anyOf's own error, and the null alternative's type error. It is left
 * out when the alternative the value was meant as says what is wrong, at its path or below.
 */
function isAboutAlternative(error: ErrorObject): boolean {
  return error.keyword === 'anyOf' || (error.keyword === 'type' && (error.params as { type: string }).type === 'null');
}

/** The paths at or above which some error other than isAboutAlternative's says what is wrong (a set: errors by the thousand in a batch). */
function explainedPaths(errors: readonly ErrorObject[]): Set<string> {
  const paths = new Set<string>();
  if (!errors.some(isAboutAlternative)) return paths;
  for (const error of errors) {
    if (isAboutAlternative(error)) continue;
    let path = error.instancePath;
    while (!paths.has(path)) {
      paths.add(path);
      if (path === '') break;
      path = path.slice(0, path.lastIndexOf('/'));
    }
  }
  return paths;
}

type Node = FieldErrors | FieldErrors[];

function place(root: FieldErrors, data: unknown, path: string[], text: string, aboutContainer: boolean): void {
  let node: Node = root;
  let value: unknown = data;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    const last = i === path.length - 1;
    const child: unknown = (value as Record<string, unknown> | undefined)?.[segment];
    if (Array.isArray(node)) {
      const item: FieldErrors = (node[Number(segment)] ??= {});
      if (last) {
        addMessage(item, 'non_field_errors', text);
        return;
      }
      node = item;
    } else if (last) {
      if (aboutContainer) {
        const nested = (node[segment] ??= {}) as FieldErrors;
        if (!Array.isArray(nested)) addMessage(nested, 'non_field_errors', text);
      } else {
        addMessage(node, segment, text);
      }
      return;
    } else if (Array.isArray(child)) {
      const existing: unknown = node[segment];
      node = Array.isArray(existing) && typeof existing[0] === 'object'
        ? (existing as FieldErrors[])
        : (node[segment] = child.map(() => ({})) as FieldErrors[]);
    } else {
      node = (node[segment] ??= {}) as FieldErrors;
    }
    value = child;
  }
  addMessage(root, 'non_field_errors', text);
}

function addMessage(node: FieldErrors, field: string, text: string): void {
  const existing = node[field];
  if (existing === undefined) node[field] = [text];
}
