import { InvalidRequestError } from '../errors.ts';

/** The TOML values this module writes: no floats, dates or big integers are ever needed. */
export type TomlWriteValue = string | number | boolean | readonly TomlWriteValue[] | { readonly [key: string]: TomlWriteValue };

const BARE_KEY = /^[A-Za-z0-9_-]+$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A TOML basic string: quotes, backslashes and control characters escaped, everything else literal. */
export function serializeTomlString(value: string): string {
  if (LONE_SURROGATE.test(value)) {
    throw new InvalidRequestError('a value contains a lone UTF-16 surrogate, which TOML (UTF-8) cannot hold');
  }
  let result = '"';
  for (const character of value) {
    const code = character.codePointAt(0)!;
    if (character === '"') result += '\\"';
    else if (character === '\\') result += '\\\\';
    else if (character === '\n') result += '\\n';
    else if (character === '\t') result += '\\t';
    else if (character === '\r') result += '\\r';
    else if (character === '\b') result += '\\b';
    else if (character === '\f') result += '\\f';
    else if (code < 0x20 || code === 0x7f) result += `\\u${code.toString(16).padStart(4, '0').toUpperCase()}`;
    else result += character;
  }
  return `${result}"`;
}

export function serializeTomlKey(key: string): string {
  return BARE_KEY.test(key) ? key : serializeTomlString(key);
}

export function serializeTomlValue(value: TomlWriteValue): string {
  if (typeof value === 'string') return serializeTomlString(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new InvalidRequestError(`only integers are written to TOML, got ${value}`);
    return String(value);
  }
  if (isTomlArray(value)) return `[${value.map(serializeTomlValue).join(', ')}]`;
  const entries = Object.entries(value);
  if (entries.length === 0) return '{}';
  // Keys inside inline tables are always quoted: header names such as "Authorization" read as the
  // HTTP names they are, as in Codex's own documentation (`http_headers = { "X-Header" = "v" }`).
  return `{ ${entries.map(([key, item]) => `${serializeTomlString(key)} = ${serializeTomlValue(item)}`).join(', ')} }`;
}

export function isTomlArray(value: TomlWriteValue): value is readonly TomlWriteValue[] {
  return Array.isArray(value);
}
