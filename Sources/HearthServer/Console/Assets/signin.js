// The page a browser without a console session sees: the printed link is the usual way in, the admin
// token the fallback when the terminal is elsewhere.

import { api } from './api.js';
import { h } from './dom.js';
import { field } from './dialog.js';

export function showSignin(container, { onSignedIn }) {
  const failed = new URLSearchParams(location.search).get('signin') === 'failed';
  const token = h('input', { id: 'signin-token', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true });
  const submit = h('button', { id: 'signin-submit', type: 'submit', class: 'button primary wide' }, 'Sign in');
  const error = h('p', { id: 'signin-error', class: 'form-error', role: 'alert', hidden: true });

  const form = h('form', { class: 'signin-form', novalidate: true }, field('Admin token', token), error, submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!token.value.trim()) {
      showError('Paste the admin token first.');
      return;
    }
    submit.disabled = true;
    try {
      await api.post('/console/api/signin', { token: token.value.trim() });
      // A failed link's marker would otherwise keep showing the warning on every reload.
      history.replaceState(null, '', `/console/${location.hash}`);
      token.value = '';
      onSignedIn();
    } catch (failure) {
      showError(failure.status === 401
        ? 'That is not the admin token. Copy it again from hearth-data/admin-token (or type owner in emulator mode).'
        : failure.message);
      token.select();
    } finally {
      submit.disabled = false;
    }
  });

  function showError(message) {
    error.textContent = message;
    error.hidden = false;
  }

  const card = h('div', { class: 'signin-card' },
    h('div', { class: 'signin-brand' }, h('img', { src: '/console/favicon.svg', alt: '', width: 40, height: 40 }), h('span', {}, 'Hearth')),
    h('h1', {}, 'Sign in to the console'),
    failed ? h('div', { class: 'alert alert-error', role: 'alert', id: 'signin-failed' },
      h('strong', {}, 'That sign-in link did not work. '),
      'It was already used, is more than a day old, or is wrong: each link works once. Paste the admin token below, or restart ',
      h('code', {}, 'hearth serve'), ' for a new link.') : null,
    h('p', { class: 'signin-help' }, 'Open the sign-in link that ', h('code', {}, 'hearth serve'),
      ' printed in its terminal, or paste the admin token: it is in ', h('code', {}, 'hearth-data/admin-token'),
      ', or is ', h('code', {}, 'owner'), ' in emulator mode.'),
    form);
  container.replaceChildren(card);
  token.focus();
}
