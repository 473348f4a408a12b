// The rules simulator: one read or write evaluated by the server against the deployed rules or the
// editor's draft, with the rule that decided it pointed out in the editor.

import { api, apiUrl } from './api.js';
import { h } from './dom.js';
import { field } from './dialog.js';
import { normalizePath } from './paths.js';

export function createSimulator({ ns, editor, format, isDirty }) {
  const operation = h('select', { id: 'sim-operation' },
    h('option', { value: 'read' }, 'read'), h('option', { value: 'set' }, 'set'), h('option', { value: 'update' }, 'update'));
  const path = h('input', { id: 'sim-path', value: '/', spellcheck: 'false', autocomplete: 'off' });
  const uid = h('input', { id: 'sim-uid', placeholder: 'Empty: signed out', spellcheck: 'false', autocomplete: 'off' });
  const claims = h('textarea', { id: 'sim-claims', rows: '2', spellcheck: 'false', placeholder: '{"admin": true}' });
  const value = h('textarea', { id: 'sim-value', rows: '3', spellcheck: 'false', placeholder: '{"name": "Ada"}' });
  const draft = h('input', { id: 'sim-draft', type: 'checkbox' });
  const run = h('button', { id: 'sim-run', type: 'submit', class: 'button primary' }, 'Run');
  const result = h('div', { id: 'sim-result', class: 'sim-result', 'aria-live': 'polite' },
    h('p', { class: 'muted' }, 'Run a simulation to see whether the rules allow it.'));
  const valueField = field('Value (JSON)', value, 'For update: an object of relative paths, e.g. {"name": "Ada", "stats/visits": 3}.');

  const syncValue = () => {
    const reading = operation.value === 'read';
    value.disabled = reading;
    valueField.classList.toggle('is-disabled', reading);
  };
  operation.addEventListener('change', syncValue);
  syncValue();

  const form = h('form', { class: 'simulator', novalidate: true },
    h('div', { class: 'field-row' }, field('Operation', operation), field('Path', path)),
    field('Signed in as UID', uid, 'Leave empty to simulate a signed-out user.'),
    field('Token claims (JSON, optional)', claims),
    valueField,
    h('label', { class: 'checkbox' }, draft, ' Simulate draft (the editor\'s text, not the deployed rules)'),
    h('div', { class: 'form-actions' }, run),
    result);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    let body;
    try {
      body = request();
    } catch (problem) {
      show(h('p', { class: 'form-error', role: 'alert' }, problem.message));
      return;
    }
    run.disabled = true;
    try {
      const answer = await api.post(apiUrl('/console/api/rules/simulate', { ns }), body);
      showAnswer(answer, body);
    } catch (error) {
      show(h('p', { class: 'form-error', role: 'alert' }, `The simulation could not run: ${error.message}`));
    } finally {
      run.disabled = false;
    }
  });

  function request() {
    const body = { operation: operation.value, path: normalizePath(path.value), auth: null };
    if (uid.value.trim()) {
      const token = claims.value.trim() ? parseJSON(claims.value, 'The token claims') : {};
      if (token === null || typeof token !== 'object' || Array.isArray(token)) throw new Error('The token claims must be a JSON object, like {"admin": true}.');
      body.auth = { uid: uid.value.trim(), token };
    }
    if (operation.value !== 'read') {
      if (!value.value.trim()) throw new Error(`Enter the value to ${operation.value}, as JSON.`);
      body.value = parseJSON(value.value, 'The value');
      if (operation.value === 'update' && (body.value === null || typeof body.value !== 'object' || Array.isArray(body.value))) {
        throw new Error('An update\'s value must be an object of relative paths, like {"name": "Ada"}.');
      }
    }
    if (draft.checked) {
      body.source = editor.value;
      body.format = format();
    }
    return body;
  }

  function show(...content) {
    result.replaceChildren(...content);
  }

  function showAnswer(answer, body) {
    const who = body.auth ? `uid ${body.auth.uid}` : 'a signed-out user';
    const which = body.source !== undefined ? 'the draft in the editor' : 'the deployed rules';
    const rule = answer.rule;
    const facts = rule ? h('dl', { class: 'facts' },
      h('dt', {}, 'Deciding rule'), h('dd', {}, h('code', {}, rule.kind), ' at ', h('code', {}, rule.pattern)),
      h('dt', {}, 'Evaluated at'), h('dd', {}, h('code', {}, rule.path)),
      h('dt', {}, 'Expression'), h('dd', {}, h('code', { class: 'expression' }, rule.expression)),
      rule.line ? [h('dt', {}, 'Line'), h('dd', {}, `${rule.line}${!body.source && isDirty() ? ' (of the deployed rules, not the edited text)' : ''}`)] : null)
      : h('p', { class: 'muted' }, answer.allowed ? '' : 'No rule granted access, so it is denied by default.');
    show(
      h('p', { class: `verdict ${answer.allowed ? 'allowed' : 'denied'}` }, answer.allowed ? 'Allowed' : 'Denied'),
      h('p', { class: 'verdict-summary' }, `${body.operation} at ${body.path} by ${who}, checked against ${which}.`),
      facts,
      answer.explanation ? h('p', { class: 'explanation' }, answer.explanation) : null);
    editor.mark({ rule: rule && rule.line ? rule.line : null });
    if (rule && rule.line) editor.scrollToLine(rule.line);
  }

  return form;
}

function parseJSON(text, what) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${what} is not valid JSON: ${error.message}`);
  }
}
