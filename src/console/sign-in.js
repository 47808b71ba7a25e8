// Sign-in: email and password (the token endpoint), or an API key. Either way the console keeps
// one bearer token for this tab (sessionStorage) and forgets it on sign-out.
import { call, session } from './api.js';
import { h, replace } from './dom.js';

/**
 * @param {{ message?: string, onSignedIn: () => void }} options
 */
export function signInPage({ message, onSignedIn }) {
  const status = h('p', { class: 'form-status', role: 'status' }, message ?? '');
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const apiKey = h('input', { type: 'password', name: 'api_key', autocomplete: 'off', required: true, placeholder: 'ovr_…' });

  const passwordForm = h('form', { class: 'sign-in-form', onsubmit: (event) => submit(event, passwordToken) },
    h('label', {}, 'Email', email),
    h('label', {}, 'Password', password),
    h('button', { type: 'submit', class: 'button primary' }, 'Sign in'),
    // Accounts are made through the API (as the service this one replaces had them): say where.
    h('p', { class: 'hint' }, 'No account yet? Register one with ', h('code', {}, 'POST /api/auth/register/'), ' (see the ', h('a', { href: '/api/docs/' }, 'API reference'), '), then sign in here.'));
  const keyForm = h('form', { class: 'sign-in-form', hidden: true, onsubmit: (event) => submit(event, keyToken) },
    h('label', {}, 'API key', apiKey),
    h('p', { class: 'hint' }, 'An API key shows its own project only.'),
    h('button', { type: 'submit', class: 'button primary' }, 'Sign in with key'));

  const tabs = h('div', { class: 'tabs', role: 'tablist' },
    tab('Email and password', passwordForm, true),
    tab('API key', keyForm, false));

  /**
   * @param {string} label
   * @param {HTMLFormElement} form
   * @param {boolean} selected
   */
  function tab(label, form, selected) {
    return h('button', { type: 'button', role: 'tab', class: 'tab', 'aria-selected': String(selected), onclick: (event) => {
      for (const other of tabs.querySelectorAll('[role=tab]')) other.setAttribute('aria-selected', String(other === event.currentTarget));
      passwordForm.hidden = form !== passwordForm;
      keyForm.hidden = form !== keyForm;
      replace(status);
    } }, label);
  }

  async function passwordToken() {
    /** @type {import('./api-types.js').TokenPair} */
    const pair = await call('/api/auth/token/', { method: 'POST', body: { email: email.value, password: password.value }, token: '' });
    return pair.access;
  }

  async function keyToken() {
    const key = apiKey.value.trim();
    // A key that the service does not know answers 401 here, before it is kept.
    await call('/api/auth/me/', { token: key });
    return key;
  }

  /**
   * @param {Event} event
   * @param {() => Promise<string>} token
   */
  async function submit(event, token) {
    event.preventDefault();
    const form = /** @type {HTMLFormElement} */ (event.currentTarget);
    const button = /** @type {HTMLButtonElement} */ (form.querySelector('button[type=submit]'));
    button.disabled = true;
    replace(status, 'Signing in…');
    try {
      session.signIn(await token());
      onSignedIn();
    } catch (error) {
      status.classList.add('error-text');
      replace(status, /** @type {Error} */ (error).message);
    } finally {
      button.disabled = false;
    }
  }

  return h('div', { class: 'sign-in' },
    h('div', { class: 'sign-in-card' },
      h('h1', {}, 'Sign in to the console'),
      h('p', { class: 'muted' }, 'Follow optimization jobs, compare candidates, diff datasets and read traces.'),
      tabs, passwordForm, keyForm, status));
}
