// A run's tasks as a list reads them: a light reference per task, made from the run's columns as
// the list goes, in task order (iteration, then datapoint, then attempt). The filters a task list
// takes (state, iteration, datapoint) are read from the columns before a reference is made, and
// an iteration's filter walks its tasks only: a page of a million-task run never makes a million
// objects. Only the page's tasks are written out.
import type { Roster } from '../domain/result-batch.ts';
import { taskCode, type TaskState } from '../domain/run-tasks.ts';
import type { RunState } from '../domain/run.ts';
import type { ListRequest } from '../query/list.ts';
import type { OrderKey } from '../query/ordering.ts';
import { comparatorFor } from '../query/ordering.ts';
import type { Page } from '../query/pagination.ts';
import { readPage } from '../query/read-page.ts';

/** A task as the list reads it. */
export interface TaskRef {
  /** Its position: the list's order. */
  readonly id: number;
  readonly run: RunState;
  /** The version its datapoints are of (the run's dataset's roster). */
  readonly roster: Roster | undefined;
}

const taskOrder: readonly OrderKey[] = [{ field: 'id', descending: false }];

export function taskRows(state: RunState, roster: Roster | undefined, version: number) {
  return {
    version,
    read(request: ListRequest): Page<TaskRef> {
      const filters = Object.fromEntries(request.filters.map((filter) => [filter.field, filter.value]));
      const ref = (id: number): TaskRef => ({ id, run: state, roster });
      // Unfiltered, a page is a slice of the positions: nothing else is walked.
      const slice = (offset: number, limit: number, reverse: boolean) => {
        const total = state.tasks.total;
        const count = Math.max(0, Math.min(limit, total - offset));
        return Array.from({ length: count }, (_, k) => ref(reverse ? total - 1 - offset - k : offset + k));
      };
      const unfiltered = request.filters.length === 0;
      return readPage<TaskRef>({
        sources: [{ items: (reverse) => positions(state, filters, reverse, ref), size: unfiltered ? state.tasks.total : null, ...(unfiltered ? { slice } : {}) }],
        sourceOrder: taskOrder,
        compareInSourceOrder: (a, b) => a.id - b.id,
        ordering: taskOrder,
        comparatorFor,
        predicate: null,
        offset: request.offset,
        limit: request.limit,
      });
    },
  };
}

function* positions(state: RunState, filters: Readonly<Record<string, unknown>>, reverse: boolean, ref: (id: number) => TaskRef): Generator<TaskRef> {
  const { run, tasks } = state;
  const roster = ref(0).roster;
  const { datapoints, attempts } = tasks.shape;
  const code = filters.state === undefined ? -1 : taskCode[filters.state as TaskState];
  const iteration = filters.iteration === undefined ? -1 : run.iterations.indexOf(filters.iteration as string);
  const datapoint = filters.datapoint === undefined ? -1 : (roster?.ids.indexOf(filters.datapoint as string) ?? -1);
  if ((filters.iteration !== undefined && iteration < 0) || (filters.datapoint !== undefined && datapoint < 0)) return;
  const perIteration = datapoints * attempts;
  const first = iteration < 0 ? 0 : iteration * perIteration;
  const end = iteration < 0 ? tasks.total : first + perIteration;
  for (let k = first; k < end; k++) {
    const position = reverse ? end - 1 - (k - first) : k;
    if (code >= 0 && tasks.state[position] !== code) continue;
    if (datapoint >= 0 && Math.floor(position / attempts) % datapoints !== datapoint) continue;
    yield ref(position);
  }
}
