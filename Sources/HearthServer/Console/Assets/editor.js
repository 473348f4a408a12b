// A plain textarea made fit for rules: line numbers that scroll with it, two-space Tab, kept
// indentation, and marks on the error line and the line of the rule the simulator says decided.
// Lines never wrap, so line N of the text is always row N of the gutter.

import { h } from './dom.js';

const LINE_HEIGHT = 20; // px; must match .code-input's line-height in views.css
const PADDING_TOP = 8; // px; must match .code-input's padding-top

export class CodeEditor {
  constructor({ id, label, describedBy, onChange }) {
    this.onChange = onChange;
    this.textarea = h('textarea', {
      id, class: 'code-input', spellcheck: 'false', wrap: 'off', autocapitalize: 'off', autocomplete: 'off',
      'aria-label': label, 'aria-describedby': describedBy,
    });
    this.lines = h('div', { class: 'gutter-lines' });
    this.gutter = h('div', { class: 'gutter', 'aria-hidden': 'true' }, this.lines);
    this.bands = h('div', { class: 'line-bands', 'aria-hidden': 'true' });
    this.element = h('div', { class: 'code-editor' }, this.gutter, h('div', { class: 'code-area' }, this.bands, this.textarea));
    this.lineCount = 0;
    this.marks = { error: null, rule: null };
    // After Escape, Tab leaves the editor instead of indenting, so keyboard users are never trapped.
    this.tabLeaves = false;

    this.textarea.addEventListener('input', () => {
      this.renderGutter();
      if (this.marks.error || this.marks.rule) this.mark({ error: null, rule: null });
      this.onChange?.();
    });
    this.textarea.addEventListener('scroll', () => this.syncScroll());
    this.textarea.addEventListener('keydown', (event) => this.onKey(event));
    this.renderGutter();
  }

  get value() { return this.textarea.value; }

  set value(text) {
    this.textarea.value = text;
    this.textarea.scrollTop = 0;
    this.renderGutter();
    this.mark({ error: null, rule: null });
  }

  onKey(event) {
    const plain = !event.altKey && !event.ctrlKey && !event.metaKey;
    if (event.key === 'Escape') {
      this.tabLeaves = true;
      return;
    }
    if (event.key === 'Tab' && plain && !event.shiftKey) {
      if (this.tabLeaves) {
        this.tabLeaves = false;
        return;
      }
      event.preventDefault();
      this.insert('  ');
    } else if (event.key === 'Enter' && plain && !event.shiftKey) {
      event.preventDefault();
      const text = this.textarea.value;
      const lineStart = text.lastIndexOf('\n', this.textarea.selectionStart - 1) + 1;
      const indent = /^[ \t]*/.exec(text.slice(lineStart))[0];
      this.insert(`\n${indent}`);
    }
    this.tabLeaves = false;
  }

  // execCommand keeps the browser's undo history; setRangeText is the fallback where it is missing.
  insert(text) {
    if (!document.execCommand('insertText', false, text)) {
      const { selectionStart, selectionEnd } = this.textarea;
      this.textarea.setRangeText(text, selectionStart, selectionEnd, 'end');
      this.textarea.dispatchEvent(new Event('input'));
    }
  }

  renderGutter() {
    const count = this.textarea.value.split('\n').length;
    if (count === this.lineCount) return;
    const numbers = [];
    for (let line = 1; line <= count; line += 1) numbers.push(h('div', { 'data-line': String(line) }, String(line)));
    this.lines.replaceChildren(...numbers);
    this.lineCount = count;
    this.mark(this.marks);
  }

  syncScroll() {
    this.lines.style.transform = `translateY(${-this.textarea.scrollTop}px)`;
    this.bands.style.transform = `translate(${-this.textarea.scrollLeft}px, ${-this.textarea.scrollTop}px)`;
  }

  /// `{ error, rule }`: line numbers (from 1) to mark, or null to clear; omitted kinds are kept.
  mark(marks) {
    this.marks = { ...this.marks, ...marks };
    for (const element of this.lines.querySelectorAll('.error-line, .rule-line')) element.classList.remove('error-line', 'rule-line');
    const bands = [];
    for (const [kind, line] of Object.entries(this.marks)) {
      if (!line) continue;
      this.lines.querySelector(`[data-line="${line}"]`)?.classList.add(`${kind}-line`);
      const band = h('div', { class: `line-band band-${kind}` });
      band.style.top = `${PADDING_TOP + (line - 1) * LINE_HEIGHT}px`;
      bands.push(band);
    }
    this.bands.replaceChildren(...bands);
    this.syncScroll();
  }

  /// Puts the caret at `line`, `column` (both from 1) and scrolls it into view.
  goTo(line, column = 1) {
    const lines = this.textarea.value.split('\n');
    const row = Math.min(Math.max(line, 1), lines.length);
    let offset = 0;
    for (let index = 0; index < row - 1; index += 1) offset += lines[index].length + 1;
    offset += Math.min(Math.max(column - 1, 0), lines[row - 1].length);
    this.textarea.focus({ preventScroll: true });
    this.textarea.setSelectionRange(offset, offset);
    this.scrollToLine(row);
  }

  scrollToLine(line) {
    const top = PADDING_TOP + (line - 1) * LINE_HEIGHT;
    const visible = this.textarea.clientHeight;
    if (top < this.textarea.scrollTop || top + LINE_HEIGHT > this.textarea.scrollTop + visible) {
      this.textarea.scrollTop = Math.max(0, top - visible / 3);
    }
    this.syncScroll();
  }
}
