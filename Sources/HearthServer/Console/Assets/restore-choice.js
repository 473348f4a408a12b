// Where a restore goes, asked in its confirmation (docs/operations.md): into a new namespace, the
// default, which leaves the live data as it is, or in place over it. Used by a node's History and by
// the list of backups.

import { h } from './dom.js';

/// The two choices as a node for `confirmAction`'s message, and a function that says which is picked.
export function restoreChoice({ ns, path, target }) {
  const newNamespace = h('input', { type: 'radio', name: 'restore-where', value: 'into', id: 'restore-into', checked: true });
  const inPlace = h('input', { type: 'radio', name: 'restore-where', value: 'in-place', id: 'restore-in-place' });
  const node = h('div', {},
    h('p', {}, h('label', { for: 'restore-into' }, newNamespace, ` Into a new namespace, ${target}: the live data stays as it is`)),
    h('p', {}, h('label', { for: 'restore-in-place' }, inPlace,
      ` In place: replaces ${path} in ${ns} now (listeners see it; the restore is itself a change in the history and can be undone the same way)`)));
  return { node, destination: () => (inPlace.checked ? { inPlace: true } : { into: target }) };
}
