// Blocking auth hooks: the URLs asked before a sign-up is stored and before a sign-in gets its tokens
// (Firebase's blocking functions; docs/functions.md). Each row says where the hook is, how it fails, and
// how it has been answering on this server. Secrets go to the server and never come back to the page.

import { api } from './api.js';
import { confirmAction, field, formDialog } from './dialog.js';
import { h, toast } from './dom.js';
import { formatNumber } from './format.js';

const EVENTS = [
  { id: 'beforeCreate', title: 'Before sign-up', summary: 'Asked before a new account is stored: it may refuse it, or set its claims and profile.' },
  { id: 'beforeSignIn', title: 'Before sign-in', summary: 'Asked before a sign-in gets its tokens: it may refuse it, or add claims to the session.' },
];

export function createBlockingHooks(project) {
  const url = `/console/api/auth/identitytoolkit.googleapis.com/admin/v2/projects/${encodeURIComponent(project)}/config`;
  let triggers = {};
  const list = h('ul', { class: 'method-list', id: 'blocking-list' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const element = h('section', { class: 'panel blocking-panel' },
    h('header', { class: 'panel-header' }, h('h2', {}, 'Blocking hooks')),
    h('p', { class: 'panel-note' }, 'Your URLs, asked as Firebase asks blocking functions. A 4xx answer refuses; a failure refuses unless the hook fails open.'),
    list, error);
  const editor = createEditor(url, () => load());
  element.append(editor.dialog);

  function state(trigger) {
    if (!trigger) return 'Not set';
    return `${trigger.functionUri} · ${trigger.timeoutSeconds} s · ${trigger.failOpen ? 'fails open' : 'fails closed'}`;
  }

  function statusLine(trigger) {
    const status = trigger?.status;
    if (!status) return null;
    let text = `${formatNumber(status.calls)} call${status.calls === 1 ? '' : 's'} · ${formatNumber(status.refusals)} refused · ${formatNumber(status.failures)} failed`;
    if (status.calls > 0) text += ` · last ${formatNumber(status.lastMilliseconds)} ms`;
    const line = h('span', { class: 'method-state', 'data-status': 'calls' }, text);
    if (!status.lastFailure) return line;
    return [line, h('span', { class: 'method-state form-error', 'data-status': 'failure' }, `Last failure: ${status.lastFailure}`)];
  }

  function render() {
    list.replaceChildren(...EVENTS.map((event) => {
      const trigger = triggers[event.id];
      const configure = h('button', { type: 'button', class: 'button small', id: `configure-${event.id}`, onclick: () => editor.open(event, trigger) },
        trigger ? 'Change' : 'Set up');
      const remove = trigger
        ? h('button', { type: 'button', class: 'button small danger-text', id: `remove-${event.id}`, onclick: () => removeHook(event) }, 'Remove') : null;
      return h('li', { class: 'method provider', 'data-hook': event.id },
        h('div', { class: 'method-text' }, h('span', { class: 'method-title' }, event.title),
          h('span', { class: 'method-description' }, event.summary),
          h('span', { class: 'method-state', id: `hook-${event.id}-state` }, state(trigger)), statusLine(trigger)),
        h('div', { class: 'provider-actions' }, configure, remove));
    }));
  }

  async function load() {
    try {
      triggers = (await api.get(url)).blockingFunctions?.triggers || {};
      error.hidden = true;
      render();
    } catch (failure) {
      error.textContent = `The blocking hooks could not be loaded: ${failure.message}`;
      error.hidden = false;
    }
  }

  async function removeHook(event) {
    const confirmed = await confirmAction({
      title: `Remove the ${event.title.toLowerCase()} hook?`, message: 'Sign-ups and sign-ins go ahead without asking it.', okLabel: 'Remove hook',
    });
    if (!confirmed) return;
    try {
      await api.patch(url, { blockingFunctions: { triggers: { [event.id]: null } } });
      toast(`The ${event.title.toLowerCase()} hook is removed.`, 'success');
    } catch (failure) {
      toast(`Not removed: ${failure.message}`, 'error');
    }
    await load();
  }

  return { element, load };
}

// One dialog for either hook: its URL, the secret that signs its calls (write-only: left blank, the one
// set stays), its timeout and what a failure means.
function createEditor(url, onSaved) {
  const address = h('input', { id: 'hook-url', type: 'url', autocomplete: 'off', spellcheck: 'false', placeholder: 'https://functions.example.com/before-sign-up' });
  const secret = h('input', { id: 'hook-secret', type: 'password', autocomplete: 'new-password' });
  const timeout = h('input', { id: 'hook-timeout', type: 'number', min: '1', max: '10', step: '1' });
  const failOpen = h('input', { id: 'hook-fail-open', type: 'checkbox' });
  let current = null;
  const view = formDialog({
    id: 'hook-dialog', title: 'Blocking hook', description: 'Calls are signed with Hearth-Signature, as webhook deliveries are.',
    fields: [
      field('URL', address, 'Where the server posts; private and loopback addresses need hearth serve --hooks-allow.'),
      field('Secret', secret, 'At least 16 characters: the key of the calls’ HMAC signature.'),
      field('Timeout (seconds)', timeout, '1 to 10; Firebase allows 7.'),
      h('div', { class: 'field checkbox-field' }, failOpen, h('label', { for: 'hook-fail-open' }, 'Let sign-ups and sign-ins through when the hook fails (fail open)')),
    ],
    submitLabel: 'Save', submitId: 'hook-save',
    onSubmit: async () => {
      const trigger = { functionUri: address.value.trim(), timeoutSeconds: Number(timeout.value), failOpen: failOpen.checked };
      if (secret.value) trigger.secret = secret.value;
      await api.patch(url, { blockingFunctions: { triggers: { [current.id]: trigger } } });
      secret.value = '';
      toast(`The ${current.title.toLowerCase()} hook is saved.`, 'success');
      await onSaved();
    },
  });
  return {
    dialog: view.dialog,
    open(event, trigger) {
      current = event;
      view.dialog.querySelector('h2').textContent = `${event.title} hook`;
      address.value = trigger?.functionUri || '';
      secret.value = '';
      secret.placeholder = trigger ? 'Set (hidden): type a new one to replace it' : 'Required';
      timeout.value = String(trigger?.timeoutSeconds || 7);
      failOpen.checked = Boolean(trigger?.failOpen);
      view.open();
    },
  };
}
