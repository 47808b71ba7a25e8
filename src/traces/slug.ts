// Django's slugify: accents folded to ASCII, anything but letters, digits, underscores, spaces and
// hyphens dropped, lower case, runs of spaces and hyphens made one hyphen, leading and trailing
// hyphens and underscores trimmed.
import { trimWhere } from '../trim.ts';

export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[^\x00-\x7f]/g, '')
    .replace(/[^\w\s-]/g, '')
    .toLowerCase()
    .replace(/[-\s]+/g, '-');
  return trimWhere(slug, (code) => code === 0x2d || code === 0x5f);
}
