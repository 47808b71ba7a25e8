// The order of records by creation as the service lists them: by created_at, ties broken by id in
// the same direction (docs/API.md, "Ordering"). Records created one after another can share a
// created_at (milliseconds) on a fast machine, so a test's expected order is computed, not
// assumed from the order it created them in (TEST_CLOCK_TICK_MS, test/helpers/service.ts, makes
// such ties common).

interface Created {
  id: string;
  created_at: string;
}

/** The ids of `records` oldest first (`created_at` ordering) or newest first (`-created_at`). */
export function idsByCreation(records: readonly Created[], order: 'oldest first' | 'newest first'): string[] {
  const sign = order === 'oldest first' ? 1 : -1;
  return [...records]
    .sort((x, y) => sign * (x.created_at < y.created_at ? -1 : x.created_at > y.created_at ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
    .map((record) => record.id);
}
