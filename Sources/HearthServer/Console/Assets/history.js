// A location's history (docs/feed.md, "History of a location"): the changes at a node or below it,
// newest first, from the change feed: when, who, over what, where, and the value before and after.
// "Older" reads the next page; the feed reaches back as far as its retention. "Restore" on a change puts
// the location back as it was just before it (POST /.restore.json, docs/operations.md): into a new
// namespace by default, or in place, after a confirmation that names what is replaced.

import { api, apiUrl } from './api.js';
import { confirmAction } from './dialog.js';
import { h } from './dom.js';
import { restoreChoice } from './restore-choice.js';
import { formatDateTime, relativeTime } from './format.js';

const PAGE = 50;

export class HistoryDialog {
  constructor(ns) {
    this.ns = ns;
    this.path = '/';
    this.next = null;
    this.title = h('h2', { id: 'history-dialog-title' }, 'History');
    this.body = h('tbody');
    this.table = h('table', { id: 'history-table', class: 'data-table history-table' },
      h('thead', {}, h('tr', {}, ['When', 'Who', 'Where', 'Before', 'After', ''].map((name) => h('th', { scope: 'col' }, name)))), this.body);
    this.status = h('p', { id: 'history-status', class: 'muted', role: 'status' });
    this.older = h('button', { type: 'button', class: 'button', id: 'history-older' }, 'Older changes');
    const close = h('button', { type: 'button', class: 'button', id: 'history-close' }, 'Close');
    this.dialog = h('dialog', { id: 'history-dialog', class: 'wide-dialog', 'aria-labelledby': 'history-dialog-title' },
      h('div', { class: 'dialog-form' },
        h('header', { class: 'dialog-header' }, this.title),
        h('p', { class: 'dialog-description' }, 'Changes here or below, newest first, as far back as the change feed keeps them (7 days by default). A write above this node shows its whole value; one below it, the location it changed.'),
        h('div', { class: 'history-scroll' }, this.table), this.status,
        h('footer', { class: 'dialog-actions' }, this.older, close)));
    this.older.addEventListener('click', () => this.load());
    close.addEventListener('click', () => this.dialog.close());
  }

  open(path) {
    this.path = path;
    this.next = null;
    this.title.textContent = `History of ${path}`;
    this.body.replaceChildren();
    this.older.hidden = true;
    this.dialog.showModal();
    this.load();
  }

  async load() {
    this.older.disabled = true;
    this.status.textContent = 'Reading the change feed…';
    try {
      const page = await api.get(apiUrl('/.history.json', { ns: this.ns, path: this.path, limit: PAGE, before: this.next }));
      for (const change of page.changes) this.body.append(row(change, () => this.restore(change)));
      this.next = page.next;
      this.older.hidden = page.next === null;
      const shown = this.body.children.length;
      this.status.textContent = shown === 0
        ? (page.next === null ? 'No changes here in the change feed.' : `No changes among the ${page.scanned} newest entries; look further back with Older changes.`)
        : `${shown} change${shown === 1 ? '' : 's'}${page.next === null ? ', back to the oldest entry the feed keeps' : ''}.`;
    } catch (failure) {
      this.status.textContent = `The history could not be read: ${failure.message}`;
    } finally {
      this.older.disabled = false;
    }
  }

  // Asks, naming what is replaced and where the result goes, then restores this dialog's location as it
  // was just before `change`.
  async restore(change) {
    const target = `${this.ns}-restored-${change.position}`.slice(0, 63);
    const when = formatDateTime(change.time);
    const choice = restoreChoice({ ns: this.ns, path: this.path, target });
    const message = h('div', {},
      h('p', {}, `${this.path} and everything below it in ${this.ns}, as it was just before the change at ${when} by ${who(change)} (position ${change.position}): every later change here or below is undone.`),
      choice.node);
    const confirmed = await confirmAction({ title: `Restore ${this.path}?`, message, okLabel: 'Restore', danger: false });
    if (!confirmed) return;
    const destination = choice.destination();
    const body = { path: this.path, beforePosition: change.position, ...destination };
    this.status.textContent = 'Restoring…';
    try {
      const done = await api.post(apiUrl('/.restore.json', { ns: this.ns }), body);
      const undone = `${done.undone} later change${done.undone === 1 ? '' : 's'} undone`;
      if (destination.inPlace) {
        this.next = null;
        this.body.replaceChildren();
        await this.load();
        this.status.textContent = `Restored ${done.path} in place (${undone}); the restore is the newest change above.`;
      } else {
        this.status.textContent = `Restored ${done.path} into the namespace ${done.into} (${undone}).`;
      }
    } catch (failure) {
      this.status.textContent = `The restore failed: ${failure.message}`;
    }
  }
}

function who(change) {
  return change.authType === 'app_user' ? `user ${change.authId}` : change.authType;
}

function row(change, restore) {
  const button = h('button', { type: 'button', class: 'button small history-restore', 'aria-label': `Restore to just before the change at ${formatDateTime(change.time)}` }, 'Restore');
  button.addEventListener('click', restore);
  return h('tr', { 'data-position': String(change.position) },
    h('td', { title: formatDateTime(change.time) }, relativeTime(change.time)),
    h('td', {}, `${who(change)} · ${change.protocol}`),
    h('td', { class: 'mono' }, change.path),
    h('td', { class: 'mono history-value' }, change.beforeOmitted ? '(not kept: too large)' : shortJSON(change.before)),
    h('td', { class: 'mono history-value' }, shortJSON(change.after)),
    h('td', {}, button));
}

function shortJSON(value) {
  const text = value === null ? 'null' : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}
