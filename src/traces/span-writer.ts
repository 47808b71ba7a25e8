// The one path that changes spans. Changes are decided one commit at a time against the store
// (an ingest's duplicates, counters and trace heads depend on what is already stored), and
// exports waiting together share one commit, so durable throughput comes from batching, not from
// deciding in parallel. The pipelining, the queue's bound and the answers are the BatchWriter's
// (src/store/batch-writer.ts); this file says what an ingest and a removal decide, and asserts
// what it relies on of the writer: a removal is decided alone, an ingest's commit holds ingests
// only, and every task taken is answered.
import assert from 'node:assert/strict';
import { BatchWriter, type Decision } from '../store/batch-writer.ts';
import type { SpanRecord } from './span-record.ts';
import type { Ingested, SpanStore } from './span-store.ts';

export interface SpanWriterOptions {
  /** Spans waiting to be written before new exports are refused. */
  queueSpansMax: number;
  /** Spans of waiting exports written together in one commit. */
  commitSpansMax: number;
  /** Every commit's outcome (store health). */
  outcome(ok: boolean, error?: unknown): void;
}

type Ingest = { kind: 'ingest'; weight: number; spans: readonly SpanRecord[]; resolve(ingested: Ingested): void; reject(error: unknown): void };
type Removal = { kind: 'remove'; weight: 0; alone: true; project: string; before: string | null; limit: number; resolve(removed: number): void; reject(error: unknown): void };
type Task = Ingest | Removal;

export class SpanWriter {
  private readonly writer: BatchWriter<Task>;

  constructor(private readonly store: SpanStore, options: SpanWriterOptions) {
    this.writer = new BatchWriter<Task>(store.kv, {
      queueWeightMax: options.queueSpansMax,
      commitWeightMax: options.commitSpansMax,
      decide: (tasks) => this.decide(tasks),
      outcome: options.outcome,
    });
  }

  /** Stores the spans not stored yet; resolves with how many were stored and refused, once durable. */
  ingest(spans: readonly SpanRecord[]): Promise<Ingested> {
    return new Promise((resolve, reject) => this.writer.submit({ kind: 'ingest', weight: spans.length, spans, resolve, reject }));
  }

  /** Removes up to `limit` of a project's oldest spans starting before `before` (all when null). */
  remove(project: string, before: string | null, limit: number): Promise<number> {
    return new Promise((resolve, reject) => this.writer.submit({ kind: 'remove', weight: 0, alone: true, project, before, limit, resolve, reject }));
  }

  /** Refuses new work and resolves once the queued work is written. */
  stop(): Promise<void> {
    return this.writer.stop();
  }

  /**
   * One commit's changes. The trace places a decision adds are handed back if its commit fails
   * (or the decision itself throws): nothing of them was stored.
   */
  private decide(tasks: Task[]): Decision {
    let decision: Decision;
    try {
      decision = this.decideTasks(tasks);
    } catch (error) {
      this.store.places.notStored(this.store.places.decisionAdded());
      throw error;
    }
    const placesAdded = this.store.places.decisionAdded();
    return { ...decision, abandon: () => this.store.places.notStored(placesAdded) };
  }

  private decideTasks(tasks: Task[]): Decision {
    const head = tasks[0]!;
    if (head.kind === 'remove') {
      assert.equal(tasks.length, 1, 'a removal is decided alone');
      const { ops, removed } = this.store.removalOps(head.project, head.before, head.limit);
      const { resolve } = head;
      return { ops, answer: () => resolve(removed) };
    }
    assert.ok(tasks.every((task) => task.kind === 'ingest'), "an ingest's commit holds ingests only");
    const ingests = tasks as Ingest[];
    const { ops, stored, refused } = this.store.ingestOps(ingests.map((task) => task.spans));
    assert.ok(stored.length === ingests.length && refused.length === ingests.length, 'every ingest taken is answered');
    const resolves = ingests.map((task) => task.resolve);
    return { ops, answer: () => resolves.forEach((resolve, i) => resolve({ stored: stored[i]!, refused: refused[i]! })) };
  }
}
