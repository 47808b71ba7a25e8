// Spec scoring at the sizes the limits allow: the work grows with the spec, the output and the
// trace, not with their products (a helper measured 28 s for consistency rules x enum values, 37 s
// for a parameter's allowed list x tool calls, 25 s for keywords x output length, before each was
// made a lookup). Each case is checked against the plain computation on the same inputs; the
// substring index against String.includes on seeded random texts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { scoreWithSpec, type ToolCall } from '../../src/scoring/spec-score.ts';
import { SubstringIndex } from '../../src/scoring/substring-index.ts';
import { keywordCoverage } from '../../src/scoring/text-similarity.ts';
import { toolScore } from '../../src/scoring/tool-usage.ts';
import { Xoshiro128StarStar } from '../../src/stats/xoshiro128.ts';

test('the substring index answers as includes() does, over random texts of small alphabets (surrogate pairs too)', () => {
  const generator = Xoshiro128StarStar.seeded(35);
  for (const alphabet of [['a', 'b'], ['a', 'b', 'c', 'é', '😀'], [...'abcdefgh']]) {
    for (let round = 0; round < 100; round++) {
      const text = Array.from({ length: generator.nextIndex(200) }, () => alphabet[generator.nextIndex(alphabet.length)]).join('');
      const index = new SubstringIndex(text);
      for (let question = 0; question < 100; question++) {
        const word = Array.from({ length: 1 + generator.nextIndex(8) }, () => alphabet[generator.nextIndex(alphabet.length)]).join('');
        assert.is(index.has(word), text.includes(word), `${JSON.stringify(word)} in ${JSON.stringify(text)}`);
      }
      assert.ok(index.has(''), 'the empty word is in every text');
    }
  }
});

test('keyword coverage of 4,000 keywords against a 16,000-character output (past the plain search): found as substrings, as includes() finds them', () => {
  const expected = Array.from({ length: 4_000 }, (_, i) => `ac${i.toString(36)}`).join(' ');
  const output = `${'ab'.repeat(8_000)} ac1 zz ac2z acz`;
  const keywords = expected.split(' ');
  const found = keywords.filter((keyword) => output.includes(keyword)).length;
  assert.ok(found > 0);
  assert.is(keywordCoverage(output, expected), found / keywords.length);
});

test('consistency rules by the thousand over an enum of 20,000 values: each rule decided as one alone is', () => {
  const values = Array.from({ length: 20_000 }, (_, i) => `v${i}`);
  const output_fields = { n: { type: 'number', weight: 0 }, e: { type: 'enum', values, weight: 0 } };
  const rule = { field_a: 'n', field_b: 'e', penalty: 1 };
  const many = scoreWithSpec({ output_fields, consistency_rules: Array(5_000).fill(rule), structure_weight: 0 }, { n: 95, e: 'v19999' }, {}, null);
  const one = scoreWithSpec({ output_fields, consistency_rules: [rule], structure_weight: 0 }, { n: 95, e: 'v19999' }, {}, null);
  assert.is(one.dimensions.consistency_penalty, -1, 'a high number with the last value contradicts');
  assert.is(many.dimensions.consistency_penalty, -5_000);
});

test('a parameter\'s allowed list of 20,000 values over 5,000 calls, and 20,000 dependencies over 5,000 calls: the shares as computed call by call', () => {
  const allowed = Array.from({ length: 20_000 }, (_, i) => `Mode${i}`);
  const calls: ToolCall[] = Array.from({ length: 5_000 }, (_, i) => ({ name: i % 2 === 0 ? 't' : `other${i}`, args: { p: i % 4 === 0 ? 'mode7' : 'nope' }, result: { id: i } }));
  // Half the calls are of t, half of those pass an allowed value: an arguments share of 0.5.
  assert.is(toolScore({ param_constraints: { t: { p: allowed } } }, calls), 0.5);
  const dependencies = Array.from({ length: 20_000 }, (_, i) => ({ from_tool: 'other1', from_field: 'id', to_tool: i % 2 === 0 ? 't' : 'missing', to_param: 'p' }));
  // Only the dependencies onto t are checked; other1's result id 1 is never t's first argument "mode7".
  assert.is(toolScore({ dependencies }, calls), 0);
});

test.run();
