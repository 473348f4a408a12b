// The scheduled backups (hearth serve --backup-every, docs/operations.md), on the Namespaces screen:
// each namespace's, newest first, with when it was taken and its size; "Restore" puts a namespace back
// as a backup holds it, into a new namespace by default or in place, after a confirmation that names
// what is replaced.

import { api, apiUrl } from './api.js';
import { confirmAction } from './dialog.js';
import { emptyState, h, toast } from './dom.js';
import { formatBytes, formatDateTime } from './format.js';
import { restoreChoice } from './restore-choice.js';

export function backupsPanel() {
  const body = h('tbody');
  const where = h('p', { class: 'view-subtitle', id: 'backups-where' });
  const table = h('table', { id: 'backups-table', class: 'data-table backups-table' },
    h('thead', {}, h('tr', {}, ['Namespace', 'Taken', 'Size', 'Feed position', 'Actions'].map((column) => h('th', { scope: 'col' }, column)))), body);
  const element = h('section', { class: 'panel', id: 'backups-panel' },
    h('h2', {}, 'Backups'), where, h('div', { class: 'table-scroll' }, table));
  let lastShown = '';

  async function load() {
    try {
      const listed = await api.get('/console/api/backups');
      const shown = JSON.stringify(listed);
      if (shown === lastShown) return;
      lastShown = shown;
      where.textContent = listed.directory
        ? `In ${listed.directory}, each read back and verified when made. Restore from the feed instead with a node's History.`
        : 'This server makes no scheduled backups: start it with --backup-every 1h (docs/operations.md).';
      render(listed.backups);
    } catch (failure) {
      lastShown = '';
      body.replaceChildren(h('tr', { class: 'empty-row' }, h('td', { colspan: '5' }, emptyState('The backups could not be listed.', failure.message))));
    }
  }

  function render(backups) {
    if (!backups.length) {
      body.replaceChildren(h('tr', { class: 'empty-row' }, h('td', { colspan: '5' }, emptyState('No backups yet.', 'The first is made when the server starts with --backup-every.'))));
      return;
    }
    body.replaceChildren(...backups.map((backup) => h('tr', { 'data-backup': backup.name, 'data-namespace': backup.namespace, 'data-position': String(backup.position) },
      h('td', { 'data-label': 'Namespace' }, backup.namespace),
      h('td', { 'data-label': 'Taken', title: backup.name }, formatDateTime(backup.time)),
      h('td', { 'data-label': 'Size' }, formatBytes(backup.bytes)),
      h('td', { 'data-label': 'Feed position', class: 'mono' }, String(backup.position)),
      h('td', { 'data-label': 'Actions' }, h('button', {
        type: 'button', class: 'button small restore-backup', 'aria-label': `Restore ${backup.namespace} from the backup of ${formatDateTime(backup.time)}`,
        onclick: () => restore(backup),
      }, 'Restore')))));
  }

  async function restore(backup) {
    const target = `${backup.namespace}-restored-${backup.name}`.slice(0, 63);
    const choice = restoreChoice({ ns: backup.namespace, path: '/', target });
    const message = h('div', {},
      h('p', {}, `All of ${backup.namespace} as the backup taken at ${formatDateTime(backup.time)} holds it (feed position ${backup.position}).`),
      choice.node);
    const confirmed = await confirmAction({ title: `Restore ${backup.namespace} from this backup?`, message, okLabel: 'Restore', danger: false });
    if (!confirmed) return;
    const destination = choice.destination();
    try {
      const done = await api.post(apiUrl('/.restore.json', { ns: backup.namespace }), { path: '/', backup: backup.name, ...destination });
      toast(destination.inPlace ? `Restored ${backup.namespace} in place from the backup.` : `Restored the backup into the namespace ${done.into}.`, 'success');
    } catch (failure) {
      toast(`The restore failed: ${failure.message}`, 'error');
    }
  }

  return { element, load };
}
