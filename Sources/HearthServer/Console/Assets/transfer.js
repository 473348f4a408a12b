// Moving whole subtrees in and out as files. Both go through the database's REST API: export reads
// with format=export (priorities kept), import is one PUT whose upload progress the page shows.

import { csrf, request, restUrl } from './api.js';
import { h, toast } from './dom.js';
import { field } from './dialog.js';
import { formatBytes } from './format.js';
import { lastKey } from './paths.js';

export async function exportNode(ns, path) {
  try {
    const response = await request('GET', restUrl(ns, path, { format: 'export' }), { raw: true });
    const blob = new Blob([await response.blob()], { type: 'application/json' });
    const name = `${ns}-${lastKey(path) ?? 'root'}.json`;
    const url = URL.createObjectURL(blob);
    const link = h('a', { href: url, download: name, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    // The download has started by now; keep the URL a while for slow browsers, then free the memory.
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    toast(`Exported ${path} (${formatBytes(blob.size)}) as ${name}.`, 'success');
  } catch (error) {
    toast(`${path} could not be exported: ${error.message}`, 'error');
  }
}

/// The import dialog: choosing a file starts the upload, since the dialog exists only to pick one.
export class ImportDialog {
  constructor(ns, { onImported }) {
    this.ns = ns;
    this.onImported = onImported;
    this.path = '/';
    this.request = null;
    this.title = h('h2', { id: 'import-dialog-title' }, 'Import JSON');
    this.description = h('p', { class: 'dialog-description' });
    this.file = h('input', { id: 'import-file', type: 'file', accept: '.json,application/json' });
    this.progress = h('progress', { id: 'import-progress', max: '1', value: '0', 'aria-label': 'Upload progress' });
    this.status = h('p', { id: 'import-status', class: 'import-status', role: 'status' }, 'No file chosen yet.');
    this.closeButton = h('button', { type: 'button', class: 'button', id: 'import-close' }, 'Close');
    this.dialog = h('dialog', { id: 'import-dialog', 'aria-labelledby': 'import-dialog-title' },
      h('div', { class: 'dialog-form' },
        h('header', { class: 'dialog-header' }, this.title),
        this.description,
        field('JSON file', this.file, 'The upload starts as soon as you choose a file.'),
        this.progress, this.status,
        h('footer', { class: 'dialog-actions' }, this.closeButton)));
    this.file.addEventListener('change', () => { if (this.file.files[0]) this.upload(this.file.files[0]); });
    this.closeButton.addEventListener('click', () => this.dialog.close());
    // Closing while uploading cancels; the server applies a PUT whole or not at all.
    this.dialog.addEventListener('close', () => this.request?.abort());
  }

  open(path) {
    this.path = path;
    this.title.textContent = `Import JSON into ${path}`;
    this.description.textContent = `The file's contents replace everything at ${path} in ${this.ns}. Export ${path} first if you might want it back.`;
    this.file.value = '';
    this.file.disabled = false;
    this.progress.value = 0;
    this.status.textContent = 'No file chosen yet.';
    this.status.className = 'import-status';
    this.closeButton.textContent = 'Close';
    this.dialog.showModal();
    this.file.focus();
  }

  upload(file) {
    const xhr = new XMLHttpRequest();
    this.request = xhr;
    const path = this.path;
    this.file.disabled = true;
    this.closeButton.textContent = 'Cancel upload';
    this.progress.max = file.size || 1;
    this.progress.value = 0;
    this.setStatus(`Uploading ${file.name}: 0 B of ${formatBytes(file.size)} sent.`);
    xhr.open('PUT', restUrl(this.ns, path));
    xhr.setRequestHeader('Content-Type', 'application/json');
    if (csrf()) xhr.setRequestHeader('X-Hearth-CSRF', csrf());
    xhr.upload.addEventListener('progress', (event) => {
      const total = event.lengthComputable ? event.total : file.size;
      this.progress.max = total || 1;
      this.progress.value = event.loaded;
      const percent = total ? Math.round((event.loaded / total) * 100) : 0;
      this.setStatus(`Uploading ${file.name}: ${formatBytes(event.loaded)} of ${formatBytes(total)} sent (${percent}%).`);
    });
    xhr.addEventListener('load', () => {
      this.finish();
      if (xhr.status >= 200 && xhr.status < 300) {
        this.progress.value = this.progress.max;
        this.setStatus(`Imported ${file.name} (${formatBytes(file.size)}) into ${path}.`, 'success');
        this.onImported(path);
      } else {
        this.setStatus(`The server refused the import: ${serverError(xhr)}`, 'error');
      }
    });
    xhr.addEventListener('error', () => {
      this.finish();
      this.setStatus('The upload failed: the server could not be reached. Check that hearth serve is running and try again.', 'error');
    });
    xhr.addEventListener('abort', () => {
      this.finish();
      this.setStatus('Upload cancelled. Nothing was changed.', 'error');
    });
    xhr.send(file);
  }

  finish() {
    this.request = null;
    this.file.disabled = false;
    this.file.value = '';
    this.closeButton.textContent = 'Close';
  }

  setStatus(text, kind) {
    this.status.textContent = text;
    this.status.className = kind ? `import-status ${kind}` : 'import-status';
  }
}

function serverError(xhr) {
  try {
    const body = JSON.parse(xhr.responseText);
    const message = typeof body.error === 'string' ? body.error : body.error?.message;
    if (message) return message;
  } catch { /* not JSON */ }
  return `status ${xhr.status}.`;
}
