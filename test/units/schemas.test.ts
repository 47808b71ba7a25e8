// Each field, enum and default is written once, in schemas/; what TypeScript must also spell out
// (the domain's enums, writable fields, blank-text and other defaults) is held equal to the schemas here,
// and list items are derived from their full forms.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  agentBlankText, agentDefaults, agentWritableFields, iterationBlankText, iterationStatuses, iterationWritableFields, jobBlankText, jobStatuses,
  jobTypes, jobWritableFields, projectDefaults,
} from '../../src/domain/records.ts';
import { keyFields, storedFields, type FieldKind } from '../../src/domain/result-row.ts';
import { sharedValidator, Validator } from '../../src/validation/validator.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { documents } = sharedValidator();
const properties = (id: string) => documents.get(id)!.properties as Record<string, { default?: unknown; enum?: unknown[] }>;
const defOf = (id: string, name: string) => (documents.get(id)!.$defs as Record<string, { enum: unknown[] }>)[name]!;
const withoutNull = (values: unknown[]) => values.filter((value) => value !== null);

test('the domain enums are the schemas\' enums', () => {
  assert.equal([...jobStatuses], defOf('jobs.fields', 'status').enum);
  assert.equal([...jobTypes], withoutNull(defOf('jobs.fields', 'jobType').enum));
  assert.equal([...iterationStatuses], withoutNull(defOf('iterations.fields', 'status').enum));
});

test('the writable fields are the request schemas\' properties', () => {
  assert.equal([...agentWritableFields].sort(), Object.keys(properties('agents.agent')).sort());
  assert.equal([...jobWritableFields].sort(), Object.keys(properties('jobs.job')).sort());
  assert.equal([...iterationWritableFields].sort(), Object.keys(properties('iterations.iteration')).sort());
});

test('the text fields that default to "" are those whose request schema says so', () => {
  const blank = (id: string) => Object.entries(properties(id)).filter(([, property]) => property.default === '').map(([name]) => name).sort();
  assert.equal([...agentBlankText].sort(), blank('agents.agent'));
  assert.equal([...jobBlankText].sort(), blank('jobs.job'));
  assert.equal([...iterationBlankText].sort(), blank('iterations.iteration'));
});

test('the booleans and counts that read back as their model\'s default are those whose request schema gives one', () => {
  const others = (id: string) =>
    Object.fromEntries(
      Object.entries(properties(id)).filter(([, property]) => property.default !== undefined && property.default !== '').map(([name, property]) => [name, property.default]),
    );
  assert.equal(others('agents.agent'), { ...agentDefaults });
  assert.equal(others('projects.project'), { ...projectDefaults });
  assert.equal(agentDefaults, { dataset_has_expected_output: false, dataset_size: 0 });
  assert.equal(projectDefaults, { is_active: true });
});

test('every view picked from a record\'s schema holds each picked field exactly as the record\'s schema describes it', () => {
  const views = [...documents.values()].filter((schema) => schema['x-pick']);
  assert.ok(views.length >= 7, `${views.length} picked views`);
  for (const view of views) {
    const { from, properties: listed, omit = [], computed = {} } = view['x-pick'] as { from: string; properties?: string[]; omit?: string[]; computed?: object };
    const names = listed ?? Object.keys(properties(from)).filter((name) => !omit.includes(name));
    assert.is(view.additionalProperties, false, view.$id);
    assert.equal(view.required, [...names, ...Object.keys(computed)], `${view.$id}: every field required, picked ones first`);
    for (const name of names) assert.equal((view.properties as Record<string, unknown>)[name], properties(from)[name], `${view.$id} ${name}`);
  }
});

test('no response schema writes an enum of a record again: the views of iterations pick its status', () => {
  const written = [...documents.values()]
    .filter((schema) => schema['x-use'] === 'response' && !schema['x-pick'])
    .filter((schema) => JSON.stringify(schema).includes('"enum":["keep","discard"'))
    .map((schema) => schema.$id);
  assert.equal(written, []);
});

test('a result row is described once: the field table is the response schema\'s fields, each of the type its kind stores, and clients write its writable fields', () => {
  const response = properties('results.result-response') as Record<string, Record<string, unknown>>;
  const wire = storedFields.filter((field) => field.wire);
  assert.equal([...keyFields, ...wire.map((field) => field.name), 'output'].sort(), Object.keys(response).sort());
  const schemaOfKind: Record<FieldKind, unknown> = {
    number: { type: ['number', 'null'] },
    boolean: { type: ['boolean', 'null'] },
    status: { $ref: 'results.fields#/$defs/status' },
    flag: { type: 'boolean' },
    text: { type: 'string' },
    hexId: { type: ['string', 'null'] },
    numbers: { $ref: 'results.fields#/$defs/dimensionScores' },
    time: { type: 'string', format: 'date-time' },
  };
  for (const field of wire) {
    const { description: _, pattern: __, ...schema } = response[field.name]!;
    assert.equal(schema, schemaOfKind[field.kind], field.name);
  }
  const write = documents.get('results.results-write')!.properties as { results: { items: { properties: Record<string, unknown> } } };
  const addressing = ['datapoint', 'datapoint_order', 'attempt', 'output'];
  assert.equal(
    storedFields.filter((field) => field.writable).map((field) => field.name).sort(),
    Object.keys(write.results.items.properties).filter((name) => !addressing.includes(name)).sort(),
  );
});

test('a pick of a property its source does not define stops the load', () => {
  const dir = mkdtempSync(join(tmpdir(), 'overmind-schemas-'));
  try {
    writeFileSync(join(dir, 'full.json'), JSON.stringify({ $id: 'full', 'x-use': 'response', type: 'object', properties: { a: { type: 'string' } } }));
    writeFileSync(join(dir, 'item.json'), JSON.stringify({ $id: 'item', 'x-use': 'response', 'x-pick': { from: 'full', properties: ['a', 'b'] } }));
    assert.throws(() => Validator.load(dir), /picks "b", which full does not define/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
