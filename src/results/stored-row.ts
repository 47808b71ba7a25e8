// A result row as the results database keeps it, apart from the store that writes it: the table's
// columns are made from it too (result-table.ts), and result-store.ts uses the table.
import type { ResultRecord } from '../domain/results.ts';

/**
 * A row as stored: what its key (iteration, datapoint index, attempt) and its iteration's version
 * (the datapoint's id and order) do not say (its id is its key's too: resultIdOf), times in epoch
 * ms, its output apart. A third of the bytes of the whole record: every byte is written once per
 * row and read at every start.
 */
export interface StoredRow {
  readonly score: number | null;
  readonly passed: boolean | null;
  readonly dimension_scores: Readonly<Record<string, number>> | null;
  readonly status: ResultRecord['status'];
  readonly error: string;
  readonly trace_id: string | null;
  readonly span_id: string | null;
  readonly latency_ms: number | null;
  readonly cost: number | null;
  readonly created_ms: number;
  readonly updated_ms: number;
  /** Whether an output is kept in result-outputs. */
  readonly has_output: boolean;
}
