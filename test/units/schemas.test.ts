// Each field, enum and default is written once, in schemas/; what TypeScript must also spell out
// (the domain's enums, writable fields and blank-text defaults) is held equal to the schemas here,
// and list items are derived from their full forms.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  agentBlankText, agentWritableFields, iterationBlankText, iterationStatuses, iterationWritableFields, jobBlankText, jobStatuses,
  jobTypes, jobWritableFields,
} from '../../src/domain/records.ts';
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

test('a list item is its full form\'s properties, picked in an order of its own', () => {
  for (const [item, full] of [
    ['agents.agent-list-item-response', 'agents.agent-response'],
    ['datasets.dataset-list-item-response', 'datasets.dataset-response'],
    ['jobs.job-list-item-response', 'jobs.job-response'],
  ] as const) {
    const picked = documents.get(item)!;
    assert.is(picked.additionalProperties, false);
    assert.equal(picked.required, Object.keys(picked.properties as object));
    for (const [name, schema] of Object.entries(picked.properties as object)) assert.equal(schema, properties(full)[name], `${item} ${name}`);
  }
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
