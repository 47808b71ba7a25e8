// Pages by URL with the History API: links inside the console change the URL without reloading,
// back/forward and reload show the same page. A page's own state (a page number, a search, a
// filter) lives in the query string, replaced in place so that reload keeps it.

/**
 * @typedef {{ params: Record<string, string>, query: URLSearchParams, signal: AbortSignal }} PageContext
 * @typedef {(context: PageContext) => Promise<Node> | Node} Page
 * @typedef {{ pattern: RegExp, names: string[], page: Page }} Route
 */

/**
 * @param {Record<string, Page>} table paths like "/console/jobs/:id" and their pages
 * @returns {Route[]}
 */
export function routes(table) {
  return Object.entries(table).map(([path, page]) => {
    /** @type {string[]} */
    const names = [];
    const source = path.replace(/:(\w+)/g, (_, name) => {
      names.push(name);
      return '([^/]+)';
    });
    return { pattern: new RegExp(`^${source}/?$`), names, page };
  });
}

/**
 * The route for a path, with its parameters.
 * @param {Route[]} table
 * @param {string} path
 */
export function match(table, path) {
  for (const route of table) {
    const found = route.pattern.exec(path);
    if (found) {
      /** @type {Record<string, string>} */
      const params = {};
      route.names.forEach((name, index) => (params[name] = decodeURIComponent(found[index + 1] ?? '')));
      return { route, params };
    }
  }
  return null;
}

/**
 * Follows clicks on same-origin links (and back/forward) by calling `show` instead of loading a
 * page. Links to the API reference and other non-console paths load normally.
 * @param {(url: URL) => boolean} isConsolePath
 * @param {() => void} show
 */
export function followLinks(isConsolePath, show) {
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = event.target instanceof Element ? event.target.closest('a[href]') : null;
    if (!(anchor instanceof HTMLAnchorElement) || anchor.target) return;
    const url = new URL(anchor.href);
    if (url.origin !== location.origin || !isConsolePath(url)) return;
    event.preventDefault();
    navigate(url.pathname + url.search);
  });
  window.addEventListener('popstate', show);
  window.addEventListener('console:navigate', show);
}

/** @param {string} path */
export function navigate(path) {
  if (path !== location.pathname + location.search) history.pushState(null, '', path);
  window.dispatchEvent(new Event('console:navigate'));
}

/**
 * Sets (or, for empty values, removes) query parameters of the current page in place.
 * @param {Record<string, string | number | null | undefined>} values
 */
export function setQuery(values) {
  const url = new URL(location.href);
  for (const [name, value] of Object.entries(values)) {
    if (value === null || value === undefined || value === '') url.searchParams.delete(name);
    else url.searchParams.set(name, String(value));
  }
  history.replaceState(history.state, '', url.pathname + url.search);
}
