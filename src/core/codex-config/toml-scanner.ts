/**
 * Where each statement of a TOML text starts and ends; the TOML editor changes text only at these
 * spans, so everything else stays byte for byte.
 */

export interface TomlStatement {
  kind: 'table' | 'array-table' | 'key-value';
  /** Header path for tables; for key/values the full path (owning table + dotted key). */
  fullPath: string[];
  /** For key/values: the header they sit under ([] at the top); for tables: their own path. */
  tablePath: string[];
  lineStart: number;
  valueStart: number;
  valueEnd: number;
  /** Offset just after the newline ending the statement's last line (or the end of the text). */
  lineEnd: number;
}

export class TomlScanError extends Error {}

/**
 * A statement-level scanner, not a parser: it finds where each header and key/value starts and ends,
 * skipping strings, arrays and inline tables correctly (multi-line ones included). The server has
 * already checked the file with a real parser and re-parses every edited result, so this only has
 * to locate statements, never to judge validity.
 */
export function scanTomlStatements(text: string): TomlStatement[] {
  const statements: TomlStatement[] = [];
  let index = text.startsWith('\uFEFF') ? 1 : 0;
  let currentTable: string[] = [];
  const length = text.length;

  const skipSpaces = (from: number): number => {
    let position = from;
    while (position < length && (text[position] === ' ' || text[position] === '\t')) position += 1;
    return position;
  };
  const skipToLineEnd = (from: number): number => {
    const newline = text.indexOf('\n', from);
    return newline === -1 ? length : newline + 1;
  };
  const finishLine = (from: number): number => {
    const position = skipSpaces(from);
    if (text[position] === '#') return skipToLineEnd(position);
    if (position >= length) return length;
    if (text[position] === '\r' && text[position + 1] === '\n') return position + 2;
    if (text[position] === '\n') return position + 1;
    throw new TomlScanError(`unexpected '${text[position]}' after a statement at line ${lineNumberAt(text, position)}`);
  };

  while (index < length) {
    const lineStart = index;
    index = skipSpaces(index);
    if (index >= length) break;
    const character = text[index];
    if (character === '\n') {
      index += 1;
      continue;
    }
    if (character === '\r' && text[index + 1] === '\n') {
      index += 2;
      continue;
    }
    if (character === '#') {
      index = skipToLineEnd(index);
      continue;
    }
    if (character === '[') {
      const isArrayTable = text[index + 1] === '[';
      const key = scanKey(text, index + (isArrayTable ? 2 : 1));
      const closingStart = skipSpaces(key.end);
      const closing = isArrayTable ? ']]' : ']';
      if (!text.startsWith(closing, closingStart)) throw new TomlScanError(`unterminated table header at line ${lineNumberAt(text, index)}`);
      const position = finishLine(closingStart + closing.length);
      currentTable = key.path;
      statements.push({ kind: isArrayTable ? 'array-table' : 'table', fullPath: key.path, tablePath: key.path, lineStart, valueStart: -1, valueEnd: -1, lineEnd: position });
      index = position;
      continue;
    }
    const key = scanKey(text, index);
    let position = skipSpaces(key.end);
    if (text[position] !== '=') throw new TomlScanError(`expected '=' after a key at line ${lineNumberAt(text, position)}`);
    const valueStart = skipSpaces(position + 1);
    const valueEnd = scanValue(text, valueStart);
    position = finishLine(valueEnd);
    statements.push({ kind: 'key-value', fullPath: [...currentTable, ...key.path], tablePath: currentTable, lineStart, valueStart, valueEnd, lineEnd: position });
    index = position;
  }
  return statements;
}

export function lineNumberAt(text: string, offset: number): number {
  let line = 1;
  for (let position = 0; position < offset && position < text.length; position += 1) if (text[position] === '\n') line += 1;
  return line;
}

function scanKey(text: string, from: number): { path: string[]; end: number } {
  const path: string[] = [];
  let position = from;
  for (;;) {
    while (text[position] === ' ' || text[position] === '\t') position += 1;
    const character = text[position];
    if (character === '"' || character === "'") {
      const end = scanSingleLineString(text, position);
      path.push(decodeQuotedKey(text.slice(position, end)));
      position = end;
    } else {
      const match = /^[A-Za-z0-9_-]+/.exec(text.slice(position, position + 256));
      if (!match) throw new TomlScanError(`expected a key at line ${lineNumberAt(text, position)}`);
      path.push(match[0]);
      position += match[0].length;
    }
    while (text[position] === ' ' || text[position] === '\t') position += 1;
    if (text[position] !== '.') return { path, end: position };
    position += 1;
  }
}

const SIMPLE_ESCAPES: Record<string, string> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', e: '\u001b', '"': '"', '\\': '\\' };

function decodeQuotedKey(quoted: string): string {
  const body = quoted.slice(1, -1);
  if (quoted.startsWith("'")) return body;
  return body.replace(/\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|x[0-9A-Fa-f]{2}|.)/g, (_escape, code: string) => {
    if (code.length > 1) return String.fromCodePoint(Number.parseInt(code.slice(1), 16));
    const decoded = SIMPLE_ESCAPES[code];
    if (decoded === undefined) throw new TomlScanError(`unknown escape \\${code} in a key`);
    return decoded;
  });
}

function scanSingleLineString(text: string, from: number): number {
  const quote = text[from];
  let position = from + 1;
  while (position < text.length) {
    const character = text[position];
    if (character === '\n') break;
    if (quote === '"' && character === '\\') {
      position += 2;
      continue;
    }
    if (character === quote) return position + 1;
    position += 1;
  }
  throw new TomlScanError(`unterminated string at line ${lineNumberAt(text, from)}`);
}

function scanMultiLineString(text: string, from: number): number {
  const quote = text[from]!;
  const delimiter = quote.repeat(3);
  let position = from + 3;
  while (position < text.length) {
    if (quote === '"' && text[position] === '\\') {
      position += 2;
      continue;
    }
    if (text.startsWith(delimiter, position)) {
      // Up to two quotes may sit just before the closing delimiter (`""""a"""""`).
      let run = 3;
      while (run < 5 && text[position + run] === quote) run += 1;
      return position + run;
    }
    position += 1;
  }
  throw new TomlScanError(`unterminated multi-line string at line ${lineNumberAt(text, from)}`);
}

function scanString(text: string, from: number): number {
  const quote = text[from]!;
  return text.startsWith(quote.repeat(3), from) ? scanMultiLineString(text, from) : scanSingleLineString(text, from);
}

/** Returns the offset just after the value starting at `from` (trailing spaces and comments excluded). */
function scanValue(text: string, from: number): number {
  const character = text[from];
  if (character === '"' || character === "'") return scanString(text, from);
  if (character === '[' || character === '{') {
    let depth = 0;
    let position = from;
    while (position < text.length) {
      const current = text[position];
      if (current === '"' || current === "'") {
        position = scanString(text, position);
        continue;
      }
      if (current === '#') {
        const newline = text.indexOf('\n', position);
        position = newline === -1 ? text.length : newline;
        continue;
      }
      if (current === '[' || current === '{') depth += 1;
      else if (current === ']' || current === '}') {
        depth -= 1;
        if (depth === 0) return position + 1;
      }
      position += 1;
    }
    throw new TomlScanError(`unterminated array or inline table at line ${lineNumberAt(text, from)}`);
  }
  // Numbers, booleans and dates (which may contain one space: `1979-05-27 07:32:00Z`).
  let position = from;
  while (position < text.length && text[position] !== '\n' && text[position] !== '\r' && text[position] !== '#') position += 1;
  while (position > from && (text[position - 1] === ' ' || text[position - 1] === '\t')) position -= 1;
  if (position === from) throw new TomlScanError(`missing value at line ${lineNumberAt(text, from)}`);
  return position;
}
