// The console's event-stream reader (src/console/event-stream.js), run in Node, which has the
// same fetch and streams as the browser: the SSE parser on text cut anywhere, and the follower
// against a small server that drops the connection and checks Last-Event-ID on the way back.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventStreamParser, followEvents, type StreamEvent } from '../../src/console/event-stream.js';
import { until } from '../helpers/wait.ts';

/** Closes the server and the connections fetch keeps alive for reuse. */
function closed(server: Server): Promise<unknown> {
  const closing = new Promise((resolve) => server.close(resolve));
  server.closeAllConnections();
  return closing;
}

function parseAll(pieces: string[]): StreamEvent[] {
  const events: StreamEvent[] = [];
  const parser = new EventStreamParser((event) => events.push(event));
  for (const piece of pieces) parser.push(piece);
  return events;
}

const stream = [
  ': heartbeat\n\n',
  'id: 1\nevent: iteration.created\ndata: {"id":"a","avg_score":0.5}\n\n',
  'id: 2\r\nevent: job.updated\r\ndata: {"status":\r\ndata: "running"}\r\n\r\n',
  'data:no space\rid: 3\r\r',
  'event: reset\nid: 4\ndata: {}\n\n',
  'event: ignored\n\n',
].join('');

const expected: StreamEvent[] = [
  { id: '1', type: 'iteration.created', data: '{"id":"a","avg_score":0.5}' },
  { id: '2', type: 'job.updated', data: '{"status":\n"running"}' },
  { id: '3', type: 'message', data: 'no space' },
  { id: '4', type: 'reset', data: '{}' },
];

test('the parser reads events, multi-line data, every line ending, and skips comments and empty events', () => {
  assert.equal(parseAll([stream]), expected);
});

test('the parser gives the same events however the text is cut, even between \\r and \\n', () => {
  for (let size = 1; size <= 7; size++) {
    const pieces = stream.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
    assert.equal(parseAll(pieces), expected, `pieces of ${size}`);
  }
  for (let cut = 0; cut <= stream.length; cut++) assert.equal(parseAll([stream.slice(0, cut), stream.slice(cut)]), expected, `cut at ${cut}`);
});

test('the parser keeps the last id across events, as the SSE rules say', () => {
  const parser = new EventStreamParser(() => undefined);
  parser.push('id: 7\ndata: x\n\ndata: y\n\n');
  assert.is(parser.lastEventId, '7');
});

test('the follower sends its headers, reconnects after a drop with Last-Event-ID, and stops on abort', async () => {
  const seen: IncomingHttpHeaders[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    seen.push(request.headers);
    open.add(response);
    response.on('close', () => open.delete(response));
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    if (seen.length === 1) {
      // Two whole events and half of a third, then the connection drops.
      response.end('id: 1\nevent: a\ndata: one\n\nid: 2\nevent: b\ndata: two\n\nid: 3\nevent: c\nda');
    } else {
      response.write('id: 3\nevent: c\ndata: three\n\n');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const controller = new AbortController();
  const events: StreamEvent[] = [];
  let drops = 0;
  let opens = 0;
  try {
    const following = followEvents(`http://127.0.0.1:${port}/events`, {
      headers: { Authorization: 'Bearer secret' },
      signal: controller.signal,
      onEvent: (event) => events.push(event),
      onOpen: () => opens++,
      onDrop: () => drops++,
      retryMs: 10,
    });
    await until(() => events.length === 3, 'three events, the third after reconnecting');
    assert.equal(events.map((event) => `${event.id}:${event.type}:${event.data}`), ['1:a:one', '2:b:two', '3:c:three']);
    assert.is(seen.length, 2, 'one reconnection');
    assert.is(seen[0]!.authorization, 'Bearer secret');
    assert.is(seen[0]!.accept, 'text/event-stream');
    assert.is(seen[0]!['last-event-id'], undefined, 'the first request starts from now');
    assert.is(seen[1]!.authorization, 'Bearer secret');
    assert.is(seen[1]!['last-event-id'], '2', 'the reconnection resumes after the last whole event');
    assert.is(drops, 1);
    assert.is(opens, 2);
    controller.abort();
    await following;
    await until(() => open.size === 0, 'the stream is closed after abort');
  } finally {
    controller.abort();
    await closed(server);
  }
});

test('the follower stops for good on an answer the caller calls final (401)', async () => {
  let requests = 0;
  const server = createServer((_, response) => {
    requests++;
    response.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":"no"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    await followEvents(`http://127.0.0.1:${port}/events`, {
      headers: {},
      signal: new AbortController().signal,
      onEvent: () => assert.unreachable('no event'),
      isFinal: (response) => response.status === 401,
      retryMs: 10,
    });
    assert.is(requests, 1);
  } finally {
    await closed(server);
  }
});

test.run();
