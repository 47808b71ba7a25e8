// DRF's page-number pagination as pure decisions: which page and how large, and cutting it from
// any source that can count its items and cut a slice. The HTTP layer only reads the parameters
// and writes the envelope with its links.

/** What a source answers for one slice: how many items there are in all, and the slice. */
export interface Page<T> {
  count: number;
  items: T[];
}

export interface PageSizes {
  sizeDefault: number;
  sizeMax: number;
}

/** A page number that is not a positive integer, "last", or a page that does not exist. */
export class InvalidPage extends Error {
  constructor() {
    super('Invalid page.');
    this.name = 'InvalidPage';
  }
}

/** DRF's page number: a positive integer up to `pageMax`, or "last"; absent means 1. */
export function pageNumber(raw: unknown, pageMax: number): number | 'last' {
  if (raw === undefined) return 1;
  const text = String(raw).trim();
  if (text === 'last') return 'last';
  if (!/^\+?\d+$/.test(text)) throw new InvalidPage();
  const page = Number(text);
  if (page < 1 || page > pageMax) throw new InvalidPage();
  return page;
}

/** DRF's page_size: a positive integer clamped to the maximum; anything else means the default. */
export function pageSize(raw: unknown, sizes: PageSizes): number {
  if (raw === undefined) return sizes.sizeDefault;
  const text = String(raw).trim();
  if (!/^\+?\d+$/.test(text)) return sizes.sizeDefault;
  const size = Number(text);
  return size < 1 ? sizes.sizeDefault : Math.min(size, sizes.sizeMax);
}

/** One page cut from a source, with its number and how many pages there are. */
export interface NumberedPage<T> extends Page<T> {
  number: number;
  pages: number;
}

/** The requested page of `fetch`'s items ("last" is the last; past the end is InvalidPage). */
export function cutPage<T>(requested: number | 'last', size: number, fetch: (offset: number, limit: number) => Page<T>): NumberedPage<T> {
  let number = requested === 'last' ? 1 : requested;
  let page = fetch((number - 1) * size, size);
  const pages = Math.max(1, Math.ceil(page.count / size));
  if (requested === 'last' && pages > 1) {
    number = pages;
    page = fetch((number - 1) * size, size);
  }
  if (number > pages) throw new InvalidPage();
  return { ...page, number, pages };
}
