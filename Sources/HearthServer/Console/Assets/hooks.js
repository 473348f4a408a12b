// The Triggers screen (docs/functions.md): each hook of the namespace with where it is and whether it is
// failing, the delivery log, the dead letters with redelivery, and the hooks document to deploy; and each
// functions process (HearthFunctions) with its place in the feed, when it was last heard from, and the
// events whose handler ran out of attempts.

import { api, apiUrl } from './api.js';
import { emptyState, h, toast } from './dom.js';
import { formatDateTime, formatNumber } from './format.js';

// Deliveries arrive continuously; a short refresh shows a failing receiver while it fails.
const REFRESH_MS = 3000;
// A functions process saves its cursor at least every 10 s: quiet for longer, it is probably not running.
const PROCESS_QUIET_MS = 30000;

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
  const processesBody = h('tbody');
  const parkedBody = h('tbody');
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
    h('header', { class: 'view-header' }, h('div', {}, h('h1', {}, 'Triggers'),
      h('p', { class: 'view-subtitle' }, 'Each change at a hook\'s path is POSTed to its URL, signed, in order, at least once; functions processes follow the feed themselves.'))),
    h('section', { class: 'panel' }, h('h2', {}, 'Hooks'),
      table('hooks-status', ['Name', 'Path', 'URL', 'Position', 'Failing', 'Dead letters', 'Last error'], statusBody)),
    h('section', { class: 'panel' }, h('h2', {}, 'Dead letters'),
      table('hooks-dead', ['Hook', 'Event', 'Path', 'Attempts', 'Error', 'Parked', ''], deadBody)),
    h('section', { class: 'panel' }, h('h2', {}, 'Delivery log'),
      table('hooks-log', ['Time', 'Hook', 'Event', 'Attempt', 'Status', 'Latency', 'Response'], logBody)),
    h('section', { class: 'panel' }, h('h2', {}, 'Functions processes'),
      table('functions-status', ['Process', 'Paths', 'Position', 'Last seen', 'Parked'], processesBody)),
    h('section', { class: 'panel' }, h('h2', {}, 'Parked function events'),
      table('functions-parked', ['Process', 'Function', 'Event', 'Path', 'Attempts', 'Error', 'Parked', ''], parkedBody)),
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
      const [status, log, dead, functions] = await Promise.all([
        api.get(hooksUrl('hooks/status', ns)), api.get(hooksUrl('hooks/log', ns, { limit: 50 })), api.get(hooksUrl('hooks/dead', ns)),
        api.get(hooksUrl('functions', ns)),
      ]);
      const processes = functions.functions || [];
      const parked = (await Promise.all(processes.filter((process) => process.parked > 0).map(async (process) =>
        ((await api.get(hooksUrl(`functions/${encodeURIComponent(process.name)}/parked`, ns))).parked || [])
          .map((event) => ({ ...event, process: process.name }))))).flat();
      // Redrawing unchanged tables would take focus from a button every few seconds (last-seen times
      // move on every save, so they are compared by whether they are recent).
      const now = JSON.stringify([status, log, dead, processes.map((p) => ({ ...p, seenAt: isQuiet(p) })), parked]);
      if (now !== shown) {
        shown = now;
        render(status.hooks || [], log.deliveries || [], dead.deadLetters || []);
        renderFunctions(processes, parked);
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

  function isQuiet(process) {
    return Date.now() - process.seenAt > PROCESS_QUIET_MS;
  }

  function renderFunctions(processes, parked) {
    processesBody.replaceChildren(...(processes.length ? processes.map((process) => h('tr', { 'data-process': process.name },
      h('td', { 'data-label': 'Process' }, process.name),
      h('td', { 'data-label': 'Paths' }, process.paths.map((path) => h('code', { class: 'path-chip' }, path))),
      h('td', { 'data-label': 'Position' }, String(process.after)),
      h('td', { 'data-label': 'Last seen' }, isQuiet(process)
        ? h('span', { class: 'badge badge-danger', title: 'No cursor save for over 30 s: is the process running?' }, `quiet since ${formatDateTime(process.seenAt)}`)
        : h('span', { class: 'badge' }, 'running')),
      h('td', { 'data-label': 'Parked' }, formatNumber(process.parked))))
      : [emptyRow(5, 'No functions processes in this namespace.', 'A HearthFunctions executable registers here when it starts (docs/functions.md).')]));
    parkedBody.replaceChildren(...(parked.length ? parked.map((event) => h('tr', { 'data-event': event.id, 'data-function': event.function },
      h('td', { 'data-label': 'Process' }, event.process),
      h('td', { 'data-label': 'Function' }, event.function),
      h('td', { 'data-label': 'Event' }, h('code', {}, event.id)),
      h('td', { 'data-label': 'Path' }, h('code', {}, event.event?.path || '')),
      h('td', { 'data-label': 'Attempts' }, String(event.attempts)),
      h('td', { 'data-label': 'Error', class: 'muted' }, event.error),
      h('td', { 'data-label': 'Parked' }, formatDateTime(event.parkedAt)),
      h('td', {}, h('button', {
        type: 'button', class: 'button small dismiss', 'aria-label': `Dismiss event ${event.id} of ${event.function}`,
        onclick: () => dismiss(event.process, event.id),
      }, 'Dismiss'))))
      : [emptyRow(8, 'No parked function events.', 'An event whose handler throws on every attempt waits here: fix the function, then dismiss it.')]));
  }

  async function dismiss(process, id) {
    try {
      await api.delete(hooksUrl(`functions/${encodeURIComponent(process)}/parked`, ns, { id }));
      toast(`Dismissed ${id}.`, 'success');
      refresh();
    } catch (failure) {
      toast(`${id} was not dismissed: ${failure.message}`, 'error');
    }
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
