// The Usage screen: four live charts polled at the resolution of the chosen range, the server's
// current totals, and storage per namespace.

import { api, apiUrl } from './api.js';
import { LineChart } from './chart.js';
import { emptyState, h } from './dom.js';
import { formatBytes, formatDuration, formatNumber } from './format.js';

// Polling faster than the server's step would only fetch the same points again.
const ranges = {
  minute: { label: 'Minute', pollMs: 1000, windowMs: 60 * 1000, seconds: true },
  hour: { label: 'Hour', pollMs: 10 * 1000, windowMs: 60 * 60 * 1000, seconds: false },
  day: { label: 'Day', pollMs: 60 * 1000, windowMs: 24 * 60 * 60 * 1000, seconds: false },
};

const metrics = [
  { id: 'connections', title: 'Connections', format: (v) => formatNumber(Math.round(v * 10) / 10) },
  { id: 'reads', title: 'Reads per second', format: (v) => `${formatNumber(v)}/s` },
  { id: 'writes', title: 'Writes per second', format: (v) => `${formatNumber(v)}/s` },
  { id: 'bytes', title: 'Bytes per second', format: (v) => `${formatBytes(v)}/s` },
];

export function mount(container) {
  let range = 'minute';
  let timer = 0;
  let generation = 0;

  const buttons = Object.entries(ranges).map(([name, { label }]) => h('button', {
    type: 'button', class: 'segment', 'data-range': name, 'aria-pressed': String(name === range), onclick: () => choose(name),
  }, label));
  const rangeControl = h('div', { id: 'usage-range', class: 'segmented', role: 'group', 'aria-label': 'Time range' }, buttons);
  const now = h('dl', { id: 'usage-now', class: 'stat-row' });
  const problem = h('div', { class: 'alert alert-error', role: 'alert', hidden: true });
  const charts = metrics.map((metric) => {
    const chart = new LineChart({ label: `${metric.title} over time`, format: metric.format, binary: metric.id === 'bytes' });
    const current = h('span', { class: 'current', 'aria-live': 'off' }, '—');
    const card = h('section', { class: 'panel chart-card', id: `chart-${metric.id}`, 'aria-label': metric.title },
      h('header', { class: 'chart-header' }, h('h2', {}, metric.title), current), chart.element);
    return { metric, chart, current, card };
  });
  const storage = h('ul', { id: 'storage-list', class: 'bar-list', 'aria-label': 'Storage per namespace' });

  container.append(h('section', { class: 'view usage-view' },
    h('header', { class: 'view-header' }, h('div', {}, h('h1', {}, 'Usage'), h('p', { class: 'view-subtitle' }, 'Whole server, all namespaces')), rangeControl),
    problem, now,
    h('div', { class: 'chart-grid' }, charts.map((chart) => chart.card)),
    h('section', { class: 'panel' }, h('header', { class: 'panel-header' }, h('h2', {}, 'Storage')), storage)));

  function choose(name) {
    range = name;
    for (const button of buttons) button.setAttribute('aria-pressed', String(button.dataset.range === name));
    generation += 1;
    clearTimeout(timer);
    poll();
  }

  // One request at a time: the next is scheduled only when this one is done, so a slow server is
  // never asked twice at once.
  async function poll() {
    const mine = generation;
    try {
      const answer = await api.get(apiUrl('/console/api/usage', { range }));
      if (mine !== generation) return;
      problem.hidden = true;
      render(answer);
    } catch (error) {
      if (mine !== generation) return;
      problem.textContent = `Usage could not be loaded: ${error.message} Retrying.`;
      problem.hidden = false;
    }
    if (mine === generation) timer = setTimeout(poll, ranges[range].pollMs);
  }

  function render(answer) {
    const points = answer.points || [];
    const settings = ranges[range];
    for (const { metric, chart, current } of charts) {
      chart.update(points.map((point) => ({ t: point.t, v: Number(point[metric.id]) || 0 })), settings.windowMs, settings.seconds);
      current.textContent = points.length ? metric.format(Number(points[points.length - 1][metric.id]) || 0) : '—';
    }
    const stats = answer.now || {};
    now.replaceChildren(
      stat('Connections now', formatNumber(stats.connections || 0)),
      stat('Listeners', formatNumber(stats.listeners || 0)),
      stat('Uptime', formatDuration(stats.uptimeSeconds || 0)));
    renderStorage(answer.storage || []);
  }

  function renderStorage(entries) {
    if (!entries.length) {
      storage.replaceChildren(h('li', {}, emptyState('No namespaces hold data yet.', 'Storage per namespace shows here once data is written.')));
      return;
    }
    const sorted = [...entries].sort((a, b) => b.bytes - a.bytes);
    const largest = Math.max(1, sorted[0].bytes);
    storage.replaceChildren(...sorted.map((entry) => {
      const fill = h('span', { class: 'bar-fill' });
      fill.style.width = `${Math.max(0.5, (entry.bytes / largest) * 100)}%`;
      return h('li', { class: 'bar-item', 'data-namespace': entry.namespace },
        h('span', { class: 'bar-label' }, entry.namespace),
        h('span', { class: 'bar', 'aria-hidden': 'true' }, fill),
        h('span', { class: 'bar-value' }, formatBytes(entry.bytes)));
    }));
  }

  poll();
  return {
    unmount() {
      generation += 1;
      clearTimeout(timer);
    },
  };
}

function stat(label, value) {
  return h('div', { class: 'stat' }, h('dt', {}, label), h('dd', {}, value));
}
