// Modal dialogs are native <dialog> elements: they trap focus, close on Escape and restore focus to
// the control that opened them without any code here.

import { h, icon } from './dom.js';

/// Asks before something destructive. With `requireText`, the OK button stays disabled until the user
/// types that text (deleting a whole namespace). Resolves true when confirmed.
export function confirmAction({ title, message, okLabel = 'Delete', requireText = null, danger = true }) {
  const dialog = document.getElementById('confirm-dialog');
  const ok = document.getElementById('confirm-ok');
  const nameField = document.getElementById('confirm-name-field');
  const nameInput = document.getElementById('confirm-name');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-message').replaceChildren(message);
  ok.textContent = okLabel;
  ok.className = danger ? 'button danger' : 'button primary';
  nameField.hidden = !requireText;
  nameInput.value = '';
  document.getElementById('confirm-name-hint').textContent = requireText ? `Type ${requireText} to confirm.` : '';
  const sync = () => { ok.disabled = Boolean(requireText) && nameInput.value !== requireText; };
  sync();
  nameInput.oninput = sync;
  dialog.returnValue = '';
  dialog.showModal();
  (requireText ? nameInput : document.getElementById('confirm-cancel')).focus();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
  });
}

// Wired once: the confirm dialog's buttons and form live in index.html.
export function installConfirmDialog() {
  const dialog = document.getElementById('confirm-dialog');
  dialog.querySelector('form').addEventListener('submit', (event) => {
    event.preventDefault();
    if (!document.getElementById('confirm-ok').disabled) dialog.close('ok');
  });
  document.getElementById('confirm-cancel').addEventListener('click', () => dialog.close(''));
}

/// A dialog holding a form: Enter submits, Escape or Cancel closes, a failed submit keeps the dialog
/// open and shows why. `onSubmit` returns a promise; the dialog closes when it resolves.
export function formDialog({ id, title, description, fields, submitLabel, submitId, onSubmit }) {
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const submit = h('button', { type: 'submit', class: 'button primary', id: submitId }, submitLabel);
  const cancel = h('button', { type: 'button', class: 'button' }, 'Cancel');
  const form = h('form', { class: 'dialog-form', novalidate: true },
    h('header', { class: 'dialog-header' },
      h('h2', { id: `${id}-title` }, title),
      h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close dialog', onclick: () => dialog.close() }, icon('close'))),
    description ? h('p', { class: 'dialog-description' }, description) : null,
    fields, error,
    h('footer', { class: 'dialog-actions' }, cancel, submit));
  const dialog = h('dialog', { id, 'aria-labelledby': `${id}-title` }, form);
  cancel.addEventListener('click', () => dialog.close());

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (submit.disabled) return;
    submit.disabled = true;
    error.hidden = true;
    try {
      await onSubmit();
      dialog.close();
    } catch (failure) {
      error.textContent = failure.message;
      error.hidden = false;
    } finally {
      submit.disabled = false;
    }
  });

  return {
    dialog,
    form,
    open() {
      error.hidden = true;
      dialog.showModal();
      form.querySelector('input, textarea, select')?.focus();
    },
    close() { dialog.close(); },
  };
}

/// A labelled form field: the label is a real <label> so clicking it focuses the control and screen
/// readers announce it.
export function field(label, control, hint) {
  const hintElement = hint ? h('span', { class: 'field-hint', id: `${control.id}-hint` }, hint) : null;
  if (hintElement) control.setAttribute('aria-describedby', hintElement.id);
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintElement);
}
