// How one row of the data tree looks: toggle, key, value or child count, and its actions. Rows are
// updated in place so focus, and anyone holding a reference to a row's elements, survive refreshes.

import { h, icon } from './dom.js';
import { formatValue, plural, valueType } from './format.js';

// Long enough to notice, and at least the 1.5 s the tests rely on.
const FLASH_MS = 2000;

/// Brings a row's content up to date. Its elements are kept across updates (only a change between
/// leaf and inner node rebuilds the part that differs), so focus and references to them survive the
/// live refreshes.
export function fillRow(node, tree) {
  const kind = node.leaf ? 'leaf' : 'inner';
  if (node.kind !== kind) buildRow(node, kind, tree);
  if (node.toggleEl.tagName === 'BUTTON') {
    node.toggleEl.setAttribute('aria-expanded', String(node.expanded));
    node.toggleEl.setAttribute('aria-label', `${node.expanded ? 'Collapse' : 'Expand'} ${node.path}`);
  }
  if (node.leaf) {
    const text = formatValue(node.value) + (node.truncated ? ` … (${node.bytes.toLocaleString()} bytes in all)` : '');
    node.valueEl.textContent = text;
    node.valueEl.className = `value type-${valueType(node.value)}`;
    node.valueEl.title = `${text}\n(click to edit)`;
    node.valueEl.setAttribute('aria-label', `Value of ${node.path}: ${text}. Press Enter to edit.`);
  } else {
    node.countEl.textContent = node.count ? plural(node.count, 'child', 'children') : 'empty';
  }
}

function buildRow(node, kind, tree) {
  const hadFocus = node.row.contains(document.activeElement);
  node.kind = kind;
  node.toggleEl = kind === 'leaf' || node.path === '/'
    ? h('span', { class: 'toggle-spacer', 'aria-hidden': 'true' })
    : h('button', { type: 'button', class: 'toggle icon-button', onclick: () => tree.toggle(node) }, icon('chevron'));
  const key = h('span', { class: node.path === '/' ? 'key root-key' : 'key' }, node.path === '/' ? tree.ns : node.key);
  let shown;
  if (kind === 'leaf') {
    node.valueEl = h('span', {
      tabindex: '0', role: 'button',
      onclick: () => tree.startEdit(node),
      onkeydown: (event) => {
        if (event.key === 'Enter' || event.key === 'F2' || event.key === ' ') {
          event.preventDefault();
          tree.startEdit(node);
        }
      },
    });
    node.countEl = null;
    shown = [h('span', { class: 'colon' }, ':'), node.valueEl];
  } else {
    node.countEl = h('span', { class: 'count' });
    node.valueEl = null;
    shown = [node.countEl];
  }
  node.actionsEl = node.actionsEl || rowActions(node, tree.actions);
  node.row.replaceChildren(node.toggleEl, key, ...shown, node.actionsEl);
  if (hadFocus && !node.row.contains(document.activeElement)) (node.valueEl || node.toggleEl).focus?.();
}

function rowActions(node, actions) {
  const action = (name, iconName, label, run) => h('button', {
    type: 'button', class: `${name} icon-button`, 'aria-label': `${label} ${node.path}`, title: `${label} ${node.path}`,
    onclick: () => run(node),
  }, icon(iconName));
  return h('span', { class: 'actions' },
    action('add-child', 'plus', 'Add a child to', actions.addChild),
    action('delete-node', 'trash', 'Delete', actions.remove),
    action('export-node', 'download', 'Export', actions.exportNode),
    action('import-node', 'upload', 'Import JSON into', actions.importInto),
    action('history-node', 'history', 'History of', actions.history));
}

/// Marks a row added, changed or removed for FLASH_MS; flashing again restarts the animation.
export function flash(node, kind) {
  const row = node.row;
  row.classList.remove('flash-added', 'flash-changed', 'flash-removed');
  void row.offsetWidth; // restarts the CSS animation when a row flashes again
  row.classList.add(`flash-${kind}`);
  clearTimeout(node.flashTimer);
  node.flashTimer = setTimeout(() => row.classList.remove(`flash-${kind}`), FLASH_MS);
}
