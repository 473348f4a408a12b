// The Webhooks screen (docs/functions.md): each hook of the namespace with where it is and whether it is
// failing, the delivery log, the dead letters with redelivery, and the hooks document to deploy.

import { api, apiUrl } from './api.js';
import { emptyState, h, toast } from './dom.js';
import { formatDateTime, formatNumber } from './format.js';

// Deliveries arrive continuously; a short refresh shows a failing receiver while it fails.
const REFRESH_MS = 3000;

const hooksUrl = (endpoint, ns, params = {}) => apiUrl(`/.settings/${endpoint}.json`, { ns, ...params });

function table(id, columns, body) {
  return h('div', { class: 'table-scroll' }, h('table', { id, class: 'data-table' },
    h('thead', {}, h('tr', {}, columns.map((column) => h('th', { scope: 'col' }, column)))), body));
}

function emptyRow(columns, title, detail) {
  return h('tr', { class: 'empty-row' }, h('td', { colspan: String(columns) }, emptyState(title, detail)));
}

export function mount(container, route) {
  let ns = route.ns;
  const statusBody = h('tbody');
  const logBody = h('tbody');
  const deadBody = h('tbody');
  const documentText = h('textarea', {
    id: 'hooks-document', class: 'hooks-document', rows: '12', spellcheck: 'false', 'aria-describedby': 'hooks-document-help',
  });
  const deployButton = h('button', { id: 'deploy-hooks', type: 'submit', class: 'button primary' }, 'Deploy');
  const deployError = h('p', { id: 'hooks-error', class: 'form-error', role: 'alert', hidden: true });
  const form = h('form', { class: 'hooks-form', novalidate: true },
    h('label', { for: 'hooks-document' }, 'Hooks document'),
    documentText,
    h('p', { id: 'hooks-document-help', class: 'hint' },
      'Secrets show as (hidden): left so, a hook keeps its deployed secret; a new hook needs one of 16 or more characters. Deploying replaces every hook of the namespace.'),
    deployError,
    h('div', { class: 'row-actions' }, deployButton));

  container.append(h('section', { class: 'view hooks-view' },
    h('header', { class: 'view-header' }, h('div', {}, h('h1', {}, 'Webhooks'),
      h('p', { class: 'view-subtitle' }, 'Each change at a hook\'s path is POSTed to its URL, signed, in order, at least once.'))),
    h('section', { class: 'panel' }, h('h2', {}, 'Hooks'),
      table('hooks-status', ['Name', 'Path', 'URL', 'Position', 'Failing', 'Dead letters', 'Last error'], statusBody)),
    h('section', { class: 'panel' }, h('h2', {}, 'Dead letters'),
      table('hooks-dead', ['Hook', 'Event', 'Path', 'Attempts', 'Error', 'Parked', ''], deadBody)),
    h('section', { class: 'panel' }, h('h2', {}, 'Delivery log'),
      table('hooks-log', ['Time', 'Hook', 'Event', 'Attempt', 'Status', 'Latency', 'Response'], logBody)),
    h('section', { class: 'panel' }, h('h2', {}, 'Deploy'), form)));

  let timer = 0;
  let stopped = false;
  let shown = '';

  async function loadDocument() {
    try {
      const document = await api.get(hooksUrl('hooks', ns));
      documentText.value = JSON.stringify(document, null, 2);
    } catch (failure) {
      documentText.value = '';
      showError(failure.message);
    }
  }

  async function refresh() {
    clearTimeout(timer);
    try {
      const [status, log, dead] = await Promise.all([
        api.get(hooksUrl('hooks/status', ns)), api.get(hooksUrl('hooks/log', ns, { limit: 50 })), api.get(hooksUrl('hooks/dead', ns)),
      ]);
      // Redrawing unchanged tables would take focus from a redeliver button every few seconds.
      const now = JSON.stringify([status, log, dead]);
      if (now !== shown) {
        shown = now;
        render(status.hooks || [], log.deliveries || [], dead.deadLetters || []);
      }
    } catch (failure) {
      shown = '';
      statusBody.replaceChildren(emptyRow(7, 'The webhooks could not be loaded.', failure.message));
    }
    if (!stopped) timer = setTimeout(refresh, REFRESH_MS);
  }

  function render(hooks, deliveries, letters) {
    statusBody.replaceChildren(...(hooks.length ? hooks.map((hook) => h('tr', { 'data-hook': hook.name },
      h('td', { 'data-label': 'Name' }, hook.name),
      h('td', { 'data-label': 'Path' }, h('code', {}, hook.path)),
      h('td', { 'data-label': 'URL' }, hook.url),
      h('td', { 'data-label': 'Position' }, String(hook.position)),
      h('td', { 'data-label': 'Failing' }, hook.failingAttempts
        ? h('span', { class: 'badge badge-danger' }, `${hook.failingAttempts} attempt${hook.failingAttempts === 1 ? '' : 's'}`)
        : h('span', { class: 'badge' }, 'OK')),
      h('td', { 'data-label': 'Dead letters' }, formatNumber(hook.deadLetters)),
      h('td', { 'data-label': 'Last error', class: 'muted' }, hook.lastError || '')))
      : [emptyRow(7, 'No webhooks in this namespace.', 'Deploy a hooks document below, or with hearth hooks deploy.')]));
    logBody.replaceChildren(...(deliveries.length ? deliveries.map((entry) => h('tr', {},
      h('td', { 'data-label': 'Time' }, formatDateTime(entry.time)),
      h('td', { 'data-label': 'Hook' }, entry.hook),
      h('td', { 'data-label': 'Event' }, h('code', {}, entry.id)),
      h('td', { 'data-label': 'Attempt' }, String(entry.attempt)),
      h('td', { 'data-label': 'Status' }, h('span', { class: `badge ${entry.status >= 200 && entry.status < 300 ? '' : 'badge-danger'}` },
        entry.status ? String(entry.status) : 'no answer')),
      h('td', { 'data-label': 'Latency' }, `${entry.latencyMs} ms`),
      h('td', { 'data-label': 'Response', class: 'muted' }, entry.response)))
      : [emptyRow(7, 'Nothing delivered yet.', 'Deliveries show here as they happen.')]));
    deadBody.replaceChildren(...(letters.length ? letters.map((letter) => h('tr', { 'data-event': letter.id },
      h('td', { 'data-label': 'Hook' }, letter.hook),
      h('td', { 'data-label': 'Event' }, h('code', {}, letter.id)),
      h('td', { 'data-label': 'Path' }, h('code', {}, letter.event?.path || '')),
      h('td', { 'data-label': 'Attempts' }, String(letter.attempts)),
      h('td', { 'data-label': 'Error', class: 'muted' }, letter.error),
      h('td', { 'data-label': 'Parked' }, formatDateTime(letter.parkedAt)),
      h('td', {}, letter.redelivering ? h('span', { class: 'muted' }, 'Redelivering…') : h('button', {
        type: 'button', class: 'button small redeliver', 'aria-label': `Redeliver event ${letter.id} of ${letter.hook}`,
        onclick: () => redeliver(letter.hook, letter.id),
      }, 'Redeliver'))))
      : [emptyRow(7, 'No dead letters.', 'An event whose attempts run out waits here until you redeliver it.')]));
  }

  async function redeliver(hook, id) {
    try {
      await api.post(hooksUrl('hooks/redeliver', ns), { hook, id });
      toast(`Redelivering ${id}.`, 'success');
      refresh();
    } catch (failure) {
      toast(`${id} was not redelivered: ${failure.message}`, 'error');
    }
  }

  function showError(message) {
    deployError.textContent = message;
    deployError.hidden = !message;
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    showError('');
    let document;
    try {
      document = JSON.parse(documentText.value);
    } catch (failure) {
      showError(`The document is not JSON: ${failure.message}`);
      return;
    }
    deployButton.disabled = true;
    try {
      await api.put(hooksUrl('hooks', ns), document);
      toast('Deployed the webhooks.', 'success');
      await loadDocument();
      refresh();
    } catch (failure) {
      showError(failure.message);
    } finally {
      deployButton.disabled = false;
    }
  });

  loadDocument();
  refresh();
  return {
    update(next) {
      if (next.ns === ns) return true;
      ns = next.ns;
      shown = '';
      loadDocument();
      refresh();
      return true;
    },
    unmount() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
