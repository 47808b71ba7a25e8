// A page that follows the service's events while it is open (the job page, an iteration's
// results): its events, and a badge for the page's head saying whether it is live, reconnecting
// after a drop (no event is missed: the stream resumes from the last one), or no longer live.
import { authHeaders } from './api.js';
import { h } from './dom.js';
import { followEvents } from './event-stream.js';

/**
 * Follows `url` (/api/events/ with its filters) until `signal` aborts.
 * @param {string} url
 * @param {{ signal: AbortSignal, onEvent: (event: import('./event-stream.js').StreamEvent) => void }} options
 * @returns {{ element: HTMLElement, ended: (label: string) => void }} the badge, and a way to say
 *   the page's subject is gone (the stream stays open, the badge says `label`)
 */
export function followLive(url, { signal, onEvent }) {
  const element = h('span', { class: 'live', dataset: { state: 'connecting' } }, 'Connecting…');
  /**
   * @param {string} state
   * @param {string} label
   */
  const show = (state, label) => {
    element.dataset.state = state;
    element.textContent = label;
  };
  void followEvents(url, {
    headers: authHeaders(),
    signal,
    onEvent,
    onOpen: () => show('live', 'Live'),
    onDrop: () => show('reconnecting', 'Reconnecting…'),
    isFinal: (response) => response.status === 401 || response.status === 404,
  }).then(() => {
    if (!signal.aborted && element.dataset.state !== 'ended') show('off', 'Not live');
  });
  return { element, ended: (label) => show('ended', label) };
}
