// DRF's SearchFilter: the term is split on whitespace and commas (quoted phrases stay whole),
// every term must match, and a term matches when any search field contains it, ignoring case.
import type { Predicate } from './filters.ts';

// Django's smart_split: runs of non-space text where quoted parts may contain spaces.
const tokenPattern = /(?:[^\s'"]*(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')[^\s'"]*)+|\S+/g;

export function splitSearchTerms(raw: string, termsMax: number): string[] {
  const terms: string[] = [];
  for (const token of raw.replace(/\0/g, '').match(tokenPattern) ?? []) {
    const term = token.replace(/^,+|,+$/g, '');
    const quote = term[0];
    if ((quote === '"' || quote === "'") && term.length >= 2 && term.at(-1) === quote) {
      terms.push(term.slice(1, -1).replace(/\\(.)/g, '$1'));
    } else {
      for (const part of term.split(',')) if (part.trim()) terms.push(part.trim());
    }
  }
  return terms.slice(0, termsMax).map((term) => term.toLowerCase());
}

export function searchPredicate(terms: readonly string[], fields: readonly string[]): Predicate | null {
  if (terms.length === 0) return null;
  return (record) => {
    const values = record as Record<string, unknown>;
    return terms.every((term) =>
      fields.some((field) => {
        const value = values[field];
        return typeof value === 'string' && value.toLowerCase().includes(term);
      }),
    );
  };
}
