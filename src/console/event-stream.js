// Server-sent events read with fetch: the browser's EventSource cannot send an Authorization
// header, so the stream is read from a ReadableStream and parsed here, following the SSE rules
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
// After a drop the stream is opened again with Last-Event-ID, so no event is missed; when the
// service can no longer replay from there it sends `reset` and the page reloads what it shows.

/**
 * @typedef {{ id: string, type: string, data: string }} StreamEvent
 */

/** Parses event-stream text given in pieces of any size; calls `onEvent` for each whole event. */
export class EventStreamParser {
  /** @param {(event: StreamEvent) => void} onEvent */
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.pending = '';
    /** @type {string[]} */
    this.data = [];
    this.type = '';
    /** The id the event being read will have: the last one sent, kept across events. */
    this.idBuffer = '';
    /** The id of the last whole event: where a reconnection resumes. */
    this.lastEventId = '';
  }

  /** @param {string} text */
  push(text) {
    this.pending += text;
    const lineEnd = /\r\n|\r|\n/g;
    let start = 0;
    for (let found = lineEnd.exec(this.pending); found; found = lineEnd.exec(this.pending)) {
      // A "\r" at the very end may be the first half of "\r\n": wait for the next piece.
      if (found[0] === '\r' && lineEnd.lastIndex === this.pending.length) break;
      this.line(this.pending.slice(start, found.index));
      start = lineEnd.lastIndex;
    }
    this.pending = this.pending.slice(start);
  }

  /** Forgets a half-received event (after a drop it is sent again, after Last-Event-ID). */
  discardPartial() {
    this.idBuffer = this.lastEventId;
    this.pending = '';
    this.data = [];
    this.type = '';
  }

  /** @param {string} line */
  line(line) {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return; // a comment: the service's heartbeat
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.type = value;
    else if (field === 'id' && !value.includes('\0')) this.idBuffer = value;
  }

  dispatch() {
    this.lastEventId = this.idBuffer;
    const data = this.data;
    const type = this.type;
    this.data = [];
    this.type = '';
    if (data.length > 0) this.onEvent({ id: this.lastEventId, type: type || 'message', data: data.join('\n') });
  }
}

/**
 * @typedef {object} FollowOptions
 * @property {Record<string, string>} headers credentials, as for any call
 * @property {(event: StreamEvent) => void} onEvent
 * @property {AbortSignal} signal ends the stream for good
 * @property {() => void} [onOpen] told each time the stream is (re)opened
 * @property {(error: Error) => void} [onDrop] told of each drop before reconnecting
 * @property {(response: Response) => boolean} [isFinal] an answer not worth trying again (401)
 * @property {number} [retryMs] first wait before reconnecting; doubles up to `retryMaxMs`
 * @property {number} [retryMaxMs]
 */

/**
 * Follows an event stream until `signal` aborts, reconnecting after every drop.
 * @param {string} url
 * @param {FollowOptions} options
 */
export async function followEvents(url, { headers, onEvent, signal, onOpen, onDrop, isFinal, retryMs = 500, retryMaxMs = 10_000 }) {
  const parser = new EventStreamParser(onEvent);
  let wait = retryMs;
  while (!signal.aborted) {
    try {
      /** @type {Record<string, string>} */
      const streamHeaders = { ...headers, Accept: 'text/event-stream' };
      if (parser.lastEventId) streamHeaders['Last-Event-ID'] = parser.lastEventId;
      const response = await fetch(url, { headers: streamHeaders, signal, cache: 'no-store' });
      if (isFinal?.(response)) return;
      if (!response.ok || !response.body) throw new Error(`the event stream answered ${response.status}`);
      onOpen?.();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        wait = retryMs;
        parser.push(value);
      }
      throw new Error('the event stream ended');
    } catch (error) {
      if (signal.aborted) return;
      onDrop?.(/** @type {Error} */ (error));
    }
    parser.discardPartial();
    await sleep(wait, signal);
    wait = Math.min(wait * 2, retryMaxMs);
  }
}

/**
 * @param {number} ms
 * @param {AbortSignal} signal
 */
function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve(undefined);
    }
  });
}
