// The validators are compiled on first use (a start does not pay for all of them); compileAll()
// compiles every one here, so a broken schema fails this test rather than a first request.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '../../src/validation/validator.ts';

test('every body (full and partial) and query schema compiles', () => {
  const validator = Validator.load();
  const uses = [...validator.documents.values()].map((schema) => schema['x-use']);
  assert.ok(uses.filter((use) => use === 'body').length >= 5 && uses.filter((use) => use === 'query').length >= 5, 'bodies and queries');
  validator.compileAll();
  // Compiled already: using them, or compiling again, compiles nothing twice.
  validator.compileAll();
  assert.equal(validator.body('projects.project', { name: ' p ' }, { partial: true }), { name: 'p' });
});

test('a broken schema fails compileAll, and a request using it, not the load', () => {
  const dir = mkdtempSync(join(tmpdir(), 'overmind-schemas-'));
  try {
    writeFileSync(join(dir, 'thing.json'), JSON.stringify({ $id: 'thing', 'x-use': 'body', type: 'object', properties: { a: { type: 'strin' } } }));
    const validator = Validator.load(dir);
    assert.throws(() => validator.compileAll());
    assert.throws(() => Validator.load(dir).body('thing', {}));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('schemas not of their kind are refused as before', () => {
  const validator = Validator.load();
  assert.throws(() => validator.body('no.such', {}), /no body schema "no.such"/);
  assert.throws(() => validator.query('projects.project', {}), /no query schema "projects.project"/);
});

test.run();
