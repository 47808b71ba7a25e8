// The agent code files a worker's commands read (src/worker/agent-code-files.ts): one private file
// per iteration, shared by its tasks, kept idle up to idleFilesMax and the oldest idle one removed
// past it, never one in use; close() removes them all.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AgentCodeFiles } from '../../src/worker/agent-code-files.ts';

const iteration = (n: number) => ({ id: `iteration-${n}`, agent_code: `code of ${n}` });

test('one file per iteration, private, shared by its tasks; idle files past the cap go oldest first, never one in use', async () => {
  const files = new AgentCodeFiles(2);
  try {
    const first = await files.acquire(iteration(1));
    assert.is(readFileSync(first, 'utf8'), 'code of 1');
    assert.is(statSync(first).mode & 0o777, 0o600);
    assert.is(statSync(dirname(first)).mode & 0o777, 0o700);
    assert.is(await files.acquire(iteration(1)), first, 'a second task of the iteration shares its file');
    const second = await files.acquire(iteration(2));
    const third = await files.acquire(iteration(3));
    // Iteration 1 is released twice (two tasks), then 2 and 3: three idle files, one over the cap.
    files.release(iteration(1));
    assert.ok(existsSync(first), 'still used by a task');
    files.release(iteration(1));
    files.release(iteration(2));
    files.release(iteration(3));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal([existsSync(first), existsSync(second), existsSync(third)], [false, true, true], 'the oldest idle file removed');
    assert.is(await files.acquire(iteration(2)), second, 'an idle file is used again by its iteration');
    const again = await files.acquire(iteration(1));
    assert.ok(again !== first && readFileSync(again, 'utf8') === 'code of 1', 'a removed one is written anew');
  } finally {
    files.close();
  }
});

test('close() removes every file and the folder', async () => {
  const files = new AgentCodeFiles();
  const path = await files.acquire(iteration(1));
  files.close();
  assert.equal([existsSync(path), existsSync(dirname(path))], [false, false]);
});

test.run();
