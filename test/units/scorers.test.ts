// src/scoring/scorers.ts: each scorer's case in test/data/scoring/reference.json (an independent
// Python computation), then what the file cannot hold: the weighted score and its pass, the
// validation errors, the regex engine's bounded cost, the similarity's length limit, json_schema
// with an injected compiler, and schemas/scoring/fields.json through the project's validator.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Rejected } from '../../src/domain/rejection.ts';
import {
  compileScorers,
  patternCharsMax,
  scorersConfigErrors,
  similarityCharsMax,
  type ScorerConfig,
  type ScorerDeps,
  type ScorersConfig,
} from '../../src/scoring/scorers.ts';
import { compileUserSchema, sharedValidator, Validator } from '../../src/validation/validator.ts';

interface ScorerCase {
  name: string;
  scorer: Omit<ScorerConfig, 'name'>;
  output: unknown;
  expected_output: unknown;
  expected: number;
}
const reference = JSON.parse(readFileSync(new URL('../data/scoring/reference.json', import.meta.url), 'utf8')) as {
  tolerance: { relative: number };
  scorers: ScorerCase[];
};

const noDeps: ScorerDeps = {};
const config = (...scorers: ScorerConfig[]): ScorersConfig => ({ method: 'scorers', scorers });

for (const entry of reference.scorers) {
  test(`reference: ${entry.name}`, () => {
    const score = compileScorers(config({ ...entry.scorer, name: 'only' } as ScorerConfig), noDeps)(entry.output, entry.expected_output);
    const near = Math.abs(score.dimensions.only! - entry.expected) <= reference.tolerance.relative * Math.abs(entry.expected);
    assert.ok(near, `${score.dimensions.only} is not ${entry.expected}`);
    assert.is(score.score, score.dimensions.only);
  });
}

test('the score is the weighted mean of the dimensions; passed is score >= pass_threshold (0.7 by default)', () => {
  const scorers = [
    { type: 'exact', name: 'same' },
    { type: 'contains', name: 'mentions', value: 'Paris', weight: 3 },
    { type: 'regex', name: 'digits', pattern: '\\d+', weight: 0 },
  ];
  const score = compileScorers(config(...scorers), noDeps);
  assert.equal(score('Paris', 'London'), { score: 0.75, passed: true, dimensions: { same: 0, mentions: 1, digits: 0 } });
  assert.equal(score('London', 'London'), { score: 0.25, passed: false, dimensions: { same: 1, mentions: 0, digits: 0 } });
  const strict = compileScorers({ ...config(...scorers), pass_threshold: 0.8 }, noDeps);
  assert.is(strict('Paris', 'London').passed, false);
  assert.is(compileScorers({ ...config(...scorers), pass_threshold: 0.25 }, noDeps)('London', 'London').passed, true);
});

test('a valid config has no errors', () => {
  const valid = config({ type: 'regex', name: 'r', pattern: '^(yes|no)$', flags: 'im' }, { type: 'similarity', name: 's', weight: 0.5 });
  assert.is(scorersConfigErrors(valid, noDeps), null);
});

test('errors come one object per scorer, {} for a good one', () => {
  const errors = scorersConfigErrors(
    config(
      { type: 'exact', name: 'fine' },
      { type: 'regex', name: 'backreference', pattern: '(a)\\1' },
      { type: 'regex', name: 'lookahead', pattern: 'a(?=b)' },
      { type: 'regex', name: 'flags', pattern: 'a', flags: 'ii' },
      { type: 'regex', name: 'unknown flag', pattern: 'a', flags: 'g' },
      { type: 'exact', name: 'fine' },
    ),
    noDeps,
  );
  assert.equal(errors, {
    scorers: [
      {},
      { pattern: ['Not a pattern RE2 accepts: error parsing regexp: invalid escape sequence: `\\1`.'] },
      { pattern: ['Not a pattern RE2 accepts: error parsing regexp: invalid or unsupported Perl syntax: `(?=`.'] },
      { flags: ['Use each of the flags i, m, s and u at most once.'] },
      { flags: ['Use each of the flags i, m, s and u at most once.'] },
      { name: ['Another scorer has this name.'] },
    ],
  });
});

test(`a pattern of more than ${patternCharsMax} characters is refused, one of ${patternCharsMax} is not`, () => {
  const errors = (pattern: string) => scorersConfigErrors(config({ type: 'regex', name: 'r', pattern }), noDeps);
  assert.is(errors('a'.repeat(patternCharsMax)), null);
  assert.is(errors('😀'.repeat(patternCharsMax)), null, 'counted in characters');
  assert.equal(errors('a'.repeat(patternCharsMax + 1)), { scorers: [{ pattern: [`Ensure this field has no more than ${patternCharsMax} characters.`] }] });
});

test('at least one scorer must weigh something', () => {
  const errors = scorersConfigErrors(config({ type: 'exact', name: 'a', weight: 0 }, { type: 'similarity', name: 'b', weight: 0 }), noDeps);
  assert.equal(errors, { scorers: ['At least one scorer must have a weight above 0.'] });
});

test('compileScorers refuses an invalid config', () => {
  assert.throws(() => compileScorers(config({ type: 'regex', name: 'r', pattern: '(' }), noDeps), /invalid scorers/);
});

test('a catastrophic pattern for a backtracking engine runs in linear time', () => {
  const score = compileScorers(config({ type: 'regex', name: 'r', pattern: '(a+)+$' }, { type: 'regex', name: 'x', pattern: '(x+x+)+y' }), noDeps);
  for (const length of [30, 100_000]) {
    const started = performance.now();
    const result = score(`${'a'.repeat(length)}!${'x'.repeat(length)}`, null);
    assert.equal(result.dimensions, { r: 0, x: 0 });
    assert.ok(performance.now() - started < 1000, `${length} characters took ${performance.now() - started} ms`);
  }
});

test('regex flags: i, m, s; u is accepted', () => {
  const matches = (pattern: string, flags: string, text: unknown) => compileScorers(config({ type: 'regex', name: 'r', pattern, flags }), noDeps)(text, null).score;
  assert.equal([matches('^yes$', '', 'YES'), matches('^yes$', 'i', 'YES')], [0, 1]);
  assert.equal([matches('^b$', '', 'a\nb'), matches('^b$', 'm', 'a\nb')], [0, 1]);
  assert.equal([matches('a.b', '', 'a\nb'), matches('a.b', 's', 'a\nb')], [0, 1]);
  assert.is(matches('^\\p{L}+$', 'u', 'café'), 1);
  assert.is(matches('"ok":true', '', { ok: true }), 1, 'a value that is not a string is matched as its JSON text');
});

test(`similarity compares the first ${similarityCharsMax} characters of each text, in bounded time`, () => {
  const score = compileScorers(config({ type: 'similarity', name: 's' }), noDeps);
  const long = 'ab'.repeat(similarityCharsMax);
  assert.is(score(`${long}tail`, `${long}other tail`).score, 1, 'past the limit nothing counts');
  assert.is(score('a'.repeat(similarityCharsMax - 1) + 'b', 'a'.repeat(similarityCharsMax)).score, 1 - 1 / similarityCharsMax, 'up to it everything does');
  const started = performance.now();
  score('the quick brown fox '.repeat(20_000), 'a lazy dog sleeps '.repeat(20_000));
  assert.ok(performance.now() - started < 1000, `${performance.now() - started} ms`);
});

test('numeric: a field of an expected value that is not an object is the value itself; non-numbers score 0', () => {
  const score = compileScorers(config({ type: 'numeric', name: 'n', field: 'total', rel_tolerance: 0.1 }), noDeps);
  assert.is(score({ total: 105 }, 100).score, 1);
  assert.is(score({ total: '95.5' }, { total: 100 }).score, 1);
  assert.is(score({ total: true }, { total: 1 }).score, 0);
  assert.is(score('not json', { total: 1 }).score, 0);
});

const ajv = new Ajv2020({ strict: false });
const schemaDeps: ScorerDeps = { compileSchema: (schema) => ajv.compile(schema), outputSchema: { type: 'object', required: ['answer'] } };

test('json_schema: against its own schema, else the agent\'s output_schema; printed output read as JSON', () => {
  const own = { type: 'array', items: { type: 'integer' } };
  const score = compileScorers(config({ type: 'json_schema', name: 'own', schema: own }, { type: 'json_schema', name: 'agent' }), schemaDeps);
  assert.equal(score([1, 2], null).dimensions, { own: 1, agent: 0 });
  assert.equal(score({ answer: 'x' }, null).dimensions, { own: 0, agent: 1 });
  assert.equal(score('Sure: ```json\n{"answer": 1}\n```', null).dimensions, { own: 0, agent: 1 });
  assert.equal(score('[1, 2.5]', null).dimensions, { own: 0, agent: 0 });
});

test('json_schema: a schema is needed, and it must compile', () => {
  assert.equal(scorersConfigErrors(config({ type: 'json_schema', name: 's' }), { compileSchema: schemaDeps.compileSchema }), {
    scorers: [{ schema: ['Give a schema, or set the agent\'s output_schema.'] }],
  });
  const errors = scorersConfigErrors(config({ type: 'json_schema', name: 's', schema: { type: 'nonsense' } }), schemaDeps);
  assert.match(JSON.stringify(errors), /Not a valid JSON Schema: /);
  assert.throws(() => scorersConfigErrors(config({ type: 'json_schema', name: 's', schema: true }), noDeps), /compileSchema/);
});

test('json_schema through the service\'s compiler: a pattern runs on RE2, in linear time (a catastrophic one on a long output stays fast); a lookaround is no RE2 and does not compile', () => {
  const check = compileUserSchema({ type: 'string', pattern: '^(a+)+$' });
  const started = performance.now();
  assert.is(check(`${'a'.repeat(5000)}!`), false);
  assert.is(check('aaaa'), true);
  assert.ok(performance.now() - started < 200, `${(performance.now() - started).toFixed(0)} ms`);
  assert.equal([compileUserSchema({ patternProperties: { '^x-': { type: 'number' } } })({ 'x-a': 1 }), compileUserSchema({ patternProperties: { '^x-': { type: 'number' } } })({ 'x-a': 'one' })], [true, false]);
  const errors = scorersConfigErrors(config({ type: 'json_schema', name: 's', schema: { type: 'string', pattern: '(?=a)a' } }), { compileSchema: compileUserSchema });
  assert.match(JSON.stringify(errors), /Not a valid JSON Schema: /);
});

// schemas/scoring/fields.json through the project's validator: loaded with every schema, and
// usable by $ref from a body schema (here a test one, in a folder of its own with a copy).
test('the shared validator loads the scoring schema', () => {
  const validator = sharedValidator();
  assert.ok(validator.documents.has('scoring.fields'));
  assert.ok(validator.resolve({ $ref: 'scoring.fields#/$defs/scoring' }).oneOf);
});

function withScoringBody(check: (validate: (body: unknown) => Record<string, unknown> | null) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'overmind-scoring-schema-'));
  try {
    writeFileSync(join(dir, 'fields.json'), readFileSync(new URL('../../schemas/scoring/fields.json', import.meta.url)));
    const body = { $id: 'test.scoring', 'x-use': 'body', type: 'object', required: ['scoring'], properties: { scoring: { $ref: 'scoring.fields#/$defs/scoring' } } };
    writeFileSync(join(dir, 'body.json'), JSON.stringify(body));
    const validator = Validator.load(dir);
    validator.compileAll();
    check((scoring) => {
      try {
        validator.body('test.scoring', { scoring });
        return null;
      } catch (error) {
        if (error instanceof Rejected && error.rejection.kind === 'invalid') return error.rejection.fields as Record<string, unknown>;
        throw error;
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const scorerOf = (index: number): ScorerConfig => ({ type: 'exact', name: `s${index}` });

test('the scoring schema accepts both methods', () => {
  withScoringBody((validate) => {
    assert.is(validate({ method: 'spec' }), null);
    assert.is(validate({ method: 'spec', pass_threshold: 55.5 }), null);
    const every = [
      { type: 'exact', name: 'a', trim: true, case_insensitive: true },
      { type: 'contains', name: 'b', value: 'x', weight: 2 },
      { type: 'regex', name: 'c', pattern: 'x', flags: 'imsu' },
      { type: 'json_fields', name: 'd', fields: ['a', 'b'] },
      { type: 'numeric', name: 'e', field: 'n', abs_tolerance: 0.5, rel_tolerance: 0.01 },
      { type: 'json_schema', name: 'f', schema: { type: 'object' } },
      { type: 'similarity', name: 'g', weight: 0 },
    ];
    assert.is(validate({ method: 'scorers', scorers: every, pass_threshold: 1 }), null);
    assert.is(validate({ method: 'scorers', scorers: Array.from({ length: 32 }, (_, i) => scorerOf(i)) }), null);
    const longest = [
      { type: 'json_fields', name: 'n'.repeat(64), fields: Array.from({ length: 256 }, (_, i) => `${i}`.padEnd(255, 'f')) },
      { type: 'contains', name: 'b', value: 'v'.repeat(10_000) },
      { type: 'numeric', name: 'c', field: 'f'.repeat(255) },
    ];
    assert.is(validate({ method: 'scorers', scorers: longest }), null, 'every limit reached, none passed');
  });
});

test('the scoring schema refuses what is out of bounds or unknown', () => {
  withScoringBody((validate) => {
    const refused = (scoring: unknown, why: string) => assert.ok(validate(scoring) !== null, why);
    refused({ method: 'scorers', scorers: Array.from({ length: 33 }, (_, i) => scorerOf(i)) }, '33 scorers');
    refused({ method: 'scorers', scorers: [] }, 'no scorer');
    refused({ method: 'scorers', scorers: [{ type: 'regex', name: 'r', pattern: 'a'.repeat(1001) }] }, 'a pattern of 1001 characters');
    refused({ method: 'scorers', scorers: [{ type: 'regex', name: 'r' }] }, 'a regex without a pattern');
    refused({ method: 'scorers', scorers: [{ type: 'regex', name: 'r', pattern: 'a', flags: 'g' }] }, 'flag g');
    refused({ method: 'scorers', scorers: [{ type: 'exact', name: 'n'.repeat(65) }] }, 'a name of 65 characters');
    refused({ method: 'scorers', scorers: [{ type: 'exact', name: '' }] }, 'an empty name');
    refused({ method: 'scorers', scorers: [{ type: 'exact', name: 'a', weight: -1 }] }, 'a negative weight');
    refused({ method: 'scorers', scorers: [{ type: 'exact', name: 'a', pattern: 'x' }] }, 'an option of another type');
    refused({ method: 'scorers', scorers: [{ type: 'fuzzy', name: 'a' }] }, 'an unknown type');
    refused({ method: 'scorers', scorers: [{ type: 'json_fields', name: 'a', fields: Array.from({ length: 257 }, (_, i) => `f${i}`) }] }, '257 fields');
    refused({ method: 'scorers', scorers: [{ type: 'json_fields', name: 'a', fields: ['f'.repeat(256)] }] }, 'a field name of 256 characters');
    refused({ method: 'scorers', scorers: [{ type: 'numeric', name: 'a', field: 'f'.repeat(256) }] }, 'a numeric field of 256 characters');
    refused({ method: 'scorers', scorers: [{ type: 'contains', name: 'a', value: 'v'.repeat(10_001) }] }, 'a value of 10,001 characters');
    refused({ method: 'scorers', scorers: [{ type: 'regex', name: 'r', pattern: 'a', flags: 'imsui' }] }, 'five flags');
    refused({ method: 'scorers', scorers: [{ type: 'numeric', name: 'a', abs_tolerance: -0.1 }] }, 'a negative tolerance');
    refused({ method: 'scorers', scorers: [scorerOf(0)], pass_threshold: 1.5 }, 'a threshold above 1');
    refused({ method: 'spec', scorers: [] }, 'scorers with the spec method');
    refused({ method: 'judge' }, 'an unknown method');
  });
});

test.run();
