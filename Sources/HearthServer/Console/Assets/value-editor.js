// Editing a leaf where it is shown: the value's element gives way to an input until Enter saves or
// Escape (or leaving the field) cancels.

import { h } from './dom.js';
import { editableText, parseInput } from './format.js';

/// Replaces `shown` with an input holding `value`. `save(parsed)` is awaited on Enter; when it throws
/// the input stays open for another try. `done(saved)` runs once the original element is back.
export function editInPlace(shown, { value, label, save, done }) {
  const text = editableText(value);
  const input = h('input', {
    class: 'value-editor', value: text, spellcheck: 'false', autocomplete: 'off', 'aria-label': label,
    size: Math.min(60, Math.max(12, text.length + 2)),
  });
  shown.replaceWith(input);
  input.focus();
  input.select();
  let saving = false;
  let finished = false;

  const finish = (saved, refocus) => {
    if (finished) return;
    finished = true;
    if (input.isConnected) input.replaceWith(shown);
    done(saved, refocus);
  };

  input.addEventListener('keydown', async (event) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      // Kept from dialogs or other listeners further up: Escape here means only "stop editing".
      event.stopPropagation();
      finish(false, true);
    } else if (event.key === 'Enter' && !saving) {
      event.preventDefault();
      saving = true;
      input.readOnly = true;
      try {
        await save(parseInput(input.value));
        finish(true, true);
      } catch {
        saving = false;
        input.readOnly = false;
        input.focus();
      }
    }
  });
  // Clicking elsewhere abandons the edit, as Escape does; a save under way is left to finish.
  input.addEventListener('blur', () => { if (!saving) finish(false, false); });
}
