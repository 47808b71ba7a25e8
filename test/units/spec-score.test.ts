// src/scoring/spec-score.ts against test/data/scoring/reference.json, which an independent Python
// script (the original evaluator's language, no code shared) writes beside it from the spec's
// rules: every case's total and each of its dimensions within a relative 1e-9, the same dimension
// names. Then what the file cannot hold: the agent's output parsing on its own, Python's str() of
// odd values, malformed specs, and the tool calls read from a trace's spans.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parsedAgentOutput } from '../../src/scoring/agent-output.ts';
import { pyFloat, pyRound, pyStr, pyStrip, wordTokens } from '../../src/scoring/python-values.ts';
import { scoreRangeOf } from '../../src/scoring/run-scorer.ts';
import { scoreWithSpec, type EvalSpecLike, type ToolCall } from '../../src/scoring/spec-score.ts';
import { toolCallsOf, type SpanLike } from '../../src/scoring/tool-calls.ts';

interface SpecCase {
  name: string;
  spec: EvalSpecLike;
  output: unknown;
  expected_output: unknown;
  tool_calls: ToolCall[] | null;
  expected: { total: number; dimensions: Record<string, number> };
}
interface Reference {
  tolerance: { relative: number; absolute: number };
  spec_score: SpecCase[];
}

const reference = JSON.parse(readFileSync(new URL('../data/scoring/reference.json', import.meta.url), 'utf8')) as Reference;
const { relative, absolute } = reference.tolerance;

function assertNear(actual: number, expected: number, where: string): void {
  assert.ok(Math.abs(actual - expected) <= Math.max(relative * Math.abs(expected), absolute), `${where}: ${actual} is not within tolerance of ${expected}`);
}

test('the reference holds the cases the spec asks for', () => {
  assert.ok(reference.spec_score.length >= 60, `${reference.spec_score.length} cases`);
});

for (const entry of reference.spec_score) {
  test(`reference: ${entry.name}`, () => {
    const score = scoreWithSpec(entry.spec, entry.output, entry.expected_output, entry.tool_calls);
    assertNear(score.total, entry.expected.total, 'total');
    assert.equal(Object.keys(score.dimensions).sort(), Object.keys(entry.expected.dimensions).sort(), 'dimension names');
    for (const [name, points] of Object.entries(entry.expected.dimensions)) assertNear(score.dimensions[name]!, points, name);
  });
}

test('the printed output is read from its candidates in order', () => {
  assert.equal(parsedAgentOutput('{"a": 1}'), { a: 1 });
  assert.equal(parsedAgentOutput('note {"a": 1} and ```json\n{"b": 2}\n```'), { b: 2 }, 'a fenced block before the braces slice');
  assert.equal(parsedAgentOutput('```\n[1, 2,]\n```'), [1, 2], 'an untagged fence, repaired');
  assert.equal(parsedAgentOutput('x {"a": [1, {"b": 2}]} y'), { a: [1, { b: 2 }] });
  assert.equal(parsedAgentOutput('"quoted"'), 'quoted', 'any JSON value counts');
  assert.equal(parsedAgentOutput("{'a': 'b'}"), { a: 'b' });
  assert.equal(parsedAgentOutput('{"s": "line\nnext\r\nlast"}'), { s: 'line\nnext\r\nlast' });
  assert.equal(parsedAgentOutput('{"s": "a\\\\", "t": 1,}'), { s: 'a\\', t: 1 }, 'an escaped backslash ends no string early');
  assert.equal(parsedAgentOutput('{"n": NaN}'), '{"n": NaN}', 'NaN is not JSON');
  assert.equal(parsedAgentOutput('no json'), 'no json');
  assert.equal(parsedAgentOutput(''), '');
});

test('the fenced block is the one Python\'s regular expression finds: after the first fence, "json" in any case and Python\'s whitespace, up to the next fence', () => {
  // Each answer as reference.py's parse_output gives it.
  const cases: [string, unknown][] = [
    ['```JSON  {"a": 1}```', { a: 1 }],
    ['```json```', '```json```'],
    ['``````', '``````'],
    ['````x```', '````x```'],
    ['a ```\n[1,2]\n``` b ```{"z":1}```', [1, 2]],
    ['```jsonx {"a":2}```', { a: 2 }],
    ['```json\u0085\u2003{"b":3}```', { b: 3 }],
    // re.I: the long s (U+017F) matches "s".
    ['```j\u017fon"x"```', 'x'],
  ];
  for (const [text, parsed] of cases) assert.equal(parsedAgentOutput(text), parsed, text);
  // A long run of whitespace with no closing fence: read once, not backtracked over (it took a second at 100,000).
  const long = `\`\`\`json${'\u0085'.repeat(100_000)}x`;
  assert.is(parsedAgentOutput(long), long);
});

test('str() writes values as Python does', () => {
  assert.is(pyStr(null), 'None');
  assert.is(pyStr(undefined), 'None');
  assert.is(pyStr([true, false, null, 'a']), "[True, False, None, 'a']");
  assert.is(pyStr({ k: 'v', n: null }), "{'k': 'v', 'n': None}");
  assert.is(pyStr(["it's", 'say "hi"', 'both \' and "']), `["it's", 'say "hi"', 'both \\' and "']`);
  assert.is(pyStr(['tab\tnew\nback\\', '\u00e9\u00a0\u200b\x7f\u{1f600}']), "['tab\\tnew\\nback\\\\', 'é\\xa0\\u200b\\x7f😀']");
  assert.is(pyStr([0.1, 1e-5, 1e-4, 123.456, -2.5, 1e21, 2 ** 53, -0]), '[0.1, 1e-05, 0.0001, 123.456, -2.5, 1000000000000000000000, 9007199254740992, 0]');
  assert.is(pyStr([1.5e-300, 5e-324, 0.30000000000000004]), '[1.5e-300, 5e-324, 0.30000000000000004]');
  assert.is(pyStr([NaN, Infinity, -Infinity]), '[nan, inf, -inf]');
  assert.is(pyStr({ a: [], b: {} }), "{'a': [], 'b': {}}");
});

test('float() reads what Python reads and refuses the rest', () => {
  // Digits of any script, as CPython reads them (Arabic-Indic, fullwidth, mathematical bold).
  for (const [text, value] of [['1_000', 1000], [' +.5e1\n', 5], ['5.', 5], ['-iNf', -Infinity], ['\u00a012\u3000', 12], ['1e400', Infinity], ['١٢', 12], ['\uff11\uff12.5', 12.5], ['\u0663_\u0664', 34], ['\u{1D7D9}\u{1D7E3}', 11], ['\x851', 1]] as const) {
    assert.is(pyFloat(text), value, text);
  }
  assert.ok(Number.isNaN(pyFloat('nan')));
  // U+001C..U+001F are whitespace to strip() but not around a number; U+FEFF is none.
  for (const text of ['0x10', '1__0', '_1', '1_', '', ' ', '1e', '.', 'infinit', '1,5', '\ufeff1', '1\x1c', '\x1f1', '١ ٢', '½']) assert.is(pyFloat(text), undefined, text);
  assert.is(pyFloat(true), 1);
  assert.is(pyFloat(null), undefined);
  assert.is(pyFloat([]), undefined);
});

test('round() halves to even; strip() is Python\'s whitespace; word tokens are Unicode', () => {
  assert.equal([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, 2.4999999999999996, 2.6].map(pyRound), [0, 2, 2, 4, -0, -2, 2, 3]);
  assert.is(pyStrip('\x1c\x85 a b \u2028'), 'a b');
  assert.is(pyStrip('\ufeffa'), '\ufeffa');
  assert.equal([...wordTokens('café naïve 東京 x_1 ½ a-b')], ['café', 'naïve', '東京', 'x_1', '½', 'a', 'b']);
});

test('malformed settings fall back to their defaults rather than fail', () => {
  const spec = {
    output_fields: {
      n: { type: 'number', weight: 'ten', tolerance: null, tolerance_bands: [{ within: 'x' }, 5] },
      e: { type: 'enum', values: 'abc', weight: 4, partial_credit: true, partial_score: '3' },
      skipped: 'not an object',
      t: { type: 'text', weight: 6, eval_mode: null },
    },
    structure_weight: null,
    tool_config: 'none',
    tool_usage_weight: '5',
    consistency_rules: [7, { field_a: 'n', field_b: 'e', type: 'ordering', operator: '<=', penalty: 'x' }],
  };
  const score = scoreWithSpec(spec, { n: 1, e: 'a', t: 'x' }, { n: 1, e: 'a' }, null);
  // n: weight 0, bands with no valid band score 0; e: values not a list (none allowed), equal: 4;
  // t: eval_mode null is an unknown mode: 0. Structure 20 (every field present), e a type error.
  assert.equal(score.dimensions, { structure: 20, n: 0, e: 4, t: 0, type_penalty: -2, consistency_penalty: 0, tool_usage: 0 });
  assert.is(score.total, 22);
});

test('a spec that is not an object\'s output_fields scores the text path without fields', () => {
  const score = scoreWithSpec({ output_fields: [1, 2] }, 'paid twice', 'paid twice', null);
  assert.equal(score.dimensions, { structure: 20, text_similarity: 100, tool_usage: 0 });
  assert.is(score.total, 100);
});

test('a field named __proto__ or constructor is an ordinary dimension', () => {
  const output = JSON.parse('{"__proto__": "x", "constructor": "y"}') as Record<string, unknown>;
  const fields = JSON.parse('{"__proto__": {"type": "text", "weight": 3}, "constructor": {"type": "text", "weight": 4}, "toString": {"type": "text", "weight": 5}}') as object;
  const score = scoreWithSpec({ output_fields: fields }, output, {}, null);
  assert.equal(Object.keys(score.dimensions), ['structure', '__proto__', 'constructor', 'toString', 'type_penalty', 'consistency_penalty', 'tool_usage']);
  assert.is(Object.getPrototypeOf(score.dimensions), Object.prototype);
  assert.equal([score.dimensions['__proto__'], score.dimensions['constructor'], score.dimensions['toString']], [3, 4, 0]);
  assertNear(score.total, (4 / 6) * 20 + 7, 'total');
});

const span = (fields: Partial<SpanLike>): SpanLike => ({ span_id: 's', parent_span_id: 'p', name: 'tool', operation: '', attributes: {}, ...fields });

test('tool calls are the child spans classified as tool calls, named and decoded by the conventions', () => {
  const calls = toolCallsOf([
    span({ parent_span_id: null, operation: 'execute_tool', name: 'root tool' }),
    span({ operation: 'chat', name: 'llm', attributes: { 'gen_ai.request.model': 'm' } }),
    span({ operation: 'execute_tool', name: 'search', attributes: { inputs: '{"q": "x"}', outputs: '[1, 2]', 'tool.name': 'web_search' } }),
    span({
      name: 'span name',
      attributes: { 'gen_ai.tool.name': 'lookup', 'gen_ai.tool.call.arguments': '{"id": 7}', inputs: '{"id": 0}', 'gen_ai.tool.call.result': 'not json' },
    }),
    span({ attributes: { 'overmind.span_type': 'tool_call', inputs: '[1]', outputs: { already: 'object' } } }),
    span({ parent_span_id: '', operation: 'tool' }),
    span({ operation: 'tool', attributes: { 'gen_ai.tool.name': '', 'gen_ai.tool.call.arguments': 'not json' } }),
  ]);
  assert.equal(calls, [
    { name: 'web_search', args: { q: 'x' }, result: [1, 2] },
    { name: 'lookup', args: { id: 7 }, result: 'not json' },
    { name: 'tool', args: {}, result: { already: 'object' } },
    { name: 'tool', args: {}, result: null },
  ]);
});

test('tool calls read from spans feed the tool score', () => {
  const spec = {
    output_fields: { answer: { type: 'text', weight: 50 } },
    tool_usage_weight: 10,
    tool_config: { dependencies: [{ from_tool: 'lookup', from_field: 'id', to_tool: 'fetch', to_param: 'record' }] },
  };
  const calls = toolCallsOf([
    span({ operation: 'execute_tool', name: 'lookup', attributes: { outputs: '{"id": "A7"}' } }),
    span({ operation: 'execute_tool', name: 'fetch', attributes: { inputs: '{"record": "a7"}' } }),
  ]);
  assert.is(scoreWithSpec(spec, { answer: 'x' }, {}, calls).dimensions.tool_usage, 10);
  assert.is(scoreWithSpec(spec, { answer: 'x' }, {}, toolCallsOf([])).dimensions.tool_usage, undefined);
});


test("a spec's score range holds every score it gives: an enum's partial_score above its weight, a band's score_pct above 1, negative weights", () => {
  const spec = (fields: Record<string, unknown>) => ({ structure_weight: 0, output_fields: fields });
  const level = { type: 'enum', values: ['low', 'high'], weight: 5, partial_credit: true, partial_score: 150 };
  const count = { type: 'number', weight: 40, tolerance_bands: [{ within: 1, score_pct: 1.5 }, { within: 3, score_pct: 0.5 }] };
  const upsideDown = { type: 'number', weight: -20, tolerance_bands: [{ within: 1, score_pct: -6 }] };
  const cases: [EvalSpecLike, unknown, unknown, number][] = [
    [spec({ level }), { level: 'low' }, { level: 'high' }, 150],
    [spec({ count }), { count: 3 }, { count: 3 }, 60],
    [spec({ level, count }), { level: 'low', count: 7 }, { level: 'high', count: 7 }, 210],
    [spec({ upsideDown }), { upsideDown: 1 }, { upsideDown: 1 }, 120],
  ];
  for (const [given, output, expected, most] of cases) {
    const high = scoreRangeOf({ method: 'spec' }, given)[1];
    const { total, dimensions } = scoreWithSpec(given, output, expected, null);
    const fields = Object.keys(given.output_fields as object).reduce((sum, name) => sum + dimensions[name]!, 0);
    assert.is(fields, most, `its fields give ${most} here`);
    assert.ok(total <= high, `${total} lies within [0, ${high}]`);
    assert.is(high, Math.max(100, most), 'the range reaches the most its fields give, and the text path\'s 100');
  }
  // A consistency rule with a negative penalty adds its size when broken.
  const ordered = { structure_weight: 20, output_fields: { a: { type: 'number', weight: 40 }, b: { type: 'number', weight: 40 } }, consistency_rules: [{ type: 'ordering', field_a: 'a', field_b: 'b', operator: '<', penalty: -30 }] };
  assert.is(scoreWithSpec(ordered, { a: 5, b: 5 }, { a: 5, b: 5 }, null).total, 130);
  assert.is(scoreRangeOf({ method: 'spec' }, ordered)[1], 130);
  // Weight 0 with partial credit still gives the default partial score, 1.
  assert.is(scoreWithSpec(spec({ level: { ...level, weight: 0, partial_score: undefined } }), { level: 'low' }, { level: 'high' }, null).total, 1);
});

test.run();
