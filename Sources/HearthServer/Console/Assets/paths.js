// Database paths as the console handles them: "/" for the root, "/a/b" below it, keys unencoded.

export function splitPath(path) {
  return String(path).split('/').filter(Boolean);
}

export function joinPath(keys) {
  return `/${keys.join('/')}`;
}

export function childPath(parent, key) {
  return parent === '/' ? `/${key}` : `${parent}/${key}`;
}

export function lastKey(path) {
  const keys = splitPath(path);
  return keys.length ? keys[keys.length - 1] : null;
}

/// Whether `upper` is `lower` or one of its ancestors.
export function isAtOrAbove(upper, lower) {
  if (upper === '/') return true;
  return lower === upper || lower.startsWith(`${upper}/`);
}

/// What a user typed into a path field, made canonical: leading slash, no empty or trailing keys.
export function normalizePath(text) {
  return joinPath(splitPath(String(text).trim()));
}

/// Why `key` can't be a database key, or null when it can (Firebase's rules for key names).
export function invalidKeyReason(key) {
  if (!key) return 'Enter a key.';
  if (/[.#$[\]/]/.test(key)) return 'Keys can\'t contain . # $ [ ] or /.';
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'Keys can\'t contain control characters.';
  if (new TextEncoder().encode(key).length > 768) return 'Keys can be at most 768 bytes long.';
  return null;
}

// The JS SDK's pattern: leading zeros allowed, so "07" is the integer 7 (after "7").
const integerKey = /^-?0*\d{1,10}$/;

function asInteger(key) {
  if (!integerKey.test(key)) return null;
  const number = Number(key);
  return number >= -2147483648 && number <= 2147483647 ? number : null;
}

/// The database's key order: keys that are 32-bit integers first, numerically, then the rest as
/// strings. The tree needs it to place a row it learned about outside the paged listing.
export function compareKeys(a, b) {
  if (a === b) return 0;
  const x = asInteger(a);
  const y = asInteger(b);
  if (x !== null && y !== null) return x - y || a.length - b.length || (a < b ? -1 : 1);
  if (x !== null) return -1;
  if (y !== null) return 1;
  return a < b ? -1 : 1;
}
