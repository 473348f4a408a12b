// The Rules screen: editor, check and deploy, the history of deployed versions with diffs and
// rollback, and the simulator beside them.

import { api, apiUrl } from './api.js';
import { confirmAction } from './dialog.js';
import { emptyState, h, icon, toast } from './dom.js';
import { diffLines, hunks } from './diff.js';
import { CodeEditor } from './editor.js';
import { formatBytes, formatDateTime, relativeTime } from './format.js';
import { createSimulator } from './simulator.js';

export function mount(container, route) {
  const ns = route.ns;
  const url = (endpoint) => apiUrl(`/console/api/rules${endpoint}`, { ns });
  let deployed = { source: '', format: 'json', history: [] };

  const format = h('select', { id: 'rules-format' }, h('option', { value: 'json' }, 'JSON'), h('option', { value: 'bolt' }, 'Bolt'));
  const check = h('button', { id: 'rules-check', type: 'button', class: 'button' }, 'Check');
  const deploy = h('button', { id: 'rules-deploy', type: 'button', class: 'button primary' }, 'Deploy');
  const stateLine = h('span', { id: 'rules-state', class: 'muted' });
  const error = h('div', { id: 'rules-error', class: 'rules-error', role: 'alert', hidden: true });
  const status = h('div', { id: 'rules-status', class: 'rules-status', role: 'status', hidden: true });
  const editor = new CodeEditor({ id: 'rules-editor', label: 'Rules source', describedBy: 'rules-editor-help', onChange: () => updateState() });
  const history = h('ol', { id: 'rules-history', class: 'history-list', 'aria-label': 'Deployed versions' });
  const diffTitle = h('h2', { id: 'rules-diff-title' }, 'Diff');
  const diffAgainst = h('select', { id: 'diff-against' }, h('option', { value: 'editor' }, 'the editor text'), h('option', { value: 'current' }, 'the current version'));
  const diffOutput = h('div', { id: 'rules-diff', class: 'diff-output', 'aria-labelledby': 'rules-diff-title' });
  const diffPanel = h('section', { id: 'rules-diff-panel', class: 'panel diff-panel', hidden: true },
    h('header', { class: 'panel-header' }, diffTitle,
      h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Close diff', onclick: () => { diffPanel.hidden = true; } }, icon('close'))),
    h('div', { class: 'toolbar diff-toolbar' }, h('label', { class: 'inline-field', for: 'diff-against' }, 'Compare with'), diffAgainst,
      h('span', { class: 'diff-legend' }, h('span', { class: 'diff-add' }, '+ added'), h('span', { class: 'diff-del' }, '− removed'))),
    diffOutput);
  let diffVersion = null;

  const simulator = createSimulator({ ns, editor, format: () => format.value, isDirty: () => isDirty() });

  container.append(h('section', { class: 'view rules-view' },
    h('header', { class: 'view-header' }, h('div', {}, h('h1', {}, 'Rules'), h('p', { class: 'view-subtitle' }, `Namespace ${ns}`))),
    h('div', { class: 'rules-grid' },
      h('div', { class: 'rules-main' },
        h('section', { class: 'panel editor-panel' },
          h('div', { class: 'toolbar' },
            h('label', { class: 'inline-field', for: 'rules-format' }, 'Format'), format, check, deploy, stateLine),
          editor.element,
          h('p', { id: 'rules-editor-help', class: 'hint' }, 'Tab inserts two spaces. To leave the editor with the keyboard press Escape, then Tab (or Shift+Tab).'),
          error, status),
        diffPanel),
      h('aside', { class: 'rules-side' },
        h('section', { class: 'panel' }, h('header', { class: 'panel-header' }, h('h2', {}, 'History')), history),
        h('section', { class: 'panel' }, h('header', { class: 'panel-header' }, h('h2', {}, 'Simulator')), simulator)))));

  const isDirty = () => editor.value !== deployed.source || format.value !== deployed.format;

  function updateState() {
    const current = deployed.history.find((version) => version.current);
    const where = current ? `Version ${current.version} is deployed.` : 'Nothing deployed from the console yet.';
    stateLine.textContent = isDirty() ? `${where} The editor has changes that are not deployed.` : where;
  }

  function showError(problem) {
    error.replaceChildren(h('strong', {}, `Line ${problem.line}, column ${problem.column}: `), problem.message);
    error.hidden = false;
    status.hidden = true;
    editor.mark({ error: problem.line });
    editor.goTo(problem.line, problem.column);
  }

  function showStatus(...content) {
    status.replaceChildren(...content);
    status.hidden = false;
  }

  function clearMessages() {
    error.hidden = true;
    error.replaceChildren();
    status.hidden = true;
    editor.mark({ error: null });
  }

  async function load() {
    try {
      deployed = await api.get(url(''));
      editor.value = deployed.source || '';
      format.value = deployed.format || 'json';
      renderHistory();
      updateState();
    } catch (failure) {
      history.replaceChildren(h('li', { class: 'history-empty' }, `The rules could not be loaded: ${failure.message}`));
    }
  }

  async function refreshHistory() {
    const answer = await api.get(url(''));
    deployed = { ...answer, source: answer.source, format: answer.format };
    renderHistory();
    updateState();
  }

  // A rejected source comes back as 200 {ok: false} from check but 400 from deploy; both carry the place.
  async function submit(button, endpoint) {
    clearMessages();
    button.disabled = true;
    try {
      const answer = await api.post(url(endpoint), { source: editor.value, format: format.value });
      if (answer.ok) return answer;
      showError(answer.error);
      return null;
    } catch (failure) {
      if (failure.body?.error?.line) showError(failure.body.error);
      else showStatus(h('span', { class: 'form-error' }, failure.message));
      return null;
    } finally {
      button.disabled = false;
    }
  }

  check.addEventListener('click', async () => {
    const answer = await submit(check, '/check');
    if (!answer) return;
    const compiled = format.value === 'bolt' && answer.json
      ? h('details', { class: 'compiled' }, h('summary', {}, 'Compiled JSON rules'), h('pre', {}, answer.json)) : null;
    showStatus(h('span', { class: 'ok-text' }, 'No errors: the rules compile. Deploy them to put them in force.'), compiled);
  });

  deploy.addEventListener('click', async () => {
    const answer = await submit(deploy, '/deploy');
    if (!answer) return;
    showStatus(h('span', { class: 'ok-text' }, `Deployed as version ${answer.version}. The new rules apply to every request from now on.`));
    toast(`Rules deployed as version ${answer.version}.`, 'success');
    try {
      await refreshHistory();
    } catch (failure) {
      toast(`The history could not be reloaded: ${failure.message}`, 'error');
    }
  });

  function renderHistory() {
    const versions = deployed.history || [];
    if (!versions.length) {
      history.replaceChildren(h('li', { class: 'history-empty' },
        emptyState('No versions yet.', 'Every deploy from here is kept as a version you can compare with and roll back to.')));
      return;
    }
    history.replaceChildren(...versions.map((version) => h('li', { class: `history-item${version.current ? ' current' : ''}`, 'data-version': String(version.version) },
      h('div', { class: 'history-text' },
        h('span', { class: 'history-title' }, `Version ${version.version}`, version.current ? h('span', { class: 'badge badge-accent' }, 'Current') : null),
        h('span', { class: 'history-meta' },
          h('time', { datetime: new Date(version.deployedAt).toISOString(), title: formatDateTime(version.deployedAt) }, relativeTime(version.deployedAt)),
          ` · ${String(version.format).toUpperCase()} · ${formatBytes(version.bytes)}`)),
      h('div', { class: 'history-actions' },
        h('button', { type: 'button', class: 'button small diff-version', 'aria-label': `Diff version ${version.version}`, onclick: () => showDiff(version.version) }, 'Diff'),
        h('button', {
          type: 'button', class: 'button small rollback-version', disabled: version.current,
          'aria-label': `Roll back to version ${version.version}`, title: version.current ? 'This version is already deployed' : null,
          onclick: () => rollBack(version.version),
        }, 'Roll back')))));
  }

  async function showDiff(version) {
    diffVersion = version;
    diffPanel.hidden = false;
    diffOutput.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
    try {
      const old = await api.get(apiUrl('/console/api/rules/version', { ns, version }));
      const against = diffAgainst.value === 'editor' ? editor.value : deployed.source;
      const label = diffAgainst.value === 'editor' ? 'the editor text' : 'the current version';
      diffTitle.textContent = `Version ${version} → ${label}`;
      renderDiff(old.source, against, version, label);
    } catch (failure) {
      diffOutput.replaceChildren(h('p', { class: 'form-error' }, `Version ${version} could not be loaded: ${failure.message}`));
    }
    diffPanel.scrollIntoView({ block: 'nearest' });
  }

  diffAgainst.addEventListener('change', () => { if (diffVersion !== null) showDiff(diffVersion); });

  function renderDiff(oldText, newText, version, label) {
    const groups = hunks(diffLines(oldText, newText));
    if (!groups.length) {
      diffOutput.replaceChildren(h('p', { class: 'muted diff-same' }, `No differences: version ${version} is the same as ${label}.`));
      return;
    }
    const sign = { add: '+', del: '-', same: ' ' };
    const lines = [h('div', { class: 'diff-line diff-file' }, `--- version ${version}`), h('div', { class: 'diff-line diff-file' }, `+++ ${label}`)];
    for (const group of groups) {
      lines.push(h('div', { class: 'diff-line diff-hunk' }, group.header));
      for (const op of group.lines) {
        lines.push(h('div', { class: `diff-line diff-${op.type}` }, h('span', { class: 'diff-sign', 'aria-hidden': 'true' }, sign[op.type]),
          h('span', { class: 'visually-hidden' }, op.type === 'add' ? 'added: ' : op.type === 'del' ? 'removed: ' : ''), op.text));
      }
    }
    diffOutput.replaceChildren(h('pre', { class: 'diff-lines' }, lines));
  }

  async function rollBack(version) {
    const confirmed = await confirmAction({
      title: `Roll back to version ${version}?`,
      message: `Version ${version} is deployed again as a new version and applies at once.${isDirty() ? ' The editor\'s changes that are not deployed will be replaced.' : ''}`,
      okLabel: 'Roll back',
      danger: false,
    });
    if (!confirmed) return;
    try {
      const answer = await api.post(url('/rollback'), { version });
      toast(`Version ${version} is deployed again as version ${answer.version}.`, 'success');
      clearMessages();
      await load();
    } catch (failure) {
      toast(`The rollback failed: ${failure.message}`, 'error');
    }
  }

  format.addEventListener('change', () => updateState());
  load();

  return {
    update: (next) => next.ns === ns,
  };
}
