// Building elements by hand stays readable with one small helper instead of template strings, and it
// never parses markup, so values from the database can't inject HTML.

export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  setAttributes(element, attrs);
  append(element, children);
  return element;
}

function setAttributes(element, attrs) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === 'class') {
      element.className = value;
    } else if (name === 'value' || name === 'checked') {
      element[name] = value;
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
}

export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

const SVG = 'http://www.w3.org/2000/svg';

export function svg(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) element.setAttribute(name, String(value));
  }
  for (const child of children) if (child) element.append(child);
  return element;
}

// 24-unit line icons, drawn here so the console loads nothing from elsewhere.
const iconPaths = {
  plus: 'M12 5v14M5 12h14',
  trash: 'M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13M10 11v6M14 11v6',
  download: 'M12 4v11M7 10l5 5 5-5M5 20h14',
  upload: 'M12 20V9M7 14l5-5 5 5M5 4h14',
  chevron: 'M9 6l6 6-6 6',
  close: 'M6 6l12 12M18 6L6 18',
  refresh: 'M20 11a8 8 0 1 0-2.3 6.3M20 5v6h-6',
  history: 'M4 12a8 8 0 1 0 2.3-5.7M4 4v4h4M12 8v4l3 2',
};

export function icon(name) {
  return svg('svg', { class: `icon icon-${name}`, viewBox: '0 0 24 24', 'aria-hidden': 'true', focusable: 'false' },
    svg('path', { d: iconPaths[name] }));
}

/// A transient message in the #toast area; errors stay longer because they usually ask for an action.
export function toast(message, kind = 'info') {
  const area = document.getElementById('toast');
  const close = h('button', { type: 'button', class: 'toast-close', 'aria-label': 'Dismiss message' }, icon('close'));
  const item = h('div', { class: `toast-item toast-${kind}`, role: kind === 'error' ? 'alert' : 'status' },
    h('span', { class: 'toast-text' }, message), close);
  const remove = () => item.remove();
  close.addEventListener('click', remove);
  area.append(item);
  // A burst of actions must not wall off the page: only the newest few stay.
  while (area.children.length > 3) area.firstElementChild.remove();
  setTimeout(remove, kind === 'error' ? 9000 : 5000);
  return item;
}

/// A paragraph explaining an empty list or a failed load, with what to do next.
export function emptyState(title, detail, ...actions) {
  return h('div', { class: 'empty-state' }, h('p', { class: 'empty-title' }, title),
    detail ? h('p', { class: 'empty-detail' }, detail) : null, actions.length ? h('div', { class: 'empty-actions' }, actions) : null);
}

export function clear(element) {
  element.replaceChildren();
  return element;
}
