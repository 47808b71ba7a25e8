// The request body's read (src/http/body.ts) on a stream that misbehaves as a client can: every
// way it ends short is a DRF-shaped 400 or 413, never an error the mapper would answer 500.
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readBodyBytes } from '../../src/http/body.ts';
import { ApiError } from '../../src/http/errors.ts';

/** A request whose body arrives through `req`, declaring `length` bytes (or none). */
const contextOf = (req: PassThrough, length?: number) => ({ req, request: { length } }) as unknown as Context;

const refusal = async (read: Promise<unknown>): Promise<{ status: number; detail: unknown }> => {
  try {
    await read;
  } catch (error) {
    assert.instance(error, ApiError);
    return { status: (error as ApiError).status, detail: (error as ApiError).body.detail };
  }
  throw new Error('the read was not refused');
};

test('a body is read whole, within its limit', async () => {
  const req = new PassThrough();
  const read = readBodyBytes(contextOf(req, 5), 5);
  req.end('hello');
  assert.is((await read).toString(), 'hello');
});

test('past bytesMax the read is 413, declared or streamed', async () => {
  assert.equal(await refusal(readBodyBytes(contextOf(new PassThrough(), 6), 5)), { status: 413, detail: 'Request body is larger than 5 bytes.' });
  const streamed = new PassThrough();
  const read = readBodyBytes(contextOf(streamed), 5);
  streamed.end('more than five');
  assert.is((await refusal(read)).status, 413);
});

test('a client that stops sending, or whose stream fails, gets 400', async () => {
  const short = new PassThrough();
  const shortRead = readBodyBytes(contextOf(short, 10), 100);
  short.end('abc');
  assert.equal(await refusal(shortRead), { status: 400, detail: 'The request body was not received completely.' });
  const aborted = new PassThrough();
  const abortedRead = readBodyBytes(contextOf(aborted, 10), 100);
  aborted.write('abc');
  aborted.emit('aborted');
  assert.is((await refusal(abortedRead)).status, 400);
  const failing = new PassThrough();
  const failingRead = readBodyBytes(contextOf(failing), 100);
  failing.destroy(new Error('ECONNRESET'));
  assert.is((await refusal(failingRead)).status, 400);
});

test.run();
