// How numbers, sizes, times and database values read on screen, kept together so every page agrees.

const byteUnits = ['B', 'KB', 'MB', 'GB', 'TB'];

export function formatBytes(bytes) {
  let value = Number(bytes) || 0;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < byteUnits.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${parseFloat(value.toFixed(digits))} ${byteUnits[unit]}`;
}

export function formatNumber(value) {
  const number = Number(value) || 0;
  if (Math.abs(number) >= 1e6) return `${(number / 1e6).toFixed(1)}M`;
  if (Math.abs(number) >= 1e4) return `${(number / 1e3).toFixed(1)}k`;
  if (Number.isInteger(number)) return number.toLocaleString('en-US');
  return String(parseFloat(number.toFixed(Math.abs(number) >= 10 ? 1 : 2)));
}

export function formatDateTime(ms) {
  const value = Number(ms);
  if (!value) return '—';
  return new Date(value).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatDate(ms) {
  const value = Number(ms);
  if (!value) return '—';
  return new Date(value).toLocaleDateString(undefined, { dateStyle: 'medium' });
}

export function formatClock(ms, withSeconds) {
  return new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: withSeconds ? '2-digit' : undefined });
}

export function relativeTime(ms, now = Date.now()) {
  const seconds = Math.round((now - Number(ms)) / 1000);
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  return `${days} day${days === 1 ? '' : 's'} ago`;
}

export function formatDuration(totalSeconds) {
  const seconds = Math.floor(Number(totalSeconds) || 0);
  const days = Math.floor(seconds / 86400);
  const hours = Math.floor((seconds % 86400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (days) return `${days} d ${hours} h`;
  if (hours) return `${hours} h ${minutes} min`;
  if (minutes) return `${minutes} min`;
  return `${seconds} s`;
}

/// A leaf as the tree shows it: strings quoted so `"12"` and `12` look different.
export function formatValue(value) {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

export function valueType(value) {
  return value === null ? 'null' : typeof value;
}

/// The text an editor starts with. A string is shown bare unless it would read back as another type
/// (`"12"`, `"true"`), so saving without changes never changes the type.
export function editableText(value) {
  if (typeof value !== 'string') return JSON.stringify(value);
  try {
    JSON.parse(value);
    return JSON.stringify(value);
  } catch {
    return value;
  }
}

/// What the user typed: JSON when it parses, else the text as a string.
export function parseInput(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/// Exact counts ("20,000 children"): a count is a fact to read, not a trend to glance at.
export function plural(count, one, many = `${one}s`) {
  return `${Number(count).toLocaleString('en-US')} ${count === 1 ? one : many}`;
}
