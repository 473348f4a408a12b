// A small time-series line chart drawn as SVG by hand: y grid with labels, clock times on x, the
// latest window of points, and a tooltip for the point under the pointer.

import { h, svg } from './dom.js';
import { formatClock } from './format.js';

const HEIGHT = 150;
const MARGIN = { top: 10, right: 12, bottom: 22, left: 56 };

export class LineChart {
  /// `binary`: the axis top is rounded in powers of 1024, so byte labels read 5 KB rather than 4.88 KB.
  constructor({ label, format, binary = false }) {
    this.format = format;
    this.binary = binary;
    this.points = [];
    this.windowMs = 60000;
    this.withSeconds = true;
    this.grid = svg('g', { class: 'chart-grid' });
    this.area = svg('path', { class: 'area', d: '' });
    this.series = svg('path', { class: 'series', d: '' });
    this.cursor = svg('line', { class: 'chart-cursor', y1: MARGIN.top, y2: HEIGHT - MARGIN.bottom, visibility: 'hidden' });
    this.dot = svg('circle', { class: 'chart-dot', r: 3.5, visibility: 'hidden' });
    this.svg = svg('svg', { class: 'chart-svg', role: 'img', 'aria-label': label, height: HEIGHT },
      this.grid, this.area, this.series, this.cursor, this.dot);
    this.tooltip = h('div', { class: 'chart-tooltip', hidden: true });
    this.element = h('div', { class: 'chart-plot' }, this.svg, this.tooltip);
    this.svg.addEventListener('pointermove', (event) => this.hover(event));
    this.svg.addEventListener('pointerleave', () => this.hideHover());
    new ResizeObserver(() => this.draw()).observe(this.element);
  }

  /// `points`: [{t (ms), v}], oldest first; the chart shows the `windowMs` before the newest one.
  update(points, windowMs, withSeconds) {
    this.points = points;
    this.windowMs = windowMs;
    this.withSeconds = withSeconds;
    this.draw();
  }

  draw() {
    const width = Math.max(this.element.clientWidth, 200);
    this.width = width;
    this.svg.setAttribute('width', width);
    this.svg.setAttribute('viewBox', `0 0 ${width} ${HEIGHT}`);
    const plotWidth = width - MARGIN.left - MARGIN.right;
    const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
    const end = this.points.length ? this.points[this.points.length - 1].t : Date.now();
    const start = end - this.windowMs;
    const shown = this.points.filter((point) => point.t >= start);
    const { max, ticks } = axisTicks(Math.max(0, ...shown.map((point) => point.v)), this.binary, this.format);
    this.scale = {
      start, end, shown,
      x: (t) => MARGIN.left + ((t - start) / (end - start || 1)) * plotWidth,
      y: (v) => MARGIN.top + plotHeight - (v / max) * plotHeight,
    };
    const { x, y } = this.scale;

    const grid = [];
    for (const value of ticks) {
      grid.push(svg('line', { x1: MARGIN.left, x2: width - MARGIN.right, y1: y(value), y2: y(value), class: value ? 'grid-line' : 'axis-line' }));
      grid.push(svg('text', { x: MARGIN.left - 6, y: y(value) + 4, 'text-anchor': 'end', class: 'axis-label' }, text(this.format(value))));
    }
    [[start, 'start'], [start + (end - start) / 2, 'middle'], [end, 'end']].forEach(([t, anchor]) => {
      grid.push(svg('text', { x: x(t), y: HEIGHT - 5, 'text-anchor': anchor, class: 'axis-label' }, text(formatClock(t, this.withSeconds))));
    });
    this.grid.replaceChildren(...grid);

    if (!shown.length) {
      this.series.setAttribute('d', '');
      this.area.setAttribute('d', '');
      this.grid.append(svg('text', { x: MARGIN.left + plotWidth / 2, y: MARGIN.top + plotHeight / 2, 'text-anchor': 'middle', class: 'chart-empty' }, text('No data yet')));
      return;
    }
    const line = shown.map((point, index) => `${index ? 'L' : 'M'}${x(point.t).toFixed(1)},${y(point.v).toFixed(1)}`).join('');
    const bottom = y(0).toFixed(1);
    this.series.setAttribute('d', line);
    this.area.setAttribute('d', `${line}L${x(shown[shown.length - 1].t).toFixed(1)},${bottom}L${x(shown[0].t).toFixed(1)},${bottom}Z`);
  }

  hover(event) {
    const shown = this.scale?.shown || [];
    if (!shown.length) return;
    const box = this.svg.getBoundingClientRect();
    const pointerX = event.clientX - box.left;
    let nearest = shown[0];
    for (const point of shown) {
      if (Math.abs(this.scale.x(point.t) - pointerX) < Math.abs(this.scale.x(nearest.t) - pointerX)) nearest = point;
    }
    const px = this.scale.x(nearest.t);
    const py = this.scale.y(nearest.v);
    for (const [name, value] of [['x1', px], ['x2', px]]) this.cursor.setAttribute(name, value);
    this.dot.setAttribute('cx', px);
    this.dot.setAttribute('cy', py);
    this.cursor.setAttribute('visibility', 'visible');
    this.dot.setAttribute('visibility', 'visible');
    this.tooltip.textContent = `${formatClock(nearest.t, true)} · ${this.format(nearest.v)}`;
    this.tooltip.hidden = false;
    const left = Math.min(Math.max(px - this.tooltip.offsetWidth / 2, 0), this.width - this.tooltip.offsetWidth);
    this.tooltip.style.left = `${left}px`;
  }

  hideHover() {
    this.cursor.setAttribute('visibility', 'hidden');
    this.dot.setAttribute('visibility', 'hidden');
    this.tooltip.hidden = true;
  }
}

function text(content) {
  return document.createTextNode(content);
}

/// The axis top and the values labelled on it: 0, the middle and the top when each label is exact
/// and reads differently from the others, else just 0 and the top, else the same with a higher top.
/// So a quiet chart reads 0 B/s and 1 B/s, never 0 B/s, 1 B/s, 1 B/s.
function axisTicks(value, binary, format) {
  let max = niceMax(value, binary);
  for (let tries = 0; tries < 10; tries += 1) {
    for (const ticks of [[0, max / 2, max], [0, max]]) {
      const labels = ticks.map(format);
      if (ticks.every((tick) => exactTick(tick, binary)) && new Set(labels).size === labels.length) return { max, ticks };
    }
    max = niceMax(max * 1.001, binary);
  }
  return { max, ticks: [0, max] };
}

/// Whether a label can show `tick` as it is: bytes below 1 KB are whole, other numbers have at most
/// the two decimals the labels show.
function exactTick(tick, binary) {
  if (binary) return tick >= 1024 || Number.isInteger(tick);
  return Math.abs(tick * 100 - Math.round(tick * 100)) < 1e-6;
}

/// The axis top: the next 1, 2 or 5 times a power of ten at or above `value`, so labels stay round
/// (for bytes, 1, 2 or 5 times a power of ten of the unit: 5 KB rather than 4.88 KB).
function niceMax(value, binary) {
  if (!(value > 0)) return 1;
  if (binary && value > 1000) {
    const unit = 1024 ** Math.floor(Math.log(value) / Math.log(1024));
    const top = niceMax(value / unit, false);
    return top > 1000 ? unit * 1024 : top * unit;
  }
  const power = 10 ** Math.floor(Math.log10(value));
  const fraction = value / power;
  return (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * power;
}
