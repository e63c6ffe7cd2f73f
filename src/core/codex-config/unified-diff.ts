/**
 * A unified diff of two texts, for showing a change before it is written (the CLI's dry run and the
 * extension's preview). Lines keep their own endings; a missing final newline is marked as diff(1) does.
 */

interface DiffLine {
  kind: ' ' | '-' | '+';
  text: string;
  oldNumber: number;
  newNumber: number;
}

function splitLines(text: string): string[] {
  return text === '' ? [] : (text.match(/[^\n]*\n|[^\n]+$/g) ?? []);
}

/** Line diff: common prefix and suffix, then an LCS table over the (small) changed middle. */
function diffLines(oldLines: readonly string[], newLines: readonly string[]): DiffLine[] {
  let prefix = 0;
  while (prefix < oldLines.length && prefix < newLines.length && oldLines[prefix] === newLines[prefix]) prefix += 1;
  let suffix = 0;
  while (
    suffix < oldLines.length - prefix &&
    suffix < newLines.length - prefix &&
    oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]
  ) {
    suffix += 1;
  }
  const oldMiddle = oldLines.slice(prefix, oldLines.length - suffix);
  const newMiddle = newLines.slice(prefix, newLines.length - suffix);
  const middle: Array<{ kind: DiffLine['kind']; text: string }> = [];
  if (oldMiddle.length * newMiddle.length > 4_000_000) {
    for (const text of oldMiddle) middle.push({ kind: '-', text });
    for (const text of newMiddle) middle.push({ kind: '+', text });
  } else {
    const width = newMiddle.length + 1;
    const table = new Uint32Array((oldMiddle.length + 1) * width);
    for (let oldIndex = oldMiddle.length - 1; oldIndex >= 0; oldIndex -= 1) {
      for (let newIndex = newMiddle.length - 1; newIndex >= 0; newIndex -= 1) {
        table[oldIndex * width + newIndex] =
          oldMiddle[oldIndex] === newMiddle[newIndex]
            ? table[(oldIndex + 1) * width + newIndex + 1]! + 1
            : Math.max(table[(oldIndex + 1) * width + newIndex]!, table[oldIndex * width + newIndex + 1]!);
      }
    }
    let oldIndex = 0;
    let newIndex = 0;
    while (oldIndex < oldMiddle.length || newIndex < newMiddle.length) {
      if (oldIndex < oldMiddle.length && newIndex < newMiddle.length && oldMiddle[oldIndex] === newMiddle[newIndex]) {
        middle.push({ kind: ' ', text: oldMiddle[oldIndex]! });
        oldIndex += 1;
        newIndex += 1;
      } else if (oldIndex < oldMiddle.length && (newIndex >= newMiddle.length || table[(oldIndex + 1) * width + newIndex]! >= table[oldIndex * width + newIndex + 1]!)) {
        // Removals first on ties, as diff(1) prints them.
        middle.push({ kind: '-', text: oldMiddle[oldIndex]! });
        oldIndex += 1;
      } else {
        middle.push({ kind: '+', text: newMiddle[newIndex]! });
        newIndex += 1;
      }
    }
  }
  const operations = [
    ...oldLines.slice(0, prefix).map((text) => ({ kind: ' ' as const, text })),
    ...middle,
    ...oldLines.slice(oldLines.length - suffix).map((text) => ({ kind: ' ' as const, text })),
  ];
  let oldNumber = 0;
  let newNumber = 0;
  return operations.map((operation) => {
    if (operation.kind !== '+') oldNumber += 1;
    if (operation.kind !== '-') newNumber += 1;
    return { ...operation, oldNumber, newNumber };
  });
}

function formatDiffLine(line: DiffLine): string {
  const body = line.text.endsWith('\n') ? line.text.slice(0, -1).replace(/\r$/, '') : line.text.replace(/\r$/, '');
  return `${line.kind}${body}\n${line.text.endsWith('\n') ? '' : '\\ No newline at end of file\n'}`;
}

/** A unified diff (3 lines of context) from `currentText` (null = new file) to `newText`. */
export function formatUnifiedDiff(path: string, currentText: string | null, newText: string): string {
  const lines = diffLines(splitLines(currentText ?? ''), splitLines(newText));
  const changedIndexes = lines.flatMap((line, index) => (line.kind === ' ' ? [] : [index]));
  if (changedIndexes.length === 0) return '';
  let output = `--- ${currentText === null ? '/dev/null' : path}\n+++ ${path}\n`;
  const context = 3;
  let hunkStart = 0;
  while (hunkStart < changedIndexes.length) {
    let hunkEnd = hunkStart;
    while (hunkEnd + 1 < changedIndexes.length && changedIndexes[hunkEnd + 1]! - changedIndexes[hunkEnd]! <= context * 2 + 1) hunkEnd += 1;
    const first = Math.max(0, changedIndexes[hunkStart]! - context);
    const last = Math.min(lines.length - 1, changedIndexes[hunkEnd]! + context);
    const hunk = lines.slice(first, last + 1);
    const oldCount = hunk.filter((line) => line.kind !== '+').length;
    const newCount = hunk.filter((line) => line.kind !== '-').length;
    const firstLine = hunk[0]!;
    const oldStart = oldCount === 0 ? firstLine.oldNumber : firstLine.oldNumber - (firstLine.kind === '+' ? 0 : 1) + 1;
    const newStart = newCount === 0 ? firstLine.newNumber : firstLine.newNumber - (firstLine.kind === '-' ? 0 : 1) + 1;
    output += `@@ -${oldStart},${oldCount} +${newStart},${newCount} @@\n`;
    output += hunk.map(formatDiffLine).join('');
    hunkStart = hunkEnd + 1;
  }
  return output;
}
