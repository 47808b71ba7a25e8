// The yardstick: a bare Node `http` server answering JSON.stringify of a 40-field object.
import { createServer } from 'node:http';

const record: Record<string, unknown> = {};
for (let i = 0; i < 40; i++) record[`field_${i}`] = i % 3 === 0 ? `value-${i}` : i % 3 === 1 ? i * 1.5 : i % 2 === 0;

const server = createServer((_request, response) => {
  const body = JSON.stringify(record);
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
