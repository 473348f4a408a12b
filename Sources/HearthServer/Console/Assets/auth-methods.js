// Which sign-in methods the Auth project accepts. Email link is not a provider of its own: it is the
// email provider with passwords made optional (signIn.email.passwordRequired == false).

import { api } from './api.js';
import { h, toast } from './dom.js';

export function createMethods(project) {
  const url = `/console/api/auth/identitytoolkit.googleapis.com/admin/v2/projects/${encodeURIComponent(project)}/config`;
  let config = { email: { enabled: false, passwordRequired: true }, anonymous: { enabled: false } };

  const toggle = (id, title, description) => {
    const input = h('input', { id, type: 'checkbox', role: 'switch', class: 'switch', disabled: true, 'aria-describedby': `${id}-description` });
    const row = h('li', { class: 'method' },
      h('label', { for: id, class: 'method-text' }, h('span', { class: 'method-title' }, title),
        h('span', { class: 'method-description', id: `${id}-description` }, description)),
      input);
    return { input, row };
  };
  const password = toggle('method-password', 'Email/password', 'Users sign up and sign in with an email address and a password.');
  const link = toggle('method-link', 'Email link (passwordless)', 'Users sign in by opening a link emailed to them. Needs Email/password on.');
  const anonymous = toggle('method-anonymous', 'Anonymous', 'Users get a UID without giving any details, and can link an account later.');
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const element = h('section', { class: 'panel methods-panel' },
    h('header', { class: 'panel-header' }, h('h2', {}, 'Sign-in methods')),
    h('ul', { class: 'method-list' }, password.row, link.row, anonymous.row), error);
  const inputs = [password.input, link.input, anonymous.input];

  function show(signIn) {
    config = {
      email: { enabled: Boolean(signIn?.email?.enabled), passwordRequired: signIn?.email?.passwordRequired !== false },
      anonymous: { enabled: Boolean(signIn?.anonymous?.enabled) },
    };
    password.input.checked = config.email.enabled;
    link.input.checked = config.email.enabled && !config.email.passwordRequired;
    anonymous.input.checked = config.anonymous.enabled;
    for (const input of inputs) input.disabled = false;
  }

  async function load() {
    try {
      show((await api.get(url)).signIn);
      error.hidden = true;
    } catch (failure) {
      error.textContent = `The sign-in methods could not be loaded: ${failure.message}`;
      error.hidden = false;
    }
  }

  async function save(next, message) {
    for (const input of inputs) input.disabled = true;
    try {
      const answer = await api.patch(url, { signIn: next });
      show(answer?.signIn || next);
      toast(message, 'success');
    } catch (failure) {
      show({ email: config.email, anonymous: config.anonymous });
      toast(`The sign-in methods were not changed: ${failure.message}`, 'error');
    }
  }

  password.input.addEventListener('change', () => {
    const on = password.input.checked;
    // Turning email off ends email links too; they come back off when email is turned on again.
    save({ email: { enabled: on, passwordRequired: on ? config.email.passwordRequired : true }, anonymous: config.anonymous },
      on ? 'Email/password sign-in is on.' : 'Email/password and email link sign-in are off.');
  });
  link.input.addEventListener('change', () => {
    const on = link.input.checked;
    const alsoEmail = on && !config.email.enabled;
    save({ email: { enabled: config.email.enabled || on, passwordRequired: !on }, anonymous: config.anonymous },
      on ? `Email link sign-in is on${alsoEmail ? ', and Email/password with it' : ''}.` : 'Email link sign-in is off; passwords are required.');
  });
  anonymous.input.addEventListener('change', () => {
    const on = anonymous.input.checked;
    save({ email: config.email, anonymous: { enabled: on } }, on ? 'Anonymous sign-in is on.' : 'Anonymous sign-in is off.');
  });

  return { element, load };
}
