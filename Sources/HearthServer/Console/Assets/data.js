// The Data screen: the jump field, the tree, its dialogs, and the change feed that keeps it live.

import { api, apiUrl, csrf, restUrl } from './api.js';
import { confirmAction, field, formDialog } from './dialog.js';
import { h, toast } from './dom.js';
import { parseInput } from './format.js';
import { childPath, invalidKeyReason, normalizePath } from './paths.js';
import { routeHash } from './router.js';
import { exportNode, ImportDialog } from './transfer.js';
import { HistoryDialog } from './history.js';
import { DataTree } from './tree.js';

export function mount(container, route, context) {
  const ns = route.ns;
  const jump = h('input', { id: 'jump-path', type: 'text', placeholder: '/users/alice', spellcheck: 'false', autocomplete: 'off' });
  const jumpForm = h('form', { class: 'jump-form', role: 'search' },
    h('label', { for: 'jump-path' }, 'Go to path'), jump, h('button', { type: 'submit', class: 'button' }, 'Go'));
  const live = h('span', { id: 'live-status', class: 'live-status', role: 'status' }, 'Connecting…');
  const list = h('ul', { id: 'data-tree', class: 'tree', 'aria-label': `Data in ${ns}` });

  let tree;
  const add = addChildDialog(ns, () => tree);
  const importer = new ImportDialog(ns, { onImported: (path) => tree.changed([path]) });
  const historyDialog = new HistoryDialog(ns);
  tree = new DataTree(list, {
    ns,
    actions: {
      save: (node, value) => api.put(restUrl(ns, node.path), value),
      addChild: (node) => add.openFor(node),
      remove: (node) => removeNode(ns, tree, node),
      exportNode: (node) => exportNode(ns, node.path),
      importInto: (node) => importer.open(node.path),
      history: (node) => historyDialog.open(node.path),
    },
  });

  container.append(h('section', { class: 'view data-view' },
    h('header', { class: 'view-header' },
      h('div', {}, h('h1', {}, 'Data'), h('p', { class: 'view-subtitle' }, `Namespace ${ns}`)), live),
    h('div', { class: 'toolbar' }, jumpForm),
    h('div', { class: 'panel tree-panel' }, list),
    h('p', { class: 'hint' }, 'Click a value, or focus it and press Enter, to edit it: Enter saves, Escape cancels. '
      + 'Values are read as JSON when they parse (12, true, {"a": 1}), otherwise as text. Rows flash green when added, '
      + 'yellow when changed and red when removed.'),
    add.dialog, importer.dialog, historyDialog.dialog));

  jumpForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const path = normalizePath(jump.value);
    jump.value = path;
    // pushState, not the hash: the tree is already showing, only the address should follow.
    history.pushState(null, '', routeHash({ screen: 'data', ns, path }));
    tree.reveal(path);
  });

  // The feed and a deep link's path wait for the root: a namespace that does not exist shows why, once,
  // instead of retrying a feed that cannot open.
  let feed = null;
  let unmounted = false;
  const missing = () => {
    feed?.close();
    tree.showMissingNamespace();
    jumpForm.hidden = true;
  };
  tree.ready.then(() => {
    if (unmounted) return;
    if (tree.missingNamespace) return missing();
    feed = openFeed(ns, tree, live, { onMissing: missing });
    if (route.path !== '/') {
      jump.value = route.path;
      tree.reveal(route.path);
    }
  });

  return {
    update(next) {
      if (next.ns !== ns) return false;
      jump.value = next.path === '/' ? '' : next.path;
      tree.reveal(next.path);
      return true;
    },
    unmount() {
      unmounted = true;
      feed?.close();
      tree.destroy();
    },
  };
}

async function removeNode(ns, tree, node) {
  const everything = node.path === '/';
  const confirmed = await confirmAction({
    title: everything ? `Delete all data in ${ns}?` : `Delete ${node.path}?`,
    message: everything
      ? `This deletes everything stored in the namespace ${ns}. Rules stay. This can't be undone: export the root first if you might need it.`
      : `This deletes ${node.path} and everything under it. This can't be undone: export it first if you might need it.`,
    okLabel: 'Delete',
  });
  if (!confirmed) return;
  try {
    await api.delete(restUrl(ns, node.path));
    toast(`Deleted ${node.path}.`, 'success');
    await tree.refreshNow(node.parent || tree.root);
  } catch (error) {
    toast(`${node.path} was not deleted: ${error.message}`, 'error');
  }
}

function addChildDialog(ns, currentTree) {
  let parent = null;
  const key = h('input', { id: 'add-key', spellcheck: 'false', autocomplete: 'off' });
  const value = h('textarea', { id: 'add-value', rows: '3', spellcheck: 'false' });
  const where = h('p', { class: 'dialog-description' });
  // Enter adds (as in any single-line form); Shift+Enter keeps a newline for multi-line JSON.
  value.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      value.form.requestSubmit();
    }
  });
  const view = formDialog({
    id: 'add-dialog',
    title: 'Add a child',
    fields: [where, field('Key', key, 'Not allowed: . # $ [ ] /'),
      field('Value', value, 'JSON (12, true, "text", {"a": 1}) or plain text. Shift+Enter for a new line.')],
    submitLabel: 'Add',
    submitId: 'add-submit',
    onSubmit: async () => {
      const name = key.value.trim();
      const problem = invalidKeyReason(name);
      if (problem) throw new Error(problem);
      if (!value.value.trim()) throw new Error('Enter a value. Use "" for an empty string.');
      const path = childPath(parent.path, name);
      await api.put(restUrl(ns, path), parseInput(value.value));
      const tree = currentTree();
      // A leaf parent turns into an object: its own parent's listing shows that.
      await tree.refreshNow(parent.leaf ? parent.parent || tree.root : parent);
      await tree.reveal(path);
      toast(`Added ${path}.`, 'success');
    },
  });
  return {
    dialog: view.dialog,
    openFor(node) {
      parent = node;
      key.value = '';
      value.value = '';
      where.textContent = node.leaf
        ? `${node.path} holds a value. Adding a child replaces that value with an object.`
        : `The new child goes under ${node.path}.`;
      view.open();
    },
  };
}

/// One stream of changes per shown namespace, read with fetch so that the CSRF token travels in a header
/// (an EventSource can send none, and a token in the URL ends up in proxies' and browsers' logs). A broken
/// stream is opened again; a namespace that does not exist (404) stops it for good, and `onMissing` says so.
function openFeed(ns, tree, status, { onMissing }) {
  let controller = null;
  let retry = 0;
  let everOpened = false;
  let closed = false;
  const show = (text, kind) => {
    status.textContent = text;
    status.className = `live-status ${kind}`;
  };
  const again = (seconds, text) => {
    if (closed) return;
    show(text, 'offline');
    retry = setTimeout(connect, seconds * 1000);
  };
  const connect = async () => {
    controller = new AbortController();
    let response;
    try {
      response = await fetch(apiUrl('/console/api/changes', { ns }), {
        headers: { 'X-Hearth-CSRF': csrf(), Accept: 'text/event-stream' },
        credentials: 'same-origin', cache: 'no-store', signal: controller.signal,
      });
    } catch {
      return again(5, 'Not live: retrying');
    }
    if (response.status === 404) {
      closed = true;
      show('Not live', 'offline');
      onMissing();
      return;
    }
    if (!response.ok) {
      // Asking for the session makes an expired one return the page to sign-in.
      api.get('/console/api/session').catch(() => {});
      return again(5, 'Not live: retrying');
    }
    show('Live', 'live');
    if (everOpened) tree.refreshAll();
    everOpened = true;
    try {
      await readEvents(response.body, (name, data) => {
        if (name !== 'changed') return;
        let paths = [];
        try {
          paths = JSON.parse(data).paths || [];
        } catch {
          return;
        }
        tree.changed(paths);
      });
    } catch {
      // Aborted (closed) or the connection broke: reopened below unless closed.
    }
    again(1, 'Reconnecting…');
  };
  connect();
  return {
    close() {
      closed = true;
      clearTimeout(retry);
      controller?.abort();
    },
  };
}

/// Calls `onEvent(name, data)` for each server-sent event in `body` until it ends (the text/event-stream
/// format: lines `event:` and `data:`, a blank line ending each event, `:` lines as comments).
async function readEvents(body, onEvent) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let name = 'message';
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end).replace(/\r$/, '');
      buffered = buffered.slice(end + 1);
      if (line === '') {
        if (data.length) onEvent(name, data.join('\n'));
        name = 'message';
        data = [];
      } else if (line.startsWith('event:')) {
        name = line.slice(6).trim();
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
    }
  }
}
