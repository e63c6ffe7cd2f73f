import { InvalidRequestError } from '../errors.ts';
import { lineNumberAt, scanTomlStatements, TomlScanError, type TomlStatement } from './toml-scanner.ts';
import { isTomlArray, serializeTomlKey, serializeTomlValue, type TomlWriteValue } from './toml-value.ts';

/**
 * One change to a TOML document: set or remove `key` inside the table at `table` ([] = top level).
 * Values are replaced in place, so comments, layout and every other key stay byte for byte.
 */
export type TomlEdit =
  | { kind: 'set'; table: readonly string[]; key: string; value: TomlWriteValue }
  | { kind: 'remove'; table: readonly string[]; key: string };


function samePath(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((segment, index) => segment === right[index]);
}

function startsWithPath(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, index) => segment === path[index]);
}

function detectNewline(text: string): string {
  return text.includes('\r\n') ? '\r\n' : '\n';
}

function insertLines(text: string, offset: number, lines: string, newline: string): string {
  const needsLeadingNewline = offset === text.length && text.length > 0 && !text.endsWith('\n');
  return text.slice(0, offset) + (needsLeadingNewline ? newline : '') + lines + text.slice(offset);
}

/** Where a new top-level key goes: after the last top-level key, else above the first header's comment block. */
function topLevelInsertionPoint(text: string, statements: readonly TomlStatement[]): { offset: number; beforeHeader: boolean } {
  const firstHeaderIndex = statements.findIndex((statement) => statement.kind !== 'key-value');
  const topLevel = (firstHeaderIndex === -1 ? statements : statements.slice(0, firstHeaderIndex)).filter((statement) => statement.kind === 'key-value');
  const lastTopLevel = topLevel.at(-1);
  if (lastTopLevel) return { offset: lastTopLevel.lineEnd, beforeHeader: false };
  const firstHeader = firstHeaderIndex === -1 ? undefined : statements[firstHeaderIndex];
  if (!firstHeader) return { offset: text.length, beforeHeader: false };
  // Comment lines directly above the first header describe it: keep them together with it.
  let offset = firstHeader.lineStart;
  for (;;) {
    const previousLineEnd = offset;
    if (previousLineEnd === 0) break;
    const previousLineStart = text.lastIndexOf('\n', previousLineEnd - 2) + 1;
    const previousLine = text.slice(previousLineStart, previousLineEnd).trim();
    if (!previousLine.startsWith('#')) break;
    offset = previousLineStart;
  }
  // Never insert in front of a byte-order mark.
  return { offset: Math.max(offset, text.startsWith('\uFEFF') ? 1 : 0), beforeHeader: true };
}

function applySetEdit(text: string, edit: Extract<TomlEdit, { kind: 'set' }>, newline: string): string {
  const statements = scanTomlStatements(text);
  const targetPath = [...edit.table, edit.key];
  const serialisedValue = serializeTomlValue(edit.value);
  const existing = statements.find((statement) => statement.kind === 'key-value' && samePath(statement.fullPath, targetPath));
  if (existing) {
    return text.slice(0, existing.valueStart) + serialisedValue + text.slice(existing.valueEnd);
  }
  const container = statements.find(
    (statement) => statement.kind === 'key-value' && startsWithPath(targetPath, statement.fullPath) && statement.fullPath.length < targetPath.length,
  );
  if (container) {
    throw new InvalidRequestError(
      `cannot add '${targetPath.join('.')}': '${container.fullPath.join('.')}' is written as an inline value at line ${lineNumberAt(text, container.lineStart)}; edit it by hand`,
      { code: 'toml_edit_unsupported' },
    );
  }
  if (edit.table.length === 0) {
    const point = topLevelInsertionPoint(text, statements);
    const line = `${serializeTomlKey(edit.key)} = ${serialisedValue}${newline}`;
    return insertLines(text, point.offset, point.beforeHeader ? `${line}${newline}` : line, newline);
  }
  const headerIndex = statements.findIndex((statement) => statement.kind === 'table' && samePath(statement.fullPath, edit.table));
  if (headerIndex !== -1) {
    let offset = statements[headerIndex]!.lineEnd;
    for (const statement of statements.slice(headerIndex + 1)) {
      if (statement.kind !== 'key-value') break;
      offset = statement.lineEnd;
    }
    return insertLines(text, offset, `${serializeTomlKey(edit.key)} = ${serialisedValue}${newline}`, newline);
  }
  // The table may exist only through dotted keys (`model_providers.x.name = …` or `[model_providers]`
  // + `x.name = …`); a new `[model_providers.x]` header would then redefine it, which TOML forbids.
  const dottedSibling = statements
    .filter(
      (statement) =>
        statement.kind === 'key-value' && statement.tablePath.length < edit.table.length && startsWithPath(statement.fullPath, edit.table),
    )
    .at(-1);
  if (dottedSibling) {
    const relativeKey = [...edit.table.slice(dottedSibling.tablePath.length), edit.key].map(serializeTomlKey).join('.');
    return insertLines(text, dottedSibling.lineEnd, `${relativeKey} = ${serialisedValue}${newline}`, newline);
  }
  const separator = text.length === 0 || /(?:^|\n)[ \t]*\r?\n$/.test(text) ? '' : text.endsWith('\n') ? newline : `${newline}${newline}`;
  return `${text}${separator}[${edit.table.map(serializeTomlKey).join('.')}]${newline}${serializeTomlKey(edit.key)} = ${serialisedValue}${newline}`;
}

function applyRemoveEdit(text: string, edit: Extract<TomlEdit, { kind: 'remove' }>): string {
  const targetPath = [...edit.table, edit.key];
  const existing = scanTomlStatements(text).find((statement) => statement.kind === 'key-value' && samePath(statement.fullPath, targetPath));
  return existing ? text.slice(0, existing.lineStart) + text.slice(existing.lineEnd) : text;
}

/**
 * Applies edits to TOML text, touching only the spans of the affected values: a changed value is
 * replaced in place (its trailing comment kept), a new key goes after the last key of its table, a
 * new table is appended, a removed key loses its line. New lines use the file's own line ending.
 * Throws `InvalidRequestError` (code `toml_edit_unsupported`) where a minimal edit is impossible.
 */
export function editTomlText(text: string, edits: readonly TomlEdit[]): string {
  // Decided once: an earlier removal may leave no line ending to look at.
  const newline = detectNewline(text);
  let result = text;
  for (const edit of edits) {
    try {
      result = edit.kind === 'set' ? applySetEdit(result, edit, newline) : applyRemoveEdit(result, edit);
    } catch (error) {
      if (error instanceof TomlScanError) throw new InvalidRequestError(`cannot edit the TOML text: ${error.message}`, { code: 'toml_edit_unsupported' });
      throw error;
    }
  }
  return result;
}

/**
 * The same edits applied to parsed data (plain objects), so the server can check that re-parsing the
 * edited text gives exactly the original document plus these changes and nothing else.
 */
export function applyTomlEditsToData(data: Record<string, unknown>, edits: readonly TomlEdit[]): Record<string, unknown> {
  for (const edit of edits) {
    let table: Record<string, unknown> = data;
    for (const segment of edit.table) {
      const next = table[segment];
      if (typeof next === 'object' && next !== null && !Array.isArray(next)) {
        table = next as Record<string, unknown>;
      } else {
        if (edit.kind === 'remove') {
          table = {};
          break;
        }
        const created: Record<string, unknown> = {};
        table[segment] = created;
        table = created;
      }
    }
    if (edit.kind === 'set') table[edit.key] = toPlainData(edit.value);
    else delete table[edit.key];
  }
  return data;
}

function toPlainData(value: TomlWriteValue): unknown {
  if (isTomlArray(value)) return value.map(toPlainData);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toPlainData(item)]));
  return value;
}
