// The layers of src/ stay layers: no file imports its way back to itself, and no room (a folder
// of src/, or a file at its top) imports a room that imports it back, directly or through others.
// Rooms that import each other have no order to stand in; without such a circle every room stands
// above all it imports, so no import runs from a lower layer to a higher one.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = resolve(import.meta.dirname, '../../src');

/** Every TypeScript and JavaScript file under src/, relative to it. */
function sourceFiles(dir = root): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [relative(root, path)] : [];
  });
}

/** Each file's imports of other files of src/ (type-only imports included: they tie the code as much). */
function importGraph(): Map<string, string[]> {
  const files = sourceFiles();
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const targets = importedFiles
      .map((imported) => imported.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => relative(root, resolve(root, dirname(file), name)))
      .filter((target) => known.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected components of more than one node, or of one that imports itself (Tarjan). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** The room a file stands in: its top folder under src/, or itself at the top. */
const roomOf = (file: string) => (file.includes('/') ? `${file.split('/')[0]}/` : file);

test('no file of src/ imports its way back to itself', () => {
  assert.equal(circles(importGraph()), []);
});

test('no room of src/ (a top folder, or a top file) imports a room that imports it back: every import runs down the layers', () => {
  const rooms = new Map<string, string[]>();
  for (const [file, targets] of importGraph()) {
    const room = roomOf(file);
    const list = rooms.get(room) ?? [];
    for (const target of targets) if (roomOf(target) !== room) list.push(roomOf(target));
    rooms.set(room, list);
  }
  assert.equal(circles(rooms), []);
});

test('the check finds a circle when there is one', () => {
  assert.equal(circles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]])), [['a', 'b', 'c']]);
  assert.equal(circles(new Map([['a', ['a']]])), [['a']]);
  assert.equal(circles(new Map([['a', ['b']], ['b', []]])), []);
});

test.run();
