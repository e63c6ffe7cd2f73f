/*
 * A Python dict literal whose keys and values are plain strings, as a model trained on Python writes
 * tool arguments (`{'input': '*** Begin Patch\n…'}`). Only the subset with exactly one reading is read:
 * single- or double-quoted strings without prefixes (r, b, f, u), never triple-quoted, never two
 * literals side by side (Python joins them), no line break inside a string, and only the escapes whose
 * meaning no one disputes: \\ \' \" \n \r \t \xHH \uHHHH \UHHHHHHHH. A repeated key, any other value
 * or escape, or text after the closing brace gives null.
 */

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\', "'": "'", '"': '"', n: '\n', r: '\r', t: '\t' };
const HEX_ESCAPE_LENGTHS: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };
const HEX = /^[0-9a-fA-F]+$/;

/** The dict's entries in order, or null when the text is not wholly such a literal. */
export function parsePythonStringDict(text: string): Record<string, string> | null {
  let index = skipSpace(text, 0);
  if (text.charAt(index) !== '{') return null;
  index = skipSpace(text, index + 1);
  const entries: Record<string, string> = {};
  while (text.charAt(index) !== '}') {
    const key = readString(text, index);
    if (key === null || Object.hasOwn(entries, key.value)) return null;
    index = skipSpace(text, key.end);
    if (text.charAt(index) !== ':') return null;
    const value = readString(text, skipSpace(text, index + 1));
    if (value === null) return null;
    entries[key.value] = value.value;
    index = skipSpace(text, value.end);
    if (text.charAt(index) === ',') index = skipSpace(text, index + 1);
    else if (text.charAt(index) !== '}') return null;
  }
  return skipSpace(text, index + 1) === text.length ? entries : null;
}

function skipSpace(text: string, start: number): number {
  let index = start;
  while (index < text.length && ' \t\r\n'.includes(text.charAt(index))) index += 1;
  return index;
}

/** One quoted string starting at `start`: its value and the index after its closing quote. */
function readString(text: string, start: number): { value: string; end: number } | null {
  const quote = text.charAt(start);
  if (quote !== "'" && quote !== '"') return null;
  // '' followed by a quote opens a triple-quoted string, whose rules differ.
  if (text.startsWith(quote.repeat(3), start)) return null;
  let value = '';
  let index = start + 1;
  while (index < text.length) {
    const char = text.charAt(index);
    if (char === quote) return { value, end: index + 1 };
    if (char === '\n' || char === '\r') return null;
    if (char !== '\\') {
      value += char;
      index += 1;
      continue;
    }
    const letter = text.charAt(index + 1);
    const simple = SIMPLE_ESCAPES[letter];
    if (simple !== undefined) {
      value += simple;
      index += 2;
      continue;
    }
    const length = HEX_ESCAPE_LENGTHS[letter];
    if (length === undefined) return null;
    const digits = text.slice(index + 2, index + 2 + length);
    if (digits.length !== length || !HEX.test(digits)) return null;
    const codePoint = Number.parseInt(digits, 16);
    // A surrogate is a character of its own in Python; JavaScript would pair two into another one.
    if (codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return null;
    value += String.fromCodePoint(codePoint);
    index += 2 + length;
  }
  return null;
}
