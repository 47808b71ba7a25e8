// The benchmark's event-stream readers, in a process of their own (so their parsing never competes
// with the load generator's event loop): opens N streams of GET /api/events/, counts the events
// each receives, and notes when probe iterations arrive. It prints `{"ready": true}` once every
// stream is open, and its counts and arrival times as one JSON line when its stdin closes.
//
//   node --import tsx bench/event-readers.ts <url> <streams> <access token> <probe prefix>
import { request } from 'node:http';

const [url, streamCount, token, probePrefix] = process.argv.slice(2) as [string, string, string, string];
const epochMs = () => performance.timeOrigin + performance.now();
/** The marker of a probe iteration inside an event's data. */
const probeMarker = `"iteration_name":"${probePrefix}`;

let events = 0;
/** Probe iteration id -> arrival times (epoch ms), one per stream that received it. */
const arrivals: Record<string, number[]> = {};

function open(): Promise<void> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${url}/api/events/?types=iteration.created`, { headers: { authorization: `Bearer ${token}` } }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`stream answered ${response.statusCode}`));
      response.setEncoding('utf8');
      let rest = '';
      response.on('data', (chunk: string) => {
        const at = epochMs();
        const text = rest + chunk;
        const cut = text.lastIndexOf('\n\n') + 2;
        rest = text.slice(cut);
        // Counting frames by their `event:` line is enough; only probes are parsed.
        for (let index = text.indexOf('\nevent: '); index >= 0 && index < cut; index = text.indexOf('\nevent: ', index + 1)) events++;
        for (let index = text.indexOf(probeMarker); index >= 0 && index < cut; index = text.indexOf(probeMarker, index + 1)) {
          const id = /"id":"([0-9a-f-]{36})"/.exec(text.slice(text.lastIndexOf('data: ', index), index))?.[1];
          if (id) (arrivals[id] ??= []).push(at);
        }
      });
      resolve();
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

await Promise.all(Array.from({ length: Number(streamCount) }, open));
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  // Writes to a pipe are asynchronous: exiting before this one is flushed cut the report short.
  process.stdout.write(`${JSON.stringify({ events, arrivals })}\n`, () => process.exit(0));
});
