// The Namespaces screen: each namespace is a database of its own (data and rules); this lists, creates
// and deletes them.

import { api } from './api.js';
import { backupsPanel } from './backups.js';
import { confirmAction } from './dialog.js';
import { emptyState, h, toast } from './dom.js';
import { formatBytes, formatNumber } from './format.js';
import { routeHash } from './router.js';

// Connections and sizes change while the page is open; a slow refresh keeps them honest.
const REFRESH_MS = 5000;

export function mount(container, route, context) {
  const name = h('input', { id: 'new-namespace', autocomplete: 'off', spellcheck: 'false', placeholder: 'e.g. my-app-staging', 'aria-describedby': 'new-namespace-hint' });
  const create = h('button', { id: 'create-namespace', type: 'submit', class: 'button primary' }, 'Create');
  const error = h('p', { id: 'namespace-error', class: 'form-error', role: 'alert', hidden: true });
  const form = h('form', { class: 'create-form', novalidate: true },
    h('div', { class: 'field' }, h('label', { for: 'new-namespace' }, 'New namespace'),
      h('div', { class: 'input-with-button' }, name, create),
      h('span', { class: 'field-hint', id: 'new-namespace-hint' }, 'Clients reach it with ?ns=NAME, or as NAME.<host> when the server is set up for it.')),
    error);
  const body = h('tbody');
  const table = h('table', { id: 'namespaces-table', class: 'data-table namespaces-table' },
    h('thead', {}, h('tr', {}, ['Name', 'Size', 'Loaded', 'Connections', 'Actions'].map((column) => h('th', { scope: 'col' }, column)))), body);

  const backups = backupsPanel();
  container.append(h('section', { class: 'view namespaces-view' },
    h('header', { class: 'view-header' }, h('div', {}, h('h1', {}, 'Namespaces'),
      h('p', { class: 'view-subtitle' }, 'Each namespace is a separate database with its own data and rules.'))),
    h('section', { class: 'panel' }, form),
    h('section', { class: 'panel' }, h('div', { class: 'table-scroll' }, table)),
    backups.element));

  let lastShown = '';
  let timer = 0;
  let stopped = false;

  async function load() {
    clearTimeout(timer);
    try {
      const { namespaces = [] } = await api.get('/console/api/namespaces');
      // Redrawing unchanged rows would steal focus from a row's button every few seconds.
      const shown = JSON.stringify(namespaces);
      if (shown !== lastShown) {
        lastShown = shown;
        render(namespaces);
      }
    } catch (failure) {
      lastShown = '';
      body.replaceChildren(h('tr', { class: 'empty-row' }, h('td', { colspan: '5' }, emptyState('The namespaces could not be loaded.', failure.message))));
    }
    await backups.load();
    if (!stopped) timer = setTimeout(load, REFRESH_MS);
  }

  function render(namespaces) {
    if (!namespaces.length) {
      body.replaceChildren(h('tr', { class: 'empty-row' }, h('td', { colspan: '5' }, emptyState('No namespaces yet.', 'Create one above.'))));
      return;
    }
    body.replaceChildren(...namespaces.map((namespace) => h('tr', { 'data-namespace': namespace.name },
      h('td', { 'data-label': 'Name' }, h('a', { href: routeHash({ screen: 'data', ns: namespace.name, path: '/' }), class: 'namespace-name' }, namespace.name),
        namespace.default ? h('span', { class: 'badge badge-accent default-marker' }, 'Default') : null),
      h('td', { 'data-label': 'Size' }, formatBytes(namespace.bytes)),
      h('td', { 'data-label': 'Loaded' }, namespace.loaded ? 'In memory' : h('span', { class: 'muted' }, 'On disk')),
      h('td', { 'data-label': 'Connections' }, formatNumber(namespace.connections || 0)),
      h('td', { 'data-label': 'Actions' }, h('div', { class: 'row-actions' },
        h('a', { class: 'button small', href: routeHash({ screen: 'rules', ns: namespace.name }) }, 'Rules'),
        h('button', {
          type: 'button', class: 'button small delete-namespace danger-text', 'aria-label': `Delete namespace ${namespace.name}`,
          onclick: () => remove(namespace.name),
        }, 'Delete'))))));
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const wanted = name.value.trim();
    error.hidden = true;
    if (!wanted) {
      showError('Enter a name for the new namespace.');
      return;
    }
    create.disabled = true;
    try {
      await api.post('/console/api/namespaces', { name: wanted });
      toast(`Created the namespace ${wanted}.`, 'success');
      name.value = '';
      await Promise.all([load(), context.refreshNamespaces()]);
    } catch (failure) {
      showError(failure.status === 409 && !failure.body?.error ? `A namespace named ${wanted} already exists.` : failure.message);
      name.focus();
    } finally {
      create.disabled = false;
    }
  });

  function showError(message) {
    error.textContent = message;
    error.hidden = false;
  }

  async function remove(namespace) {
    const confirmed = await confirmAction({
      title: `Delete the namespace ${namespace}?`,
      message: `All of its data and rules are deleted and its clients are disconnected. This can't be undone.`,
      okLabel: 'Delete namespace',
      requireText: namespace,
    });
    if (!confirmed) return;
    try {
      await api.delete(`/console/api/namespaces/${encodeURIComponent(namespace)}`, { confirm: namespace });
      toast(`Deleted the namespace ${namespace}.`, 'success');
      await Promise.all([load(), context.refreshNamespaces()]);
    } catch (failure) {
      toast(`${namespace} was not deleted: ${failure.message}`, 'error');
    }
  }

  load();
  return {
    unmount() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
