// The original evaluator's two deterministic measures of a text against the expected one, each in
// [0, 1]: sim (word overlap with a length factor) and kw (the share of the expected text's
// keywords found in it). Both read their values as `str(x or "").strip()`, so a missing value,
// null, false, 0, "", [] and {} are empty text. Pure.
import { pyLength, pyLower, pyText, wordTokens } from './python-values.ts';
import { SubstringIndex } from './substring-index.ts';

/** An answer this much shorter (or, past `longRatioMin`, longer) than expected loses points. */
const shortRatioMax = 0.3;
const longRatioMin = 3;
const longFactorMin = 0.5;

/**
 * `sim(a, e)`: 0.6 x the share of e's word tokens in a plus 0.4 x their Jaccard index, times the
 * length factor (a / e in code points: below 0.3 scaled down linearly, above 3 less 0.1 per unit,
 * never below 0.5). Both empty: 1; a empty: 0; e empty: 1; e without word tokens: 1 when a has
 * some, else 0.5.
 */
export function similarity(actual: unknown, expected: unknown): number {
  const a = pyText(actual);
  const e = pyText(expected);
  if (a === '' && e === '') return 1;
  if (a === '') return 0;
  if (e === '') return 1;
  const actualTokens = wordTokens(pyLower(a));
  const expectedTokens = wordTokens(pyLower(e));
  if (expectedTokens.size === 0) return actualTokens.size > 0 ? 1 : 0.5;
  let shared = 0;
  for (const token of actualTokens) if (expectedTokens.has(token)) shared++;
  const jaccard = shared / (actualTokens.size + expectedTokens.size - shared);
  const coverage = shared / expectedTokens.size;
  return (0.6 * coverage + 0.4 * jaccard) * lengthFactor(pyLength(a) / Math.max(pyLength(e), 1));
}

function lengthFactor(ratio: number): number {
  if (ratio < shortRatioMax) return ratio / shortRatioMax;
  if (ratio > longRatioMin) return Math.max(longFactorMin, 1 - 0.1 * (ratio - longRatioMin));
  return 1;
}

/** The 94 stopwords left out of kw's keywords. */
const stopwords: ReadonlySet<string> = new Set(
  ('a above after all an and any are as at be been before being below between both but by can could did do does during each ' +
    'either every few for from had has have he her him his i in into is it its may me might more most my neither no nor not of ' +
    'on only or other our own same shall she should so some such than that the their them these they this those through to too ' +
    'very was we were what which who whom will with would yet you your').split(' '),
);

/**
 * `kw(a, e)`: the share of e's keywords (its lowercase word tokens less the stopwords) found as
 * substrings of lower(a). e empty: 1 if a is not, else 0; a empty: 0; no keywords: 1.
 */
export function keywordCoverage(actual: unknown, expected: unknown): number {
  const a = pyText(actual);
  const e = pyText(expected);
  if (e === '') return a === '' ? 0 : 1;
  if (a === '') return 0;
  const lowered = pyLower(a);
  const keywords = [...wordTokens(pyLower(e))].filter((token) => !stopwords.has(token));
  if (keywords.length === 0) return 1;
  // Searched one by one (includes() scans ~1,300 times faster a character than the index builds),
  // unless there are so many keywords that an index of the text, answering each in its length, wins.
  const holds = keywords.length < indexedFromKeywords ? (keyword: string) => lowered.includes(keyword) : indexed(lowered);
  let found = 0;
  for (const keyword of keywords) if (holds(keyword)) found++;
  return found / keywords.length;
}

/** Keywords from which the text is indexed (the break-even measured at 1,000-2,000 whatever the text's length). */
const indexedFromKeywords = 2_000;

function indexed(text: string): (keyword: string) => boolean {
  const index = new SubstringIndex(text);
  return (keyword) => index.has(keyword);
}
