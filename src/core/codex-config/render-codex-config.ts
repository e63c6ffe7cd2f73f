import { InvalidRequestError } from '../errors.ts';

/**
 * Renders the Codex profile (`<profile>.config.toml`) and model catalog (`<profile>.model_catalog.json`)
 * that point Codex at the bridge, and edits existing TOML files minimally. Pure: the server layer reads
 * and parses the files (smol-toml), calls these functions and writes the results.
 *
 * Codex rules followed here (codex-wire.md §3–§5, re-checked with codex-cli 0.171.0 --strict-config):
 * profiles are sibling files selected with `-p`, never `[profiles.x]` tables or a top-level `profile`
 * key; `wire_api` must be "responses"; a catalog replaces the bundled one, so only the profile points
 * at it; provider ids `openai`, `ollama` and `lmstudio` are reserved and refused by Codex.
 */

export const CODEX_TOOL_SURFACES = ['functions', 'freeform', 'code-mode'] as const;
export type CodexToolSurface = (typeof CODEX_TOOL_SURFACES)[number];

export const DEFAULT_CODEX_PROFILE = 'freeform-bridge';
export const DEFAULT_PROVIDER_DISPLAY_NAME = 'Freeform Bridge';

/** Codex 0.171 refuses a user table with these ids: "Built-in providers cannot be overridden". */
const RESERVED_PROVIDER_IDS = new Set(['openai', 'ollama', 'lmstudio']);

/**
 * Codex treats a provider with one of these ids (any case) as OpenAI's own service: it asks for
 * remote compaction (a `compaction_trigger` item) and fails the turn when the answer lacks OpenAI's
 * `compaction` item, which no Chat Completions backend can produce.
 */
const OPENAI_TREATED_PROVIDER_IDS = new Set(['openai', 'azure']);

/** Base URL fragments that make Codex treat a provider as Azure OpenAI, with the same consequence. */
export const AZURE_URL_MARKERS: readonly string[] = ['openai.azure.', 'cognitiveservices.azure.', 'aoai.azure.', 'azure-api.', 'azurefd.', 'windows.net/openai'];

/** The Azure marker in `baseUrl` (case-insensitive), or null. */
export function findAzureUrlMarker(baseUrl: string): string | null {
  const lower = baseUrl.toLowerCase();
  return AZURE_URL_MARKERS.find((marker) => lower.includes(marker)) ?? null;
}

/**
 * A warning for a base URL Codex would take for Azure OpenAI, or null. A warning, not an error: a
 * bridge may sit behind such a gateway name on purpose, and the user decides.
 */
export function describeAzureUrlRisk(baseUrl: string): string | null {
  const marker = findAzureUrlMarker(baseUrl);
  if (marker === null) return null;
  return `the base URL ${baseUrl} contains '${marker}', so Codex will treat this provider as Azure OpenAI and ask for remote compaction, which the bridge cannot answer (long sessions then fail with "remote compaction v2 expected exactly one compaction output item"); point Codex at the bridge's own address (http://127.0.0.1:PORT/v1) instead`;
}

const NAME_PATTERN = /^[A-Za-z0-9_-]+$/;
const MAXIMUM_NAME_LENGTH = 64;

export interface CodexProfileOptions {
  /** Profile name: the file is `<profile>.config.toml`, used as `codex -p <profile>`. */
  profile: string;
  /** Id of the `[model_providers.<id>]` table; see `providerIdForProfile`. */
  providerId: string;
  /** The bridge's OpenAI-compatible base URL ending in /v1; Codex POSTs `{baseUrl}/responses`. */
  baseUrl: string;
  /** Model name Codex sends (and the catalog slug). */
  model: string;
  toolSurface: CodexToolSurface;
  /** Bridge token sent as `Authorization: Bearer <token>`; null when the bridge requires none. */
  token: string | null;
  /** Context window in tokens, when known (from the engine's /v1/models or the user). */
  contextWindow: number | null;
  /** Provider display name shown by Codex; defaults to "Freeform Bridge". */
  displayName?: string;
}

export interface RenderedCodexProfile {
  profileFileName: string;
  profileText: string;
  /** Null for the `functions` surface: Codex's fallback metadata already gives that surface. */
  catalogFileName: string | null;
  catalogText: string | null;
}

/**
 * The provider id for a profile. Prefixing keeps a profile named `ollama` or `openai` from turning
 * into a reserved provider id (a hard error in Codex), and keeps our table apart from the user's own.
 */
export function providerIdForProfile(profile: string): string {
  return profile === DEFAULT_CODEX_PROFILE ? profile : `${DEFAULT_CODEX_PROFILE}-${profile}`;
}

export function profileFileNameFor(profile: string): string {
  return `${profile}.config.toml`;
}

export function catalogFileNameFor(profile: string): string {
  return `${profile}.model_catalog.json`;
}

function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** Validates the options and returns them normalised (base URL without a trailing slash). */
export function validateCodexProfileOptions(options: CodexProfileOptions): CodexProfileOptions {
  const { profile, providerId, model, token, contextWindow } = options;
  if (!NAME_PATTERN.test(profile) || profile.length > MAXIMUM_NAME_LENGTH) {
    throw new InvalidRequestError(
      `profile name '${profile}' is not allowed: use 1 to ${MAXIMUM_NAME_LENGTH} letters, digits, '-' or '_' (it becomes the file name <profile>.config.toml)`,
      { param: 'profile' },
    );
  }
  if (!NAME_PATTERN.test(providerId) || providerId.length > MAXIMUM_NAME_LENGTH + DEFAULT_CODEX_PROFILE.length + 1) {
    throw new InvalidRequestError(`provider id '${providerId}' is not allowed: use letters, digits, '-' or '_'`, { param: 'providerId' });
  }
  if (OPENAI_TREATED_PROVIDER_IDS.has(providerId.toLowerCase())) {
    throw new InvalidRequestError(
      `provider id '${providerId}' is not allowed: Codex treats a provider named '${providerId.toLowerCase()}' (in any case) as OpenAI's own service and asks it for remote compaction, which the bridge cannot answer; choose another id`,
      { param: 'providerId' },
    );
  }
  if (RESERVED_PROVIDER_IDS.has(providerId)) {
    throw new InvalidRequestError(`provider id '${providerId}' is reserved by Codex for its built-in provider; choose another`, { param: 'providerId' });
  }
  const baseUrl = validateBaseUrl(options.baseUrl);
  if (model.trim() === '' || model !== model.trim() || hasControlCharacter(model)) {
    throw new InvalidRequestError(`model name '${model}' is not allowed: it must be non-empty, without surrounding spaces or control characters`, { param: 'model' });
  }
  if (token !== null && !/^[\x21-\x7e]+$/.test(token)) {
    // The token ends up in an HTTP header: spaces, line breaks or non-ASCII would break or inject headers.
    throw new InvalidRequestError('the bridge token must be non-empty printable ASCII without spaces', { param: 'token' });
  }
  if (contextWindow !== null && (!Number.isSafeInteger(contextWindow) || contextWindow <= 0)) {
    throw new InvalidRequestError(`context window must be a positive integer number of tokens, got ${contextWindow}`, { param: 'contextWindow' });
  }
  const displayName = options.displayName ?? DEFAULT_PROVIDER_DISPLAY_NAME;
  if (displayName.trim() === '' || hasControlCharacter(displayName)) {
    throw new InvalidRequestError('the provider display name must be non-empty, without control characters', { param: 'displayName' });
  }
  if (OPENAI_TREATED_PROVIDER_IDS.has(displayName.trim().toLowerCase())) {
    // Codex matches the provider's name as well as its id: 'OpenAI' or 'Azure' switch on OpenAI-only code paths.
    throw new InvalidRequestError(`the provider display name must not be '${displayName.trim()}': Codex treats such a provider as OpenAI's own service`, { param: 'displayName' });
  }
  return { ...options, baseUrl, displayName };
}

function validateBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidRequestError(`base URL '${text}' is not a valid URL (expected e.g. http://127.0.0.1:18080/v1)`, { param: 'baseUrl' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidRequestError(`base URL '${text}' must start with http:// or https://`, { param: 'baseUrl' });
  }
  if (url.username !== '' || url.password !== '') {
    throw new InvalidRequestError(`base URL '${text}' must not contain a user name or password; use the bridge token instead`, { param: 'baseUrl' });
  }
  if (url.search !== '' || url.hash !== '') {
    // Codex appends "/responses" to the string, so a query or fragment would end up before it.
    throw new InvalidRequestError(`base URL '${text}' must not contain a query or fragment`, { param: 'baseUrl' });
  }
  const normalised = url.toString().replace(/\/+$/, '');
  if (!normalised.endsWith('/v1')) {
    throw new InvalidRequestError(`base URL '${text}' must end in /v1 (Codex POSTs {base URL}/responses), e.g. http://127.0.0.1:18080/v1`, { param: 'baseUrl' });
  }
  return normalised;
}

// ---------------------------------------------------------------------------------------------
// TOML values

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

function isTomlArray(value: TomlWriteValue): value is readonly TomlWriteValue[] {
  return Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Minimal TOML editing

/**
 * One change to a TOML document: set or remove `key` inside the table at `table` ([] = top level).
 * Values are replaced in place, so comments, layout and every other key stay byte for byte.
 */
export type TomlEdit =
  | { kind: 'set'; table: readonly string[]; key: string; value: TomlWriteValue }
  | { kind: 'remove'; table: readonly string[]; key: string };

interface TomlStatement {
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

class TomlScanError extends Error {}

/**
 * A statement-level scanner, not a parser: it finds where each header and key/value starts and ends,
 * skipping strings, arrays and inline tables correctly (multi-line ones included). The server has
 * already checked the file with a real parser and re-parses every edited result, so this only has
 * to locate statements, never to judge validity.
 */
function scanTomlStatements(text: string): TomlStatement[] {
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

function lineNumberAt(text: string, offset: number): number {
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

// ---------------------------------------------------------------------------------------------
// The profile and the catalog

function readTable(data: Record<string, unknown> | null, path: readonly string[]): Record<string, unknown> | null {
  let current: unknown = data;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return null;
    current = (current as Record<string, unknown>)[segment];
  }
  return typeof current === 'object' && current !== null && !Array.isArray(current) ? (current as Record<string, unknown>) : null;
}

/**
 * Where the bridge serves Codex's model catalog format (`{"models":[…]}`), next to the OpenAI model
 * list at `/v1/models` that other clients read. The tool surface travels in the URL, so the file
 * that chose it and the catalog can never disagree; Codex appends `&client_version=…` to it.
 */
export const CODEX_MODEL_CATALOG_PATH = '/v1/codex/models';

export function modelCatalogUrlFor(baseUrl: string, toolSurface: CodexToolSurface): string {
  return `${baseUrl.replace(/\/+$/, '')}/codex/models?tool_surface=${toolSurface}`;
}

/**
 * Codex fetches a provider's `model_catalog_url` only when the provider has `env_key` or
 * `experimental_bearer_token` (a token in `http_headers` gets no fetch and an empty model list). A
 * bridge started without a token ignores Authorization, so this stand-in only makes the fetch happen.
 */
export const NO_BRIDGE_TOKEN_PLACEHOLDER = 'freeform-bridge-needs-no-token';

/** The user's own extra headers are kept; an Authorization header is dropped (the token moved to `experimental_bearer_token`). */
function keepUserHttpHeaders(existing: Record<string, unknown> | null): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(existing ?? {})) {
    if (name.toLowerCase() !== 'authorization' && typeof value === 'string') headers[name] = value;
  }
  return headers;
}

function createProviderEdits(options: CodexProfileOptions, existingDocument: Record<string, unknown> | null): TomlEdit[] {
  const table = ['model_providers', options.providerId];
  const headers = keepUserHttpHeaders(readTable(existingDocument, [...table, 'http_headers']));
  return [
    { kind: 'set', table, key: 'name', value: options.displayName ?? DEFAULT_PROVIDER_DISPLAY_NAME },
    { kind: 'set', table, key: 'base_url', value: options.baseUrl },
    { kind: 'set', table, key: 'wire_api', value: 'responses' },
    { kind: 'set', table, key: 'experimental_bearer_token', value: options.token ?? NO_BRIDGE_TOKEN_PLACEHOLDER },
    { kind: 'set', table, key: 'model_catalog_url', value: modelCatalogUrlFor(options.baseUrl, options.toolSurface) },
    Object.keys(headers).length > 0 ? { kind: 'set', table, key: 'http_headers', value: headers } : { kind: 'remove', table, key: 'http_headers' },
  ];
}

/**
 * The keys the profile file owns. Everything else in an existing profile (keys the user added such as
 * `model_reasoning_effort` or `model_instructions_file`, comments, extra headers) is kept: re-running
 * the command refreshes the bridge's part and never clobbers the user's.
 */
export function createCodexProfileEdits(options: CodexProfileOptions, existingDocument: Record<string, unknown> | null): TomlEdit[] {
  const validated = validateCodexProfileOptions(options);
  const edits: TomlEdit[] = [
    { kind: 'set', table: [], key: 'model', value: validated.model },
    { kind: 'set', table: [], key: 'model_provider', value: validated.providerId },
    validated.toolSurface === 'functions'
      ? { kind: 'remove', table: [], key: 'model_catalog_json' }
      : { kind: 'set', table: [], key: 'model_catalog_json', value: catalogFileNameFor(validated.profile) },
  ];
  // Unknown stays unknown: a value the user typed into the profile is better than none.
  if (validated.contextWindow !== null) edits.push({ kind: 'set', table: [], key: 'model_context_window', value: validated.contextWindow });
  return [...edits, ...createProviderEdits(validated, existingDocument)];
}

/**
 * `--make-default`: the edits to the user's `config.toml` that make a plain `codex` — and the Codex
 * extension in VS Code, which runs `codex app-server` on this file and never passes `-p` — use the
 * bridge. Only `model`, `model_provider` and our provider table change. Never a top-level `profile`
 * key (a hard error in Codex 0.171), `model_catalog_json` (it would replace Codex's bundled catalog
 * and hide OpenAI's models from the picker) or `model_context_window` (it would apply to OpenAI's
 * models too): the provider's `model_catalog_url` gives Codex the bridge's models, their tool surface
 * and context windows, for this provider only.
 */
export function createMakeDefaultEdits(options: CodexProfileOptions, existingDocument: Record<string, unknown> | null): TomlEdit[] {
  const validated = validateCodexProfileOptions(options);
  return [
    { kind: 'set', table: [], key: 'model', value: validated.model },
    { kind: 'set', table: [], key: 'model_provider', value: validated.providerId },
    ...createProviderEdits(validated, existingDocument),
  ];
}

function renderProfileHeader(options: CodexProfileOptions): string {
  const lines = [
    `# Codex profile written by \`freeform-bridge codex-config\`. Use it with: codex -p ${options.profile}`,
    '# Running the command again updates only the keys it manages (model, model_provider,',
    `# model_catalog_json, model_context_window, [model_providers.${options.providerId}]) and keeps the rest.`,
  ];
  if (options.toolSurface !== 'functions') {
    lines.push(
      `# ${catalogFileNameFor(options.profile)} is regenerated on every run; to give the model a longer`,
      '# base prompt than the catalog\'s short one, add model_instructions_file = "<path>" here.',
    );
  }
  if (options.token !== null) lines.push('# This file holds the bridge token: keep it private (it is written readable by you only).');
  return `${lines.join('\n')}\n`;
}

/** Renders a fresh profile and, for the free-form surfaces, its model catalog. */
export function renderCodexProfile(options: CodexProfileOptions): RenderedCodexProfile {
  const validated = validateCodexProfileOptions(options);
  const profileText = editTomlText(renderProfileHeader(validated), createCodexProfileEdits(validated, null));
  const catalogText = validated.toolSurface === 'functions' ? null : renderModelCatalog(validated);
  return {
    profileFileName: profileFileNameFor(validated.profile),
    profileText,
    catalogFileName: catalogText === null ? null : catalogFileNameFor(validated.profile),
    catalogText,
  };
}

const BASE_INSTRUCTIONS = [
  "You are Codex, a coding agent running in the Codex CLI on the user's computer; your model is served locally through Freeform Bridge.",
  'Work in the current workspace: read the relevant files before changing them, make the requested change, and check it (build or tests) when that is cheap.',
  'Never invent the content of files you have not read. Keep messages short and finish with a brief summary of what you changed.',
].join(' ');

const SURFACE_INSTRUCTIONS: Record<Exclude<CodexToolSurface, 'functions'>, string> = {
  freeform:
    'Edit files with the apply_patch tool. Its input is the raw patch text, not JSON: it starts with `*** Begin Patch`, contains `*** Add File: <path>`, `*** Update File: <path>` (with `@@` context and lines prefixed by a space, `-` or `+`) or `*** Delete File: <path>` sections, and ends with `*** End Patch`.',
  'code-mode':
    'Act through the exec tool: its input is JavaScript source (not JSON) that calls the tools declared in its description and prints what you need to see. Edit files with apply_patch from inside that code.',
};

/** Codex's input kinds a catalog entry can name; only `text` unless the backend reports vision. */
export type CatalogInputModality = 'text' | 'image';

/** What one catalog entry says about a model; the same shape for the catalog file and the live catalog. */
export interface ModelCatalogEntryOptions {
  model: string;
  /** Provider display name, shown after the model name in Codex's picker. */
  displayName: string;
  toolSurface: CodexToolSurface;
  contextWindow: number | null;
  inputModalities: readonly CatalogInputModality[];
  /** Effort levels the backend takes; empty makes Codex send no `reasoning.effort` at all. */
  reasoningLevels: readonly string[];
  /** One line for the picker (where the facts came from); omitted when null. */
  description?: string | null;
}

const REASONING_LEVEL_DESCRIPTIONS: Record<string, string> = {
  low: 'Faster answers with less reasoning',
  medium: 'Balanced reasoning depth',
  high: 'Deeper reasoning for harder problems',
};

/**
 * One catalog entry with the fields Codex 0.171 requires (codex-wire.md §5). `base_instructions`
 * replaces Codex's ~17k-character base prompt; a short one suits small local context windows, and
 * `model_instructions_file` in the profile overrides it. The `functions` surface gets an entry too
 * (the live catalog needs one for the context window) but no `apply_patch_tool_type`: absent, Codex
 * offers its plain function tools only.
 */
export function renderModelCatalogEntry(options: ModelCatalogEntryOptions): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    slug: options.model,
    display_name: `${options.model} (${options.displayName})`,
    ...(options.description ? { description: options.description } : {}),
    supported_reasoning_levels: options.reasoningLevels.map((effort) => ({ effort, description: REASONING_LEVEL_DESCRIPTIONS[effort] ?? effort })),
    ...(options.reasoningLevels.length > 0 ? { default_reasoning_level: options.reasoningLevels.includes('medium') ? 'medium' : options.reasoningLevels[0] } : {}),
    shell_type: 'shell_command',
    visibility: 'list',
    supported_in_api: true,
    priority: 1,
    support_verbosity: false,
    truncation_policy: { mode: 'tokens', limit: 10000 },
    experimental_supported_tools: [],
    input_modalities: [...options.inputModalities],
    base_instructions: options.toolSurface === 'functions' ? BASE_INSTRUCTIONS : `${BASE_INSTRUCTIONS} ${SURFACE_INSTRUCTIONS[options.toolSurface]}`,
  };
  if (options.toolSurface !== 'functions') entry.apply_patch_tool_type = 'freeform';
  if (options.toolSurface === 'code-mode') {
    entry.tool_mode = 'code_mode_only';
    entry.use_responses_lite = true;
  }
  if (options.contextWindow !== null) entry.context_window = options.contextWindow;
  return entry;
}

/** A whole catalog in Codex's own format: `{"models":[…]}`, pretty-printed, ending in a newline. */
export function serializeModelCatalog(entries: readonly Record<string, unknown>[]): string {
  return `${JSON.stringify({ models: entries }, null, 2)}\n`;
}

/**
 * The model catalog file of a profile (free-form surfaces only): one entry. It is written without
 * asking the backend, so it cannot know whether the model sees images; it declares what Codex assumes
 * for a model without metadata (text and images), so `view_image` stays offered as it is without the
 * profile. The bridge's live catalog, which does ask, says text-only unless the backend reports vision.
 */
export function renderModelCatalog(options: CodexProfileOptions): string {
  const validated = validateCodexProfileOptions(options);
  if (validated.toolSurface === 'functions') throw new InvalidRequestError('the functions tool surface needs no model catalog');
  return serializeModelCatalog([
    renderModelCatalogEntry({
      model: validated.model,
      displayName: validated.displayName ?? DEFAULT_PROVIDER_DISPLAY_NAME,
      toolSurface: validated.toolSurface,
      contextWindow: validated.contextWindow,
      inputModalities: ['text', 'image'],
      reasoningLevels: [],
    }),
  ]);
}
