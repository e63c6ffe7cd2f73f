/**
 * Tool-call `arguments` as each engine writes them: byte forms (arguments-matrix.json), Qwen XML
 * parameter rules (qwen3coder-coercion-cases.json) and streaming fragmentation per parser.
 */
import { renderGoJson, type ArgumentByteForm } from './profiles.ts';
import { renderPythonJsonDumps } from './python-text.ts';

export function renderArgumentBytes(value: unknown, form: ArgumentByteForm): string {
  switch (form) {
    case 'python-spaced':
      return renderPythonJsonDumps(value, { ensureAscii: false });
    case 'python-ascii':
      return renderPythonJsonDumps(value, { ensureAscii: true });
    case 'go-compact':
      return renderGoJson(value);
    case 'compact':
      return JSON.stringify(value);
    default: {
      const unreachable: never = form;
      throw new Error(`unknown argument form ${String(unreachable)}`);
    }
  }
}

const xmlValueTerminators = ['</parameter>', '<parameter=', '</function>'];

/**
 * What a legacy Qwen3-Coder XML parser (vLLM qwen3_coder, SGLang, Ollama) makes of the raw text of a
 * string parameter: the value ends at the first embedded end tag, exactly one leading and one trailing
 * newline are removed, and the text `null` (any case) becomes JSON null even for `"type":"string"`.
 */
export function applyQwenXmlParameterRules(rawValue: string, options: { nullCoercion: boolean } = { nullCoercion: true }): string | null {
  let value = rawValue;
  for (const terminator of xmlValueTerminators) {
    const position = value.indexOf(terminator);
    if (position !== -1) value = value.slice(0, position);
  }
  if (value.startsWith('\n')) value = value.slice(1);
  if (value.endsWith('\n')) value = value.slice(0, -1);
  return options.nullCoercion && value.toLowerCase() === 'null' ? null : value;
}

/** Splits on code points so an astral character (the emoji) never straddles two fragments. */
export function splitByCodePoints(text: string, size: number): string[] {
  const characters = Array.from(text);
  const pieces: string[] = [];
  for (let index = 0; index < characters.length; index += size) pieces.push(characters.slice(index, index + size).join(''));
  return pieces;
}

export function countCodePoints(text: string): number {
  return Array.from(text).length;
}

export function truncateCodePoints(text: string, limit: number): string {
  return Array.from(text).slice(0, limit).join('');
}

/** Keeps whole pieces up to `limit` code points in total, cutting the last one; empty pieces keep their place. */
export function truncatePieces(pieces: readonly string[], limit: number): string[] {
  const kept: string[] = [];
  let remaining = limit;
  for (const piece of pieces) {
    const length = countCodePoints(piece);
    if (length <= remaining) {
      kept.push(piece);
      remaining -= length;
      continue;
    }
    if (remaining > 0) kept.push(truncateCodePoints(piece, remaining));
    break;
  }
  return kept;
}

/** Legacy qwen3_coder / SGLang streaming: `{`, one complete `"name": value` member per parameter, `}`. */
export function splitIntoParameterMembers(value: Record<string, unknown>): string[] {
  const members = Object.entries(value).map(
    ([key, item], index) => `${index === 0 ? '' : ', '}${JSON.stringify(key)}: ${renderPythonJsonDumps(item, { ensureAscii: false })}`,
  );
  return ['{', ...members, '}'];
}

/** The text up to and including the first `:` (plus a following space or quote), e.g. `{"input": ` or `{"input":"`. */
function findKeyPrefixLength(characters: readonly string[], withOpeningQuote: boolean): number {
  const colon = characters.indexOf(':');
  if (colon === -1) return Math.min(characters.length, 1);
  let end = colon + 1;
  if (characters[end] === ' ') end += 1;
  if (withOpeningQuote && characters[end] === '"') end += 1;
  return end;
}

/** Raw model JSON in pieces (hermes, harmony, named choice): a key prefix, then fixed-size fragments. */
export function splitModelJson(text: string, options: { leadingBrace: boolean; size: number }): string[] {
  const characters = Array.from(text);
  const prefixLength = findKeyPrefixLength(characters, false);
  const prefix = characters.slice(0, prefixLength).join('');
  const rest = characters.slice(prefixLength).join('');
  const head = options.leadingBrace && prefix.startsWith('{') ? ['{', prefix.slice(1)] : [prefix];
  return [...head.filter((piece) => piece !== ''), ...splitByCodePoints(rest, options.size)];
}

/** One JSON-string unit: a whole escape sequence (`\\n`, `\\"`, `\\u00e9`) or one code point. */
function splitJsonStringUnits(text: string): string[] {
  return text.match(/\\u[0-9a-fA-F]{4}|\\.|[\s\S]/gu) ?? [];
}

/**
 * llama.cpp's stream of the arguments it builds itself (the Qwen3-Coder XML handler): `{`, then the key
 * prefix `"input":"`, then the string value a few tokens at a time, then `"` and `}` apart. The server
 * diffs JSON it re-serialised, so an escape sequence never straddles two pieces; and it holds a newline
 * back until the next token arrives, so `\\n` always opens a piece (`\\n***`) and never ends one.
 * Arguments of any other shape fall back to `{` plus the same escape-safe pieces.
 */
export function splitLlamacppDiffs(text: string, stride = 7): string[] {
  const member = /^\{("(?:[^"\\]|\\.)*":")((?:[^"\\]|\\.)*)("\})$/su.exec(text);
  const head = member ? ['{', member[1] ?? ''] : text.startsWith('{') ? ['{'] : [];
  const body = member ? (member[2] ?? '') : text.slice(head.length);
  const tail = member ? ['"', '}'] : [];
  const units = splitJsonStringUnits(body);
  const groups: string[][] = [];
  let current: string[] = [];
  for (const unit of units) {
    const last = current[current.length - 1];
    const opensNewlineRun = unit === '\\n' && last !== undefined && last !== '\\n';
    // A full piece is cut before the next unit, except right after a newline: that one waits for company.
    const full = current.length >= stride && last !== '\\n';
    if (opensNewlineRun || full) {
      groups.push(current);
      current = [];
    }
    current.push(unit);
  }
  if (current.length > 0) groups.push(current);
  const pieces = groups.map((group) => group.join('')).filter((piece) => piece !== '');
  return [...head, ...pieces, ...tail];
}
