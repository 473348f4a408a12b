// Line diff by longest common subsequence. Rules files are small, so the quadratic table is fine once
// the common head and tail are trimmed; past a size cap the middle is shown as replaced wholesale.

const MAX_CELLS = 16e6;

function splitLines(text) {
  if (!text) return [];
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/// [{ type: 'same' | 'add' | 'del', text, oldLine, newLine }] turning `oldText` into `newText`.
export function diffLines(oldText, newText) {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > head && endB > head && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const kinds = [
    ...a.slice(0, head).map((text) => ({ type: 'same', text })),
    ...middle(a.slice(head, endA), b.slice(head, endB)),
    ...a.slice(endA).map((text) => ({ type: 'same', text })),
  ];
  let oldLine = 0;
  let newLine = 0;
  return kinds.map((op) => {
    if (op.type !== 'add') oldLine += 1;
    if (op.type !== 'del') newLine += 1;
    return { ...op, oldLine: op.type === 'add' ? null : oldLine, newLine: op.type === 'del' ? null : newLine };
  });
}

function middle(a, b) {
  const removed = a.map((text) => ({ type: 'del', text }));
  const added = b.map((text) => ({ type: 'add', text }));
  if (!a.length || !b.length || (a.length + 1) * (b.length + 1) > MAX_CELLS) return [...removed, ...added];
  const width = b.length + 1;
  // lengths[i * width + j]: the longest common subsequence of a[i...] and b[j...]
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      lengths[i * width + j] = a[i] === b[j]
        ? lengths[(i + 1) * width + j + 1] + 1
        : Math.max(lengths[(i + 1) * width + j], lengths[i * width + j + 1]);
    }
  }
  const ops = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      ops.push({ type: 'same', text: a[i] });
      i += 1;
      j += 1;
    } else if (lengths[(i + 1) * width + j] >= lengths[i * width + j + 1]) {
      ops.push(removed[i]);
      i += 1;
    } else {
      ops.push(added[j]);
      j += 1;
    }
  }
  return [...ops, ...removed.slice(i), ...added.slice(j)];
}

/// The changes with `context` unchanged lines around each, grouped as unified diff hunks.
export function hunks(ops, context = 3) {
  const changed = ops.map((op, index) => (op.type === 'same' ? -1 : index)).filter((index) => index >= 0);
  const groups = [];
  for (const index of changed) {
    const last = groups[groups.length - 1];
    if (last && index - last.end <= context * 2 + 1) last.end = index;
    else groups.push({ start: index, end: index });
  }
  return groups.map(({ start, end }) => {
    const lines = ops.slice(Math.max(0, start - context), Math.min(ops.length, end + context + 1));
    const oldLines = lines.filter((op) => op.type !== 'add');
    const newLines = lines.filter((op) => op.type !== 'del');
    const oldStart = oldLines[0]?.oldLine ?? 0;
    const newStart = newLines[0]?.newLine ?? 0;
    return { header: `@@ -${oldStart},${oldLines.length} +${newStart},${newLines.length} @@`, lines };
  });
}
