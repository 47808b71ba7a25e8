// A server-sent events reader for tests: opens GET /api/events/ over a plain HTTP request (so a
// test can also stop reading, as a slow client does), parses events and comments as they arrive,
// and waits for conditions without fixed sleeps.
import { request, type IncomingMessage } from 'node:http';
import { until } from './wait.ts';

export interface ReceivedEvent {
  id: string | null;
  event: string;
  data: any;
}

export class EventStreamReader {
  readonly events: ReceivedEvent[] = [];
  readonly comments: string[] = [];
  ended = false;
  private buffer = '';

  private constructor(readonly response: IncomingMessage) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => this.take(chunk));
    response.on('close', () => (this.ended = true));
    response.on('error', () => (this.ended = true));
  }

  /** Opens the stream; resolves once the answer's headers are in (any status). */
  static open(url: string, headers: Record<string, string> = {}): Promise<EventStreamReader> {
    return new Promise((resolve, reject) => {
      const outgoing = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) => resolve(new EventStreamReader(response)));
      outgoing.on('error', reject);
      outgoing.end();
    });
  }

  get status(): number {
    return this.response.statusCode ?? 0;
  }

  /** Events of these types, in arrival order. */
  ofType(...types: string[]): ReceivedEvent[] {
    return this.events.filter((event) => types.includes(event.event));
  }

  async waitFor(condition: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
    await until(condition, what, timeoutMs);
  }

  /** Waits until `count` events have arrived in all. */
  async waitForCount(count: number, timeoutMs = 3000): Promise<ReceivedEvent[]> {
    await until(() => this.events.length >= count, `${count} events (have ${this.events.map((e) => e.event).join(', ')})`, timeoutMs);
    return this.events;
  }

  /** Stops reading without closing: the server's writes pile up, as with a stalled client. */
  pause(): void {
    this.response.pause();
  }

  close(): void {
    this.response.destroy();
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      this.parse(block);
    }
  }

  private parse(block: string): void {
    let id: string | null = null;
    let event = 'message';
    const data: string[] = [];
    let isEvent = false;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) {
        event = line.slice(7);
        isEvent = true;
      } else if (line.startsWith('data: ')) {
        data.push(line.slice(6));
        isEvent = true;
      }
    }
    if (isEvent) this.events.push({ id, event, data: data.length > 0 ? JSON.parse(data.join('\n')) : null });
  }
}
