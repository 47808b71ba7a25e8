// The result rows a run's completed tasks write: in the same commit as the job's events that mark
// the tasks done (or dead), through the results store's own keys and layout, and applied to the
// iteration's table once that commit is durable, as a posted batch's rows are. The results' other
// writer (ResultWriter, for posted batches and spans) does not write an iteration while a run of
// it is live (its routes answer 409), so each row has one writer at a time.
import { storedRowOfResolved } from '../domain/result-batch.ts';
import type { JobEvent } from '../domain/job.ts';
import type { KvOp } from '../store/kv.ts';
import type { ResultKeeper } from '../results/result-keeper.ts';
import type { PutRow } from '../results/result-store.ts';

/** What a durable completion wrote to one iteration. */
export interface RowsWritten {
  iteration: string;
  created: number;
  replaced: number;
}

type Completed = Extract<JobEvent, { type: 'TasksCompleted' }>;

export class RunResults {
  /** The rows each completion's commit writes, kept from its ops to its application. */
  private readonly written = new WeakMap<Completed, { iteration: string; put: PutRow }[]>();

  constructor(private readonly results: ResultKeeper) {}

  /**
   * Ops putting the rows of a message's completed tasks, made when its commit begins: a row
   * replacing one keeps that one's created_at (and removes its output if it has none).
   */
  opsOf(events: readonly JobEvent[]): KvOp[] {
    const ops: KvOp[] = [];
    const { store } = this.results;
    for (const event of events) {
      if (event.type !== 'TasksCompleted') continue;
      const rows: { iteration: string; put: PutRow }[] = [];
      for (const task of event.tasks) {
        if (!task.result) continue;
        const { iteration, row } = task.result;
        const table = store.table(iteration);
        const slot = table ? table.slotOf(row.index, row.attempt) : -1;
        const createdMs = slot >= 0 ? table!.valueAt('created_at', slot)! : event.nowMs;
        const put = { index: row.index, attempt: row.attempt, stored: storedRowOfResolved(row, createdMs, event.nowMs) };
        store.rowOps(iteration, put, row.output, slot >= 0 && table!.hasOutput(slot), ops);
        rows.push({ iteration, put });
      }
      this.written.set(event, rows);
    }
    return ops;
  }

  /** A durable message's rows into their iterations' tables; what each iteration got. */
  apply(events: readonly JobEvent[]): RowsWritten[] {
    const byIteration = new Map<string, RowsWritten>();
    const { store } = this.results;
    for (const event of events) {
      if (event.type !== 'TasksCompleted') continue;
      for (const { iteration, put } of this.written.get(event) ?? []) {
        const roster = store.roster(store.pinOf(iteration) ?? '');
        if (!roster) continue; // its results are gone (the iteration was deleted meanwhile)
        const live = this.results.isLive(iteration, roster);
        const table = store.table(iteration);
        const replaced = table !== undefined && table.slotOf(put.index, put.attempt) >= 0;
        store.applyWritten(iteration, roster, [put], live);
        if (!live) {
          this.results.orphaned(iteration);
          continue;
        }
        let written = byIteration.get(iteration);
        if (!written) byIteration.set(iteration, (written = { iteration, created: 0, replaced: 0 }));
        if (replaced) written.replaced++;
        else written.created++;
      }
      this.written.delete(event);
    }
    return [...byIteration.values()];
  }
}
