import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Collection } from '../../src/query/collection.ts';
import { runList } from '../../src/query/list.ts';
import { VersionedMap, versionOfImmutable } from '../../src/query/versions.ts';
import { ReadModel } from '../../src/read-model.ts';
import type { Dataset } from '../../src/domain/records.ts';

interface Row {
  id: string;
  project: string;
  status: string;
}

const jobsLike = () =>
  new Collection<Row>({ partitionOf: (row) => row.project, defaultOrdering: [{ field: 'id', descending: true }], indexedFields: ['status'] });

test("a collection's version changes with every record added, replaced or removed, and only then", () => {
  const rows = jobsLike();
  const seen = new Set([rows.version]);
  const changed = (what: string) => {
    assert.ok(!seen.has(rows.version), what);
    seen.add(rows.version);
  };
  const unchanged = (what: string) => assert.ok(seen.has(rows.version), what);
  rows.load([{ id: 'a', project: 'p1', status: 'running' }]);
  changed('load');
  rows.put({ id: 'b', project: 'p1', status: 'running' });
  changed('put of a new record');
  rows.put({ id: 'b', project: 'p2', status: 'done' });
  changed('put replacing a record');
  const read = { partitions: ['p1', 'p2'], filters: [{ field: 'status', op: 'exact' as const, value: 'done' }], searchTerms: [], searchFields: [], ordering: null, offset: 0, limit: 10 };
  assert.is(runList(rows, read).count, 1);
  rows.get('a');
  unchanged('reads, and the indexes they build');
  rows.delete('missing');
  unchanged('deleting a record that is not there');
  rows.delete('a');
  changed('delete');
  rows.deletePartition('none');
  unchanged('deleting a partition that is not there');
  rows.deletePartition('p2');
  changed('deletePartition');
});

test('deleting a partition removes its records and only those', () => {
  const rows = jobsLike();
  rows.load(Array.from({ length: 5000 }, (_, i) => ({ id: `row-${i}`, project: `p${i % 3}`, status: 'running' })));
  rows.deletePartition('p1');
  const left = [...rows.values()].map((row) => row.project);
  assert.is(left.length, 5000 - 1667);
  assert.ok(left.every((project) => project !== 'p1'));
  assert.is(rows.size, left.length);
  assert.is(rows.get('row-1'), undefined);
  assert.is(rows.get('row-2')?.project, 'p2');
});

test('versions name one state of one thing: no two collections or values share one', () => {
  const versions = [jobsLike().version, jobsLike().version, versionOfImmutable({}), versionOfImmutable({})];
  assert.is(new Set(versions).size, versions.length);
  const value = {};
  assert.is(versionOfImmutable(value), versionOfImmutable(value), 'an immutable value keeps its version');
});

test("a VersionedMap's version changes with its content, and only then", () => {
  const map = new VersionedMap<string, number>();
  let version = map.version;
  const moved = () => {
    const before = version;
    version = map.version;
    return version !== before;
  };
  map.set('a', 1);
  assert.ok(moved(), 'set');
  map.get('a');
  map.delete('missing');
  assert.not.ok(moved(), 'reading, deleting what is not there');
  map.delete('a');
  assert.ok(moved(), 'delete');
  map.clear();
  assert.ok(moved(), 'clear');
});

test("a dataset's datapoints keep their version while the dataset record stays the same", () => {
  const readModel = new ReadModel();
  const dataset = { id: 'd', project: 'p1', datapoints: [] } as unknown as Dataset;
  const moved = { ...dataset, project: 'p2' };
  assert.is(readModel.datapointsOf(dataset).version, readModel.datapointsOf(dataset).version);
  assert.is.not(readModel.datapointsOf(moved).version, readModel.datapointsOf(dataset).version);
});

test.run();
