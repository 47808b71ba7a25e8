// The console's entry: the sign-in gate, the header, and which page each URL shows.
import { agentPage } from './agent-page.js';
import { call, session } from './api.js';
import { comparePage } from './compare-page.js';
import { datasetPage } from './dataset-page.js';
import { diffPage } from './diff-page.js';
import { errorBox, h, replace } from './dom.js';
import { jobPage } from './job-page.js';
import { projectPage } from './project-page.js';
import { projectsPage } from './projects-page.js';
import { resultsPage } from './results-page.js';
import { runPage } from './run-page.js';
import { followLinks, match, routes } from './router.js';
import { signInPage } from './sign-in.js';
import { tracePage } from './trace-page.js';
import { tracesPage } from './traces-page.js';

const table = routes({
  '/': projectsPage,
  '/console': projectsPage,
  '/console/projects': projectsPage,
  '/console/projects/:id': projectPage,
  '/console/agents/:id': agentPage,
  '/console/datasets/:id': datasetPage,
  '/console/datasets/:id/diff/:other_id': diffPage,
  '/console/jobs/:id': jobPage,
  '/console/job-iterations/:id/compare/:other_id': comparePage,
  '/console/job-iterations/:id/results': resultsPage,
  '/console/runs/:id': runPage,
  '/console/traces': tracesPage,
  '/console/traces/:trace_id': tracePage,
});

const view = /** @type {HTMLElement} */ (document.getElementById('view'));
const who = /** @type {HTMLElement} */ (document.getElementById('who'));
const whoName = /** @type {HTMLElement} */ (document.getElementById('who-name'));

/** Ends the shown page's requests and event streams when another page is shown. */
let shown = new AbortController();

async function show() {
  shown.abort();
  shown = new AbortController();
  const { signal } = shown;
  window.scrollTo(0, 0);
  markCurrentSection();
  if (!session.token) return showSignIn();
  who.hidden = false;
  if (!whoName.textContent) void showWho();
  const found = match(table, location.pathname);
  if (!found) return replace(view, h('div', { class: 'block' }, h('h1', {}, 'No such page'), h('p', {}, h('a', { href: '/' }, 'Back to projects'))));
  view.setAttribute('aria-busy', 'true');
  try {
    const page = await found.route.page({ params: found.params, query: new URLSearchParams(location.search), signal });
    if (!signal.aborted) replace(view, page);
  } catch (error) {
    if (!signal.aborted && session.token) replace(view, errorBox(error));
  } finally {
    if (!signal.aborted) view.removeAttribute('aria-busy');
  }
}

/** @param {string} [message] */
function showSignIn(message) {
  who.hidden = true;
  whoName.textContent = '';
  document.title = 'Sign in · Overmind console';
  replace(view, signInPage({ ...(message ? { message } : {}), onSignedIn: show }));
}

/** Who is signed in, asked once per sign-in. */
async function showWho() {
  try {
    /** @type {import('./api-types.js').User} */
    const me = await call('/api/auth/me/');
    whoName.textContent = me.email;
    whoName.title = me.email;
  } catch {
    // The name is a courtesy: a page's own calls report what went wrong.
  }
}

function markCurrentSection() {
  const section = location.pathname.startsWith('/console/traces') ? '/console/traces' : '/';
  for (const anchor of document.querySelectorAll('.top-nav a')) {
    if (anchor.getAttribute('href') === section) anchor.setAttribute('aria-current', 'page');
    else anchor.removeAttribute('aria-current');
  }
}

/** @type {HTMLElement} */ (document.getElementById('sign-out')).addEventListener('click', () => session.signOut());
window.addEventListener('console:signed-out', (event) => {
  shown.abort();
  showSignIn(event instanceof CustomEvent ? String(event.detail) : undefined);
});
followLinks((url) => url.pathname === '/' || url.pathname.startsWith('/console/'), show);
void show();
