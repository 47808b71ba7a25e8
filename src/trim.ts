// Trimming by a test of each UTF-16 code unit, as one loop from each end: a regular expression
// such as /\s+$/ is tried at every character of a long inner run and backtracks over it, which
// takes quadratic time (seconds for a run of 60,000 characters). Pure.

/** `text` less the code units at its ends (or only its end) that `isEdge` accepts. */
export function trimWhere(text: string, isEdge: (code: number) => boolean, ends: 'both' | 'end' = 'both'): string {
  let start = 0;
  let end = text.length;
  if (ends === 'both') while (start < end && isEdge(text.charCodeAt(start))) start++;
  while (end > start && isEdge(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}
