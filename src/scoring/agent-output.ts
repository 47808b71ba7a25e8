// The agent's printed output read as JSON where it holds some, as the original evaluator read it.
// The candidates, in order: the whole text; the first fenced block (``` or ```json, any case);
// the slice from the first "{" to the last "}"; the slice from the first "[" to the last "]". Each
// is parsed after a repair pass (raw CR and LF inside strings escaped, a comma followed only by
// whitespace and then "}" or "]" outside strings dropped), and the first that parses wins; then
// the same candidates again with every single quote turned into a double quote. Any JSON value
// counts. Text where none parses stays text. Pure.
//
// JSON.parse, like JSON, refuses NaN and Infinity, which Python's json module would read.
import type { Json } from '../domain/records.ts';
import { isPyWhitespace } from './python-values.ts';

const fence = '```';

/**
 * The first fenced block's text, as Python's re.search(r'```(?:json)?\s*(.*?)```', text, re.S | re.I)
 * finds it, or undefined: after the first fence, an optional "json" (any case) and Python's
 * whitespace (U+0085 is some, U+FEFF is none), up to the next fence. Only the first fence can open
 * a match (a later one would need a closing fence after it, which would close the first). Found
 * with indexOf, not the regular expression, whose backtracking over a long run of whitespace with
 * no closing fence takes quadratic time (a second for 100,000 characters).
 */
function fencedBlock(text: string): string | undefined {
  const opening = text.indexOf(fence);
  if (opening === -1) return undefined;
  let start = opening + fence.length;
  // re.I matches "ſ" (U+017F, long s) with "s", as Unicode's case folding does; toLowerCase() does not.
  if (text.slice(start, start + 4).toLowerCase().replaceAll('ſ', 's') === 'json') start += 4;
  while (start < text.length && isPyWhitespace(text.charCodeAt(start))) start++;
  const closing = text.indexOf(fence, start);
  return closing === -1 ? undefined : text.slice(start, closing);
}

/** The JSON value the text holds, or the text itself when it holds none. */
export function parsedAgentOutput(text: string): Json {
  const candidates = candidatesOf(text);
  for (const candidate of candidates) {
    const value = parsedRepaired(candidate);
    if (value !== undefined) return value;
  }
  for (const candidate of candidates) {
    const value = parsedRepaired(candidate.replaceAll("'", '"'));
    if (value !== undefined) return value;
  }
  return text;
}

function candidatesOf(text: string): string[] {
  const candidates = [text];
  const fenced = fencedBlock(text);
  if (fenced !== undefined) candidates.push(fenced);
  for (const [opening, closing] of [['{', '}'], ['[', ']']] as const) {
    const start = text.indexOf(opening);
    const end = text.lastIndexOf(closing);
    if (start !== -1 && end > start) candidates.push(text.slice(start, end + 1));
  }
  return candidates;
}

/** The repair pass leaves valid JSON as it is, so valid JSON is parsed without it. */
function parsedRepaired(candidate: string): Json | undefined {
  return parsed(candidate) ?? parsed(repaired(candidate));
}

function parsed(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/** Raw CR and LF inside strings escaped; a comma before only whitespace and "}" or "]" (outside strings) dropped. */
export function repaired(text: string): string {
  let out = '';
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (inString) {
      if (escaped) {
        escaped = false;
        out += char;
        continue;
      }
      if (char === '\\') escaped = true;
      else if (char === '"') inString = false;
      out += char === '\n' ? '\\n' : char === '\r' ? '\\r' : char;
    } else if (char === '"') {
      inString = true;
      out += char;
    } else if (char !== ',' || !closesNext(text, i + 1)) {
      out += char;
    }
  }
  return out;
}

/** Whether only JSON whitespace stands between `from` and a "}" or "]". */
function closesNext(text: string, from: number): boolean {
  let i = from;
  while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  return text[i] === '}' || text[i] === ']';
}
