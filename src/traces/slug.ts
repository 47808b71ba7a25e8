// Django's slugify: accents folded to ASCII, anything but letters, digits, underscores, spaces and
// hyphens dropped, lower case, runs of spaces and hyphens made one hyphen, leading and trailing
// hyphens and underscores trimmed.
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[^\x00-\x7f]/g, '')
    .replace(/[^\w\s-]/g, '')
    .toLowerCase()
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
}
