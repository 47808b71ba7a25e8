// What one version of an agent's dataset removes, changes and adds against another. Datapoints
// are matched by their canonical input (key order does not matter): the k-th datapoint of an
// input on one side pairs with the k-th of the same input on the other, in stored order (order,
// then posted position); the rest are removed or added. A pair is changed when its
// expected_output, persona, tags or order differ. Pure: datasets are immutable, so what is
// derived from one (its canonical inputs and content hash) is computed once per datapoints array.
import { createHash } from 'node:crypto';
import type { Datapoint } from '../domain/records.ts';
import { canonicalJson, sameJson } from './canonical-json.ts';

/** What became of a datapoint from one version of a dataset to another. */
export type DatapointChange = 'removed' | 'changed' | 'added';

export interface DatasetDigest {
  /** Each datapoint's canonical input, in stored order. */
  readonly inputs: readonly string[];
  /**
   * "sha256:" + the hex SHA-256 of the UTF-8 canonical JSON (RFC 8785, JCS) of the array of the
   * datapoints' content ({expected_output, input, order, persona, tags}) in stored order: ids and
   * times are left out, so equal content has an equal hash on any machine, and a client
   * recomputes it with any JCS implementation.
   */
  readonly contentHash: string;
}

export interface DatasetDiff {
  /** Each change in answer order, as positions in the `from` and `to` datapoints (-1: no such side). */
  readonly before: Int32Array;
  readonly after: Int32Array;
  readonly counts: Readonly<Record<DatapointChange | 'unchanged', number>>;
  /** Each version's content hash (DatasetDigest.contentHash). */
  readonly fromHash: string;
  readonly toHash: string;
}

/** One change, by position in each version's datapoints (-1 where that side has none). */
export interface ChangeEntry {
  change: DatapointChange;
  before: number;
  after: number;
}

const digests = new WeakMap<readonly Datapoint[], DatasetDigest>();
/** Canonical text handed to the hash at a time: fewer calls, no dataset-sized string. */
const hashChunkChars = 1 << 16;

export function digestOf(datapoints: readonly Datapoint[]): DatasetDigest {
  let digest = digests.get(datapoints);
  if (!digest) digests.set(datapoints, (digest = computeDigest(datapoints)));
  return digest;
}

function computeDigest(datapoints: readonly Datapoint[]): DatasetDigest {
  const hash = createHash('sha256');
  const inputs = datapoints.map((point) => canonicalJson(point.input));
  let text = '[';
  for (let i = 0; i < datapoints.length; i++) {
    text += (i === 0 ? '' : ',') + contentJson(datapoints[i]!, inputs[i]!);
    if (text.length >= hashChunkChars) {
      hash.update(text, 'utf8');
      text = '';
    }
  }
  hash.update(`${text}]`, 'utf8');
  return { inputs, contentHash: `sha256:${hash.digest('hex')}` };
}

/** canonicalJson of a datapoint's content, reusing its canonical input (these ASCII keys are already in JCS order). */
function contentJson(point: Datapoint, input: string): string {
  return `{"expected_output":${canonicalJson(point.expected_output)},"input":${input},"order":${canonicalJson(point.order)},"persona":${canonicalJson(point.persona)},"tags":${canonicalJson(point.tags)}}`;
}

export function diffDatapoints(from: readonly Datapoint[], to: readonly Datapoint[]): DatasetDiff {
  const fromDigest = digestOf(from);
  const toDigest = digestOf(to);
  const pairOf = pairByInput(fromDigest.inputs, toDigest.inputs);
  const removed: number[] = [];
  const changedBefore: number[] = [];
  const changedAfter: number[] = [];
  const added: number[] = [];
  const paired = new Uint8Array(from.length);
  for (let j = 0; j < to.length; j++) {
    const i = pairOf[j]!;
    if (i < 0) {
      added.push(j);
      continue;
    }
    paired[i] = 1;
    if (differ(from[i]!, to[j]!)) {
      changedBefore.push(i);
      changedAfter.push(j);
    }
  }
  for (let i = 0; i < from.length; i++) if (!paired[i]) removed.push(i);
  const counts = {
    removed: removed.length,
    changed: changedAfter.length,
    added: added.length,
    unchanged: to.length - added.length - changedAfter.length,
  };
  return { ...inAnswerOrder(from, to, removed, changedBefore, changedAfter, added), counts, fromHash: fromDigest.contentHash, toHash: toDigest.contentHash };
}

/** For each `to` position, the `from` position it pairs with (-1: none): the k-th of an input with the k-th. */
function pairByInput(fromInputs: readonly string[], toInputs: readonly string[]): Int32Array {
  // Each input's unpaired `from` positions as a linked list: its first in `heads`, the rest in `next`.
  const heads = new Map<string, number>();
  const next = new Int32Array(fromInputs.length);
  for (let i = fromInputs.length - 1; i >= 0; i--) {
    next[i] = heads.get(fromInputs[i]!) ?? -1;
    heads.set(fromInputs[i]!, i);
  }
  const pairOf = new Int32Array(toInputs.length);
  for (let j = 0; j < toInputs.length; j++) {
    const i = heads.get(toInputs[j]!) ?? -1;
    if (i >= 0) heads.set(toInputs[j]!, next[i]!);
    pairOf[j] = i;
  }
  return pairOf;
}

function differ(a: Datapoint, b: Datapoint): boolean {
  return a.order !== b.order || a.persona !== b.persona || !sameJson(a.expected_output, b.expected_output) || !sameJson(a.tags, b.tags);
}

/**
 * Merges the three kinds, each already in stored order, by the order of the entry's datapoint
 * (the `to` one, else the `from` one), then removed before changed before added.
 */
function inAnswerOrder(
  from: readonly Datapoint[],
  to: readonly Datapoint[],
  removed: readonly number[],
  changedBefore: readonly number[],
  changedAfter: readonly number[],
  added: readonly number[],
): Pick<DatasetDiff, 'before' | 'after'> {
  const total = removed.length + changedAfter.length + added.length;
  const before = new Int32Array(total).fill(-1);
  const after = new Int32Array(total).fill(-1);
  let r = 0;
  let c = 0;
  let a = 0;
  for (let k = 0; k < total; k++) {
    const removedOrder = r < removed.length ? from[removed[r]!]!.order : Infinity;
    const changedOrder = c < changedAfter.length ? to[changedAfter[c]!]!.order : Infinity;
    const addedOrder = a < added.length ? to[added[a]!]!.order : Infinity;
    if (removedOrder <= changedOrder && removedOrder <= addedOrder) {
      before[k] = removed[r++]!;
    } else if (changedOrder <= addedOrder) {
      before[k] = changedBefore[c]!;
      after[k] = changedAfter[c++]!;
    } else {
      after[k] = added[a++]!;
    }
  }
  return { before, after };
}

export function changeAt(diff: DatasetDiff, k: number): DatapointChange {
  if (diff.before[k]! < 0) return 'added';
  return diff.after[k]! < 0 ? 'removed' : 'changed';
}

/** One page of the changes, all of them or those of one kind. */
export function diffPage(diff: DatasetDiff, only: DatapointChange | undefined, offset: number, limit: number): { count: number; items: ChangeEntry[] } {
  const count = only ? diff.counts[only] : diff.before.length;
  const items: ChangeEntry[] = [];
  let seen = 0;
  for (let k = only ? 0 : offset; k < diff.before.length && items.length < limit; k++) {
    const change = changeAt(diff, k);
    if (only && (change !== only || seen++ < offset)) continue;
    items.push({ change, before: diff.before[k]!, after: diff.after[k]! });
  }
  return { count, items };
}
