/**
 * Python text forms the Python engines (vLLM, SGLang) put on the wire: `repr()` of pydantic error
 * lists, `json.dumps` byte forms and `json.JSONDecodeError` messages. Kept independent of the code
 * under test so the mock cannot inherit its bugs.
 */

/** A Python tuple for `repr` (pydantic error `loc` values are tuples, printed with parentheses). */
export class PythonTuple {
  constructor(readonly items: readonly unknown[]) {}
}

/** A value printed verbatim by `renderPythonRepr` (e.g. an exception repr that is not a string). */
export class PythonRawRepr {
  constructor(readonly text: string) {}
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python's `repr(str)`: single quotes unless the text holds `'` and no `"`; non-printables escaped. */
export function renderPythonStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let output = quote;
  for (const character of text) {
    const codePoint = character.codePointAt(0) ?? 0;
    if (character === quote || character === '\\') output += `\\${character}`;
    else if (character === '\n') output += '\\n';
    else if (character === '\r') output += '\\r';
    else if (character === '\t') output += '\\t';
    else if (character !== ' ' && /^[\p{C}\p{Z}]$/u.test(character)) output += renderPythonCodePointEscape(codePoint);
    else output += character;
  }
  return output + quote;
}

function renderPythonCodePointEscape(codePoint: number): string {
  if (codePoint < 0x100) return `\\x${codePoint.toString(16).padStart(2, '0')}`;
  if (codePoint < 0x10000) return `\\u${codePoint.toString(16).padStart(4, '0')}`;
  return `\\U${codePoint.toString(16).padStart(8, '0')}`;
}

function renderPythonNumber(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  return String(value);
}

/** Python `repr()` of a JSON-like value as pydantic/FastAPI print it inside error messages. */
export function renderPythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return renderPythonNumber(value);
  if (typeof value === 'string') return renderPythonStringRepr(value);
  if (value instanceof PythonRawRepr) return value.text;
  if (value instanceof PythonTuple) {
    const items = value.items.map(renderPythonRepr);
    return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
  }
  if (Array.isArray(value)) return `[${value.map(renderPythonRepr).join(', ')}]`;
  if (isRecord(value)) {
    const entries = Object.entries(value).map(([key, item]) => `${renderPythonStringRepr(key)}: ${renderPythonRepr(item)}`);
    return `{${entries.join(', ')}}`;
  }
  return renderPythonStringRepr(String(value));
}

/** Python `str()`: what an f-string interpolation prints (strings bare, everything else as repr). */
export function renderPythonStr(value: unknown): string {
  return typeof value === 'string' ? value : renderPythonRepr(value);
}

/** Python truthiness of a JSON value (`{}`, `[]`, `""`, `0`, `None` are false). */
export function isPythonTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return true;
}

function renderAsciiEscapes(jsonText: string): string {
  // JSON.stringify leaves non-ASCII raw; ensure_ascii=True writes UTF-16 code units as \uXXXX.
  let output = '';
  for (let index = 0; index < jsonText.length; index += 1) {
    const unit = jsonText.charCodeAt(index);
    output += unit > 0x7e ? `\\u${unit.toString(16).padStart(4, '0')}` : jsonText[index];
  }
  return output;
}

/**
 * Python `json.dumps(value, ensure_ascii=…)` with its default `", "` / `": "` separators. String
 * escaping matches JSON.stringify (both use \n, \t, \", \\ and lower-case \u00XX for other controls).
 */
export function renderPythonJsonDumps(value: unknown, options: { ensureAscii: boolean }): string {
  const text = renderSpacedJson(value);
  return options.ensureAscii ? renderAsciiEscapes(text) : text;
}

function renderSpacedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(renderSpacedJson).join(', ')}]`;
  if (isRecord(value)) {
    const entries = Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${renderSpacedJson(item)}`);
    return `{${entries.join(', ')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Python `json.loads` failure: the message and the code-point position it reports. */
export interface PythonJsonError {
  message: string;
  position: number;
}

/** Raised inside the scanner; carries Python's message and position. */
class PythonJsonScanError extends Error {
  constructor(
    readonly reason: string,
    readonly position: number,
  ) {
    super(reason);
  }
}

const whitespace = new Set([' ', '\t', '\n', '\r']);
const numberPattern = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/;

/**
 * Scans text like CPython's `json.loads` (C scanner, strict mode) and returns its JSONDecodeError
 * reason and position, or null when Python would accept the text (NaN/Infinity included). Positions
 * count code points, as Python strings do.
 */
export function findPythonJsonError(text: string): PythonJsonError | null {
  const characters = Array.from(text);
  const skipWhitespace = (position: number): number => {
    let index = position;
    while (index < characters.length && whitespace.has(characters[index] ?? '')) index += 1;
    return index;
  };
  const startsWithAt = (position: number, word: string): boolean =>
    characters.slice(position, position + Array.from(word).length).join('') === word;

  const scanString = (quotePosition: number): number => {
    let index = quotePosition + 1;
    for (;;) {
      if (index >= characters.length) throw new PythonJsonScanError('Unterminated string starting at', quotePosition);
      const character = characters[index] ?? '';
      if (character === '"') return index + 1;
      if (character === '\\') {
        const escaped = characters[index + 1];
        if (escaped === undefined) throw new PythonJsonScanError('Unterminated string starting at', quotePosition);
        if (escaped === 'u') {
          const hex = characters.slice(index + 2, index + 6).join('');
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new PythonJsonScanError('Invalid \\uXXXX escape', index + 1);
          index += 6;
          continue;
        }
        if (!'"\\/bfnrt'.includes(escaped)) throw new PythonJsonScanError('Invalid \\escape', index);
        index += 2;
        continue;
      }
      if ((character.codePointAt(0) ?? 0) < 0x20) throw new PythonJsonScanError('Invalid control character at', index);
      index += 1;
    }
  };

  const scanValue = (position: number): number => {
    const character = characters[position];
    if (character === '"') return scanString(position);
    if (character === '{') return scanObject(position);
    if (character === '[') return scanArray(position);
    for (const word of ['null', 'true', 'false', 'NaN', 'Infinity', '-Infinity']) {
      if (startsWithAt(position, word)) return position + word.length;
    }
    const match = numberPattern.exec(characters.slice(position, position + 400).join(''));
    if (match) return position + match[0].length;
    throw new PythonJsonScanError('Expecting value', position);
  };

  const scanObject = (bracePosition: number): number => {
    let index = skipWhitespace(bracePosition + 1);
    if (characters[index] === '}') return index + 1;
    for (;;) {
      if (characters[index] !== '"') {
        throw new PythonJsonScanError('Expecting property name enclosed in double quotes', index);
      }
      index = skipWhitespace(scanString(index));
      if (characters[index] !== ':') throw new PythonJsonScanError("Expecting ':' delimiter", index);
      index = skipWhitespace(index + 1);
      index = skipWhitespace(scanValue(index));
      if (characters[index] === '}') return index + 1;
      if (characters[index] !== ',') throw new PythonJsonScanError("Expecting ',' delimiter", index);
      index = skipWhitespace(index + 1);
    }
  };

  const scanArray = (bracketPosition: number): number => {
    let index = skipWhitespace(bracketPosition + 1);
    if (characters[index] === ']') return index + 1;
    for (;;) {
      index = skipWhitespace(scanValue(index));
      if (characters[index] === ']') return index + 1;
      if (characters[index] !== ',') throw new PythonJsonScanError("Expecting ',' delimiter", index);
      index = skipWhitespace(index + 1);
    }
  };

  try {
    const end = skipWhitespace(scanValue(skipWhitespace(0)));
    if (end !== characters.length) return { message: 'Extra data', position: end };
    return null;
  } catch (error) {
    if (error instanceof PythonJsonScanError) return { message: error.reason, position: error.position };
    throw error;
  }
}

/** `str(JSONDecodeError)`: `<reason>: line L column C (char N)`, as vLLM echoes it in a 400. */
export function renderPythonJsonDecodeError(text: string, error: PythonJsonError): string {
  const before = Array.from(text).slice(0, error.position);
  const line = before.filter((character) => character === '\n').length + 1;
  const lastNewline = before.lastIndexOf('\n');
  const column = lastNewline === -1 ? error.position + 1 : error.position - lastNewline;
  return `${error.message}: line ${line} column ${column} (char ${error.position})`;
}
