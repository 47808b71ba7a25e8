// trimWhere: the one way the service trims by a test of each character (Python's strip(), C's
// isspace() around a number, a slug's hyphens, a command's trailing newlines).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { slugify } from '../../src/traces/slug.ts';
import { trimWhere } from '../../src/trim.ts';

const isSpace = (code: number) => code === 0x20;

test('trims both ends, or the end only, and answers the same string when nothing is trimmed', () => {
  assert.is(trimWhere('  a b  ', isSpace), 'a b');
  assert.is(trimWhere('  a b  ', isSpace, 'end'), '  a b');
  assert.is(trimWhere('    ', isSpace), '');
  assert.is(trimWhere('', isSpace), '');
  const untouched = 'a b';
  assert.is(trimWhere(untouched, isSpace), untouched);
});

test('a long run inside is kept whole (a regular expression such as / +$/ backtracks over it in quadratic time)', () => {
  const inner = `a${' '.repeat(200_000)}b`;
  assert.is(trimWhere(` ${inner} `, isSpace), inner);
  assert.is(slugify(`--a${'_'.repeat(200_000)}b__`), `a${'_'.repeat(200_000)}b`);
});

test.run();
