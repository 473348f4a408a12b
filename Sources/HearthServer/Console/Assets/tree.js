// The data tree: rows for the nodes on screen, each inner node's children loaded a page at a time
// and refreshed (never re-downloaded as a subtree) when the change feed names a path near it.

import { api, apiUrl, restUrl } from './api.js';
import { h, toast } from './dom.js';
import { plural } from './format.js';
import { childPath, compareKeys, isAtOrAbove, lastKey, splitPath } from './paths.js';
import { editInPlace } from './value-editor.js';
import { fillRow, flash } from './tree-row.js';

const PAGE_SIZE = 100;
const MAX_PAGE = 500;
// A busy namespace can name the same path many times a second; one read per node per gap is plenty.
const REFRESH_GAP_MS = 200;
// Removed rows stay this long, fading, so the change can be seen (tree-row.js flashes as long).
const FLASH_MS = 2000;

export class DataTree {
  /// `actions`: save(node, value), addChild(node), remove(node), exportNode(node), importInto(node), history(node).
  constructor(list, { ns, actions }) {
    this.list = list;
    this.ns = ns;
    this.actions = actions;
    this.nodes = new Map();
    this.expanded = new Set();
    this.fading = new Map();
    this.target = null;
    this.root = this.createNode('/', null, { leaf: false, count: 0 });
    list.replaceChildren(this.root.li);
    this.ready = this.expand(this.root);
  }

  destroy() {
    for (const node of this.nodes.values()) this.stopTimers(node);
    for (const { timer } of this.fading.values()) clearTimeout(timer);
    this.nodes.clear();
    this.expanded.clear();
  }

  page(path, after, limit) {
    return api.get(apiUrl('/console/api/children', { ns: this.ns, path, after, limit }));
  }

  // MARK: Rows

  createNode(path, parent, entry) {
    const node = {
      path,
      key: lastKey(path),
      parent,
      leaf: entry.leaf,
      value: entry.leaf ? entry.value : null,
      // A long string arrives cut short (docs/console-api.md): shown so, read whole before editing.
      truncated: Boolean(entry.truncated),
      bytes: entry.bytes || 0,
      count: entry.leaf ? 0 : entry.count || 0,
      expanded: false,
      loading: null,
      children: [],
      byKey: new Map(),
      cursor: null,
      more: false,
      total: 0,
      pinned: false,
      editing: false,
      refresh: null,
      flashTimer: 0,
      group: null,
      loadMore: null,
    };
    node.row = h('div', { class: 'row', 'data-path': path });
    node.li = h('li', { class: 'node' }, node.row);
    this.nodes.set(path, node);
    fillRow(node, this);
    return node;
  }

  // MARK: Expanding and paging

  toggle(node) {
    if (node.expanded) this.collapse(node);
    else this.expand(node);
  }

  expand(node) {
    if (node.expanded) return node.loading || Promise.resolve();
    node.expanded = true;
    this.expanded.add(node);
    node.group = h('ul', { class: 'children', role: 'group', 'aria-label': `Children of ${node.path}` },
      h('li', { class: 'tree-status' }, 'Loading…'));
    node.li.append(node.group);
    if (node.path !== '/') fillRow(node, this);
    node.loading = this.sync(node, new Set(), true)
      .catch((error) => {
        // Only a namespace that does not exist answers the root 404 (docs/console-api.md).
        if (node === this.root && error.status === 404) this.missingNamespace = error;
        else this.showLoadError(node, error);
      })
      .finally(() => { node.loading = null; });
    return node.loading;
  }

  /// The namespace's empty state when it does not exist: what to do instead of an error and retries.
  showMissingNamespace() {
    this.list.replaceChildren(h('li', { class: 'tree-status tree-empty', id: 'missing-namespace' },
      `There is no namespace ${this.ns}. `, h('a', { href: '#/namespaces' }, 'Create it on the Namespaces page'),
      ', or pick another namespace.'));
  }

  showLoadError(node, error) {
    if (!node.group) return;
    const retry = h('button', { type: 'button', class: 'button small', onclick: () => { this.collapse(node); this.expand(node); } }, 'Try again');
    node.group.replaceChildren(h('li', { class: 'tree-status error' }, `${node.path} could not be loaded: ${error.message} `, retry));
  }

  collapse(node) {
    if (!node.expanded || node.path === '/') return;
    for (const child of node.children) this.forget(child);
    node.children = [];
    node.byKey.clear();
    node.cursor = null;
    node.more = false;
    node.expanded = false;
    this.expanded.delete(node);
    node.group?.remove();
    node.group = null;
    node.loadMore = null;
    fillRow(node, this);
  }

  forget(node) {
    if (this.nodes.get(node.path) === node) this.nodes.delete(node.path);
    this.expanded.delete(node);
    this.stopTimers(node);
    for (const child of node.children) this.forget(child);
  }

  stopTimers(node) {
    if (node.refresh) clearTimeout(node.refresh.timer);
    node.refresh = null;
  }

  async loadMore(node) {
    const button = node.loadMore?.querySelector('button');
    if (button) button.disabled = true;
    try {
      const answer = await this.page(node.path, node.cursor, PAGE_SIZE);
      if (!node.expanded) return;
      for (const entry of answer.children) {
        const known = node.byKey.get(entry.key);
        if (known) {
          known.pinned = false;
          this.updateChild(known, entry, false, false);
        } else {
          this.addChild(node, entry);
        }
      }
      if (answer.children.length) node.cursor = answer.children[answer.children.length - 1].key;
      node.more = answer.more;
      node.total = answer.total;
      this.renderStatus(node);
      const first = answer.children[0] && node.byKey.get(answer.children[0].key);
      if (!node.loadMore && first) first.row.querySelector('button, [tabindex]')?.focus();
    } catch (error) {
      toast(`More children of ${node.path} could not be loaded: ${error.message}`, 'error');
    } finally {
      if (button) button.disabled = false;
    }
  }

  /// The "Load more" button, or the empty-namespace explanation, at the end of a node's children.
  renderStatus(node) {
    if (!node.group) return;
    node.group.querySelectorAll(':scope > .tree-status').forEach((item) => item.remove());
    if (node.path === '/' && !node.children.length && !node.leaf) {
      node.group.append(h('li', { class: 'tree-status tree-empty' },
        'This namespace has no data yet. Use the + button on the row above to add a child, or the upload button to import a JSON file.'));
    }
    const remaining = Math.max(0, node.total - node.children.length);
    if (node.more && remaining > 0) {
      if (!node.loadMore) {
        node.loadMore = h('li', { class: 'load-more-item' },
          h('button', { type: 'button', class: 'button small load-more', onclick: () => this.loadMore(node) }));
      }
      node.loadMore.querySelector('button').textContent = `Load more (${remaining.toLocaleString('en-US')} remaining)`;
      node.group.append(node.loadMore);
    } else {
      node.loadMore?.remove();
      node.loadMore = null;
    }
  }

  addChild(parent, entry) {
    const path = childPath(parent.path, entry.key);
    const fading = this.fading.get(path);
    if (fading) {
      clearTimeout(fading.timer);
      fading.li.remove();
      this.fading.delete(path);
    }
    const node = this.createNode(path, parent, entry);
    let index = parent.children.findIndex((child) => compareKeys(child.key, entry.key) > 0);
    if (index < 0) index = parent.children.length;
    const next = parent.children[index];
    parent.children.splice(index, 0, node);
    parent.byKey.set(entry.key, node);
    parent.group.insertBefore(node.li, next ? next.li : parent.loadMore);
    return node;
  }

  removeChild(parent, child, animate) {
    parent.children.splice(parent.children.indexOf(child), 1);
    parent.byKey.delete(child.key);
    this.forget(child);
    if (this.target === child) this.target = null;
    if (!animate) {
      child.li.remove();
      return;
    }
    flash(child, 'removed');
    child.li.classList.add('removing');
    child.row.querySelectorAll('button, [tabindex]').forEach((element) => { element.tabIndex = -1; });
    const timer = setTimeout(() => {
      child.li.remove();
      this.fading.delete(child.path);
    }, FLASH_MS);
    this.fading.set(child.path, { li: child.li, timer });
  }

  /// Brings `child` up to date with its parent's listing; flashes it when it changed or the feed
  /// named a path under it.
  updateChild(child, entry, hinted, animate = true) {
    let changed = hinted;
    if (entry.leaf) {
      if (!child.leaf) {
        this.collapse(child);
        child.leaf = true;
        changed = true;
      }
      if (JSON.stringify(child.value) !== JSON.stringify(entry.value) || (child.bytes || 0) !== (entry.bytes || 0)) changed = true;
      child.value = entry.value;
      child.truncated = Boolean(entry.truncated);
      child.bytes = entry.bytes || 0;
    } else {
      if (child.leaf) changed = true;
      if (child.count !== entry.count) changed = true;
      child.leaf = false;
      child.value = null;
      child.count = entry.count;
    }
    if (!changed) return;
    if (!child.editing) fillRow(child, this);
    if (animate) flash(child, 'changed');
  }

  // MARK: Refreshing

  /// Reads `node`'s children again, as many as are on screen, and applies the difference. `quiet`
  /// (the first load) adds rows without flashing them.
  async sync(node, hints, quiet) {
    const known = node.children.filter((child) => !child.pinned).length;
    const want = Math.max(PAGE_SIZE, known);
    const collected = [];
    let answer;
    let after = null;
    do {
      answer = await this.page(node.path, after, Math.min(MAX_PAGE, want - collected.length));
      collected.push(...answer.children);
      if (answer.children.length) after = answer.children[answer.children.length - 1].key;
    } while (answer.more && collected.length < want && answer.children.length);
    if (!node.expanded || this.nodes.get(node.path) !== node) return;

    if (node.path === '/') this.syncRoot(answer, quiet);
    const oldCursor = node.cursor;
    const oldMore = node.more;
    // Keys past the last one read weren't asked about: rows there stay as they are.
    const boundary = answer.more ? after : null;
    const fresh = new Map(collected.map((entry) => [entry.key, entry]));
    for (const child of [...node.children]) {
      const entry = fresh.get(child.key);
      if (entry) {
        child.pinned = false;
        this.updateChild(child, entry, hints.has(child.key), !quiet);
      } else if (boundary === null || compareKeys(child.key, boundary) <= 0) {
        this.removeChild(node, child, !quiet);
      } else {
        child.pinned = true;
      }
    }
    for (const entry of collected) {
      if (node.byKey.has(entry.key)) continue;
      const added = this.addChild(node, entry);
      const wasInView = !oldMore || (oldCursor !== null && compareKeys(entry.key, oldCursor) <= 0);
      if (!quiet && wasInView) flash(added, 'added');
    }
    node.cursor = after;
    node.more = answer.more;
    node.total = answer.total;
    if (node.path !== '/' && !node.leaf && node.count !== answer.total && answer.total > 0) {
      node.count = answer.total;
      node.countEl.textContent = plural(node.count, 'child', 'children');
    }
    this.renderStatus(node);
  }

  // The root has no parent listing to learn from, so its own answer says whether it is a leaf.
  syncRoot(answer, quiet) {
    const root = this.root;
    const leaf = answer.exists && answer.value !== null;
    const changed = leaf !== root.leaf || (leaf && JSON.stringify(answer.value) !== JSON.stringify(root.value))
      || (!leaf && root.count !== answer.total);
    root.leaf = leaf;
    root.value = leaf ? answer.value : null;
    root.truncated = Boolean(answer.truncated);
    root.bytes = answer.bytes || 0;
    root.count = leaf ? 0 : answer.total;
    if (changed && !root.editing) fillRow(root, this);
    if (changed && !quiet) flash(root, 'changed');
  }

  /// The change feed named these paths: refresh every node on screen at, above or below them.
  changed(paths) {
    for (const path of paths) {
      for (const node of [...this.expanded]) {
        if (isAtOrAbove(node.path, path)) {
          this.schedule(node, splitPath(path)[splitPath(node.path).length]);
        } else if (isAtOrAbove(path, node.path)) {
          this.schedule(node);
        }
      }
    }
  }

  /// Reads `node`'s children now, for a change this page just made and wants to show at once.
  async refreshNow(node) {
    if (!node.expanded) return;
    if (node.loading) await node.loading;
    await this.sync(node, new Set(), false);
  }

  /// After the feed reconnects: events may have been missed, so everything on screen is read again.
  refreshAll() {
    for (const node of [...this.expanded]) this.schedule(node);
  }

  schedule(node, hintKey) {
    const state = node.refresh || (node.refresh = { timer: 0, running: false, queued: false, lastAt: 0, hints: new Set() });
    if (hintKey !== undefined) state.hints.add(hintKey);
    if (state.timer) return;
    if (state.running) {
      state.queued = true;
      return;
    }
    const wait = Math.max(0, state.lastAt + REFRESH_GAP_MS - Date.now());
    state.timer = setTimeout(() => this.runRefresh(node, state), wait);
  }

  async runRefresh(node, state) {
    state.timer = 0;
    if (node.refresh !== state || !node.expanded) return;
    if (node.loading) await node.loading;
    state.running = true;
    state.lastAt = Date.now();
    const hints = state.hints;
    state.hints = new Set();
    try {
      await this.sync(node, hints, false);
    } catch (error) {
      // The next change or the feed's reconnect tries again; a toast per failed refresh would flood.
      console.warn(`Refreshing ${node.path} failed: ${error.message}`);
    } finally {
      state.running = false;
      if (state.queued && node.refresh === state) {
        state.queued = false;
        this.schedule(node);
      }
    }
  }

  // MARK: Editing

  async startEdit(node) {
    if (node.editing || !node.valueEl) return;
    if (node.truncated) {
      // The listing holds the first characters only: edit the whole value.
      try {
        node.value = await api.get(restUrl(this.ns, node.path));
        node.truncated = false;
      } catch (error) {
        toast(`${node.path} could not be read for editing: ${error.message}`, 'error');
        return;
      }
    }
    node.editing = true;
    node.row.classList.add('editing');
    editInPlace(node.valueEl, {
      value: node.value,
      label: `New value for ${node.path}. Enter saves, Escape cancels.`,
      save: async (value) => {
        try {
          await this.actions.save(node, value);
        } catch (error) {
          toast(`${node.path} was not saved: ${error.message}`, 'error');
          throw error;
        }
        if (value !== null && typeof value !== 'object') node.value = value;
      },
      done: (saved, refocus) => {
        node.editing = false;
        node.row.classList.remove('editing');
        fillRow(node, this);
        if (refocus) (node.valueEl || node.toggleEl).focus?.();
        // Objects and null change the row's kind; the parent's listing knows how it looks now.
        if (saved) this.schedule(node.parent || node, node.parent ? node.key : undefined);
      },
    });
  }

  // MARK: Jumping to a path

  /// Expands the tree down to `path`, loading rows beyond the first page when needed, and selects it.
  async reveal(path) {
    await this.ready;
    if (this.missingNamespace) return false;
    let node = this.root;
    try {
      for (const key of splitPath(path)) {
        if (node.leaf) return this.notFound(path, node);
        await this.expand(node);
        const child = node.byKey.get(key) || await this.pin(node, key);
        if (!child) return this.notFound(path, node);
        node = child;
      }
    } catch (error) {
      toast(`${path} could not be shown: ${error.message}`, 'error');
      return false;
    }
    this.select(node);
    return true;
  }

  // A row learnt about outside the paged listing, placed where it belongs in key order.
  async pin(parent, key) {
    const answer = await this.page(childPath(parent.path, key), null, 1);
    if (!answer.exists || !parent.expanded) return null;
    if (parent.byKey.has(key)) return parent.byKey.get(key);
    const entry = answer.value !== null
      ? { key, leaf: true, value: answer.value, truncated: answer.truncated, bytes: answer.bytes }
      : { key, leaf: false, count: answer.total };
    const node = this.addChild(parent, entry);
    node.pinned = true;
    this.renderStatus(parent);
    return node;
  }

  notFound(path, closest) {
    toast(`Nothing is stored at ${path}. Showing ${closest.path}, the closest location that exists.`, 'error');
    this.select(closest);
    return false;
  }

  select(node) {
    this.target?.row.classList.remove('target');
    this.target = node;
    node.row.classList.add('target');
    node.row.scrollIntoView({ block: 'nearest' });
    node.row.querySelector('.value, .toggle, .add-child')?.focus({ preventScroll: true });
  }
}
