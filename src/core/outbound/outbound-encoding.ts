import { randomBytes } from 'node:crypto';
import type { ChatRequest } from '../chat/chat-completions-api.ts';
import type { ChatRequestParts } from './chat-request-parts.ts';
import { PASSTHROUGH_FIELDS } from './passthrough-text.ts';

/*
 * The outbound encoding: how a Codex request body becomes the bytes of the Chat request the backend
 * receives. One path for every request:
 *
 *   1. parse (`parseRequestBody`): the body as JSON. From LARGE_BODY_BYTES on, its long string values
 *      are first cut out and stand in the parsed body as placeholders (below), because
 *      decoding, parsing and serialising megabytes of history text again is most of what a long
 *      session's request costs. Every field the lowering reads gets its real text back at once; only
 *      the fields whose text the lowering copies into the Chat request keep their placeholders.
 *   2. lower (lower/convert-responses-request-to-chat-request.ts): those fields are typed
 *      `PassthroughText` (passthrough-text.ts), which can be copied and joined and nothing else, so
 *      the compiler refuses any code that would read a placeholder as if it were the text.
 *   3. encode (`encodeChatRequest`): `JSON.stringify` of the lowered request, cut into parts first when
 *      the traffic panel keeps them, then each placeholder replaced by its string's original bytes.
 */

// ---------- long strings carried as bytes ----------

/*
 * Long string values carried through a JSON rewrite without being decoded or re-encoded.
 *
 * A Codex request of a long session is megabytes of history text: file contents read by tools, patches,
 * replies. The bridge rewrites the structure around that text (items become messages) but copies the
 * text itself unchanged. Decoding it into JavaScript strings, parsing it and serialising it again is
 * most of what a 10 MB request costs (two-byte strings, for text with any non-ASCII character, are the
 * slow case of both `JSON.parse` and `JSON.stringify`).
 *
 * So the body's long string values are cut out before parsing: each becomes a short placeholder string
 * naming it, the much smaller rest is parsed and rewritten as usual, and the placeholders in the
 * serialised result are replaced by the original bytes of the strings. A long string is still checked
 * as `JSON.parse` would check it (no raw control character, only valid escapes; UTF-8 is checked for the
 * whole body by the caller), so a body this path accepts is exactly a body `JSON.parse` accepts.
 *
 * A placeholder is U+0000, a random nonce drawn for this body, the string's index and U+0000 again.
 * Text a client sent cannot spell it (it cannot know the nonce), so nothing else is ever taken for one.
 * Because the original bytes are the inside of a JSON string, a placeholder may also be concatenated
 * with other text inside a string value (messages joined with line breaks): the bytes still form a
 * valid JSON string. Code that must read the text itself (parse it, test its end) reads the real
 * string: `restore` gives it back for any value.
 */

/** Strings shorter than this (bytes between the quotes) stay in the parsed body: cutting them out costs more than it saves. */
export const DEFAULT_MIN_LARGE_STRING_BYTES = 1024;

const BACKSLASH = 0x5c;
const COLON = 0x3a;

function isJsonWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/**
 * The body read as Latin-1 (one character per byte, so positions are byte offsets, and no byte of a
 * multi-byte UTF-8 character can pass for a quote or a backslash), a window at a time, for
 * `String.prototype.indexOf`: a native call per quote that costs a fraction of `Buffer#indexOf`'s.
 * Windows stay below the size from which Node allocates a decoded string outside the JavaScript heap,
 * where the allocator keeps it after it is freed (docs/PERFORMANCE.md).
 */
const WINDOW_BYTES = 960 * 1024;

class Latin1Windows {
  private readonly bytes: Buffer;
  private text = '';
  private start = 0;
  private end = 0;

  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }

  /** The first quote at or after `from`, or -1. */
  nextQuote(from: number): number {
    for (let at = from; at < this.bytes.length; at = this.end) {
      if (at < this.start || at >= this.end) {
        this.start = at;
        this.end = Math.min(this.bytes.length, at + WINDOW_BYTES);
        this.text = this.bytes.toString('latin1', this.start, this.end);
      }
      const found = this.text.indexOf('"', at - this.start);
      if (found !== -1) return this.start + found;
    }
    return -1;
  }

  /** Bytes `[from, to)` as Latin-1 text: a substring of the window when it holds them, else decoded anew. */
  slice(from: number, to: number): string {
    return from >= this.start && to <= this.end ? this.text.slice(from - this.start, to - this.start) : this.bytes.toString('latin1', from, to);
  }
}

/**
 * The closing quote of the string whose inside starts at `from`, or -1 when the body ends first: the
 * next quote with an even run of backslashes before it. Finding quotes, not escapes, keeps this cheap
 * for text with an escape every few characters (source code: `\n`, `\"`, `\t`).
 */
function findClosingQuote(bytes: Buffer, windows: Latin1Windows, from: number): number {
  for (let at = windows.nextQuote(from); at !== -1; at = windows.nextQuote(at + 1)) {
    let backslashes = 0;
    while (at - 1 - backslashes >= from && bytes[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}

/**
 * True when the inside of a string is what `JSON.parse` accepts (no raw control character, only valid
 * escapes). Those rules are about ASCII bytes only, so parsing the Latin-1 reading of the bytes checks
 * exactly them, on V8's fast one-byte path; the decoded value is thrown away. Measured against a
 * regular expression for the same rules (with a look back at the backslashes before each suspect):
 * the expression was slower.
 */
function isValidStringInside(windows: Latin1Windows, start: number, end: number): boolean {
  try {
    JSON.parse(windows.slice(start - 1, end + 1));
    return true;
  } catch {
    return false;
  }
}

function isObjectKey(bytes: Buffer, afterQuote: number): boolean {
  let at = afterQuote;
  while (isJsonWhitespace(bytes[at])) at++;
  return bytes[at] === COLON;
}

/** `target[key] = value`, also for a key `__proto__` (an own property of parsed JSON, not the prototype). */
function setOwnProperty(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** The long strings of one body, and what turns placeholders back into them. */
export class LargeStringTable {
  /** The body with each long string value replaced by its placeholder, ready for `JSON.parse`. */
  readonly skeleton: string;
  private readonly bytes: Buffer;
  /** Start and end (exclusive) of each string's inside, two numbers per string. */
  private readonly spans: number[];
  /** The nonce and the colon after it: in every form of a placeholder, and in nothing else. */
  private readonly nonceColon: string;
  /** The marker as it appears in serialised JSON: `\u0000` written out, then the nonce. */
  private readonly serialisedMarkerText: string;
  private readonly restored = new Map<number, string>();

  constructor(bytes: Buffer, skeleton: string, spans: number[], nonce: string) {
    this.bytes = bytes;
    this.skeleton = skeleton;
    this.spans = spans;
    this.nonceColon = `${nonce}:`;
    this.serialisedMarkerText = `\\u0000${nonce}:`;
  }

  get count(): number {
    return this.spans.length / 2;
  }

  /** True when some form of a placeholder of this body is in the text. */
  mentionedIn(text: string): boolean {
    return text.includes(this.nonceColon);
  }

  static placeholderFor(nonce: string, index: number): string {
    return `\u0000${nonce}:${index}\u0000`;
  }

  /**
   * The real text of a string value that may contain placeholders, also where a placeholder was
   * serialised into JSON text that is itself a string (a tool's arguments): there it stands escaped
   * once per serialisation, and the real text is escaped as many times. `\u0000` serialised d times
   * has 2^(d-1) backslashes of its own; text ending in backslashes before it adds a multiple of 2^d,
   * so the lowest set bit of the count is the depth.
   */
  restoreText(text: string): string {
    if (!text.includes(this.nonceColon)) return text;
    let result = '';
    let from = 0;
    for (let at = text.indexOf(this.nonceColon); at !== -1; at = text.indexOf(this.nonceColon, from)) {
      let depth = 0;
      let start = at - 1;
      if (text.charCodeAt(at - 1) !== 0) {
        let backslashes = 0;
        while (text.charCodeAt(at - 6 - backslashes) === BACKSLASH) backslashes++;
        if (text.slice(at - 5, at) !== 'u0000' || backslashes === 0) throw new Error('a long string placeholder was cut');
        const own = backslashes & -backslashes;
        depth = 1 + Math.log2(own);
        start = at - 5 - own;
      }
      let cursor = at + this.nonceColon.length;
      while (text.charCodeAt(cursor) >= 0x30 && text.charCodeAt(cursor) <= 0x39) cursor++;
      const index = Number(text.slice(at + this.nonceColon.length, cursor));
      const terminator = depth === 0 ? '\u0000' : `${'\\'.repeat(2 ** (depth - 1))}u0000`;
      if (cursor === at + this.nonceColon.length || index >= this.count || text.slice(cursor, cursor + terminator.length) !== terminator) throw new Error('a long string placeholder was cut');
      let real = this.decode(index);
      for (let level = 0; level < depth; level++) real = JSON.stringify(real).slice(1, -1);
      result += text.slice(from, start) + real;
      from = cursor + terminator.length;
    }
    return result + text.slice(from);
  }

  private decode(index: number): string {
    let text = this.restored.get(index);
    if (text === undefined) {
      const start = this.spans[index * 2] as number;
      const end = this.spans[index * 2 + 1] as number;
      // With its quotes, the inside is a JSON string checked at extraction: JSON.parse cannot refuse it.
      text = JSON.parse(this.bytes.toString('utf8', start - 1, end + 1)) as string;
      this.restored.set(index, text);
    }
    return text;
  }

  /** A copy of `value` with every placeholder replaced by its text; values without one are shared. */
  restore<T>(value: T): T {
    return this.restoreValue(value) as T;
  }

  private restoreValue(value: unknown): unknown {
    if (typeof value === 'string') return this.restoreText(value);
    if (Array.isArray(value)) {
      let copy: unknown[] | null = null;
      for (let index = 0; index < value.length; index++) {
        const child: unknown = value[index];
        const restored = this.restoreValue(child);
        if (restored !== child && copy === null) copy = value.slice(0, index);
        copy?.push(restored);
      }
      return copy ?? value;
    }
    if (typeof value === 'object' && value !== null) {
      let copy: Record<string, unknown> | null = null;
      const entries = Object.entries(value);
      for (let index = 0; index < entries.length; index++) {
        const [key, child] = entries[index] as [string, unknown];
        const restored = this.restoreValue(child);
        if (restored !== child && copy === null) copy = Object.fromEntries(entries.slice(0, index));
        if (copy) setOwnProperty(copy, key, restored);
      }
      return copy ?? value;
    }
    return value;
  }

  /**
   * The bytes of serialised JSON (`JSON.stringify` of a value built from the skeleton) with each
   * placeholder replaced by its string's original bytes. Null when a placeholder appears in any other
   * form than directly inside a string value (serialised twice, inside a key, cut): the caller then
   * serialises `restore(value)` instead, so such a rewrite is slower, never wrong.
   */
  expand(serialised: string): Buffer | null {
    // Worked on the text itself: a buffer of its own first would be one more large allocation per
    // request outside the JavaScript heap, which the allocator keeps after it is freed.
    const marker = this.serialisedMarkerText;
    const pieces: Array<string | number> = [];
    let total = 0;
    let from = 0;
    for (let at = serialised.indexOf(marker); at !== -1; at = serialised.indexOf(marker, from)) {
      // Directly inside a string, the backslash of `\u0000` is an escape, not escaped itself: an even
      // run of backslashes before it (text ending in a backslash, then a placeholder) is fine.
      let before = 0;
      while (serialised.charCodeAt(at - 1 - before) === BACKSLASH) before++;
      if (before % 2 === 1) return null;
      let cursor = at + marker.length;
      let index = 0;
      let digits = 0;
      for (let digit = serialised.charCodeAt(cursor); digit >= 0x30 && digit <= 0x39; digit = serialised.charCodeAt(++cursor)) {
        index = index * 10 + digit - 0x30;
        digits++;
      }
      if (digits === 0 || index >= this.count || !serialised.startsWith('\\u0000', cursor)) return null;
      const text = serialised.slice(from, at);
      pieces.push(text, index);
      total += Buffer.byteLength(text, 'utf8') + (this.spans[index * 2 + 1] as number) - (this.spans[index * 2] as number);
      from = cursor + 6;
    }
    if (pieces.length === 0) return Buffer.from(serialised, 'utf8');
    const rest = serialised.slice(from);
    pieces.push(rest);
    total += Buffer.byteLength(rest, 'utf8');
    const result = Buffer.allocUnsafe(total);
    let offset = 0;
    for (const piece of pieces) {
      if (typeof piece === 'string') offset += result.write(piece, offset, 'utf8');
      else offset += this.bytes.copy(result, offset, this.spans[piece * 2] as number, this.spans[piece * 2 + 1] as number);
    }
    return result;
  }
}

/**
 * Cuts the long string values (not object keys) out of a JSON body already checked to be UTF-8.
 * Null when there are none, or when the body is not JSON the way a long string would need it to be
 * (an unterminated string, a raw control character, a bad escape): the caller parses the whole body
 * then, and `JSON.parse` words the refusal.
 */
export function extractLargeStrings(bytes: Buffer, options: { minBytes?: number; start?: number } = {}): LargeStringTable | null {
  // Never an empty string: passthrough text may be compared with '' (passthrough-text.ts).
  const minBytes = Math.max(1, options.minBytes ?? DEFAULT_MIN_LARGE_STRING_BYTES);
  const start = options.start ?? 0;
  const nonce = randomBytes(12).toString('hex');
  const spans: number[] = [];
  const pieces: string[] = [];
  let copiedUpTo = start;
  const windows = new Latin1Windows(bytes);
  for (let open = windows.nextQuote(start); open !== -1; ) {
    const inside = open + 1;
    const close = findClosingQuote(bytes, windows, inside);
    // Unterminated: JSON.parse of the whole body says so.
    if (close === -1) return null;
    if (close - inside >= minBytes && !isObjectKey(bytes, close + 1)) {
      if (!isValidStringInside(windows, inside, close)) return null;
      pieces.push(bytes.toString('utf8', copiedUpTo, inside), JSON.stringify(LargeStringTable.placeholderFor(nonce, spans.length / 2)).slice(1, -1));
      spans.push(inside, close);
      copiedUpTo = close;
    }
    open = windows.nextQuote(close + 1);
  }
  if (spans.length === 0) return null;
  pieces.push(bytes.toString('utf8', copiedUpTo));
  return new LargeStringTable(bytes, pieces.join(''), spans, nonce);
}

// ---------- parse ----------

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/*
 * Which strings keep their placeholders: exactly the passthrough fields (PASSTHROUGH_FIELDS in
 * passthrough-text.ts). Everything else is restored in place before lowering: the skeleton's objects
 * are the parse's own, so this costs one assignment per changed field. Assigning to a key parsed as
 * `__proto__` sets that own property. The list is read through maps, where an item type such as
 * `constructor` finds nothing.
 */
const REQUEST_STRINGS: ReadonlySet<unknown> = new Set(PASSTHROUGH_FIELDS.request);
const ITEM_STRINGS: ReadonlyMap<unknown, string> = new Map(Object.entries(PASSTHROUGH_FIELDS.itemStrings));
const ITEM_PARTS: ReadonlyMap<unknown, ReadonlyMap<string, ReadonlySet<unknown>>> = new Map(
  Object.entries(PASSTHROUGH_FIELDS.itemParts).map(([type, fields]) => [type, new Map(Object.entries(fields).map(([field, kinds]) => [field, new Set<unknown>(kinds)]))]),
);

function restoreField(target: JsonObject, key: string, table: LargeStringTable): void {
  const value = target[key];
  const restored = table.restore(value);
  if (restored !== value) target[key] = restored;
}

/** Everything of the part but `text` restored, when the part is of a kind whose text passes through. */
function restorePart(part: unknown, table: LargeStringTable, kinds: ReadonlySet<unknown>): unknown {
  if (!isObject(part) || !kinds.has(part['type'])) return table.restore(part);
  for (const key of Object.keys(part)) if (key !== 'text' || typeof part[key] !== 'string') restoreField(part, key, table);
  return part;
}

function restoreParts(parts: unknown, table: LargeStringTable, kinds: ReadonlySet<unknown>): unknown {
  if (!Array.isArray(parts)) return table.restore(parts);
  for (let index = 0; index < parts.length; index++) parts[index] = restorePart(parts[index], table, kinds);
  return parts;
}

function restoreItemField(item: JsonObject, type: unknown, key: string, table: LargeStringTable): void {
  const value = item[key];
  if (typeof value === 'string' && ITEM_STRINGS.get(type) === key) return;
  const kinds = ITEM_PARTS.get(type)?.get(key);
  if (kinds !== undefined) item[key] = restoreParts(value, table, kinds);
  else restoreField(item, key, table);
}

function restoreItem(item: unknown, table: LargeStringTable): unknown {
  if (!isObject(item)) return table.restore(item);
  // The schema's own default: an item with a role and no type is a message.
  const type = item['type'] === undefined && 'role' in item ? 'message' : item['type'];
  for (const key of Object.keys(item)) restoreItemField(item, type, key, table);
  return item;
}

/** The request parsed from `table.skeleton`, restored in place everywhere but in its passthrough text. */
export function restoreAllButPassthroughText(body: unknown, table: LargeStringTable): unknown {
  if (!isObject(body)) return table.restore(body);
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (REQUEST_STRINGS.has(key) && typeof value === 'string') continue;
    if (key === 'input' && Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) value[index] = restoreItem(value[index], table);
    } else {
      restoreField(body, key, table);
    }
  }
  return body;
}

/**
 * From this size on a body's long strings are carried as bytes: a 10 MB session costs about half as
 * much. Below it, finding them costs about what it saves (`npm run bench`).
 */
export const LARGE_BODY_BYTES = 256 * 1024;

/** A parsed request body, and the long strings its passthrough text may stand for (null: none). */
export interface ParsedRequestBody {
  body: unknown;
  largeStrings: LargeStringTable | null;
}

/**
 * The JSON of a request body already checked to be UTF-8, starting at `start` (after a byte order
 * mark). `JSON.parse` words any refusal: a body it refuses is never taken, large or not. An empty body
 * is `{}`, as express.json reads it; validation then names the missing fields.
 */
export function parseRequestBody(bytes: Buffer, start: number): ParsedRequestBody {
  if (bytes.length >= LARGE_BODY_BYTES) {
    // Null when there is no long string or when the body is not JSON the way one would need it to be.
    const table = extractLargeStrings(bytes, { start });
    if (table !== null) {
      const skeleton = tryParse(table.skeleton);
      if (skeleton.parsed) return { body: restoreAllButPassthroughText(skeleton.value, table), largeStrings: table };
    }
  }
  const text = bytes.toString('utf8', start);
  return { body: text.length === 0 ? {} : JSON.parse(text), largeStrings: null };
}

function tryParse(text: string): { parsed: true; value: unknown } | { parsed: false } {
  try {
    return { parsed: true, value: JSON.parse(text) };
  } catch {
    return { parsed: false };
  }
}

// ---------- the request in parts ----------

/*
 * A lowered Chat request cut into the parts the traffic panel keeps once each: the head (the request
 * with `messages` and `tools` emptied), every message, and the tool list. Codex resends the whole
 * conversation on every turn, so consecutive requests share almost all of these parts.
 */

export function splitChatRequest(request: ChatRequest): ChatRequestParts {
  const hasTools = request.tools !== undefined;
  return {
    // Emptied, not deleted: the rebuilt request keeps the original key order.
    head: JSON.stringify({ ...request, messages: [], ...(hasTools ? { tools: [] } : {}) }),
    messages: request.messages.map((message) => JSON.stringify(message)),
    tools: hasTools ? JSON.stringify(request.tools) : null,
  };
}

const MESSAGES_PLACEHOLDER = '"messages":[]';
const TOOLS_PLACEHOLDER = '"tools":[]';

/**
 * The parts put back together: exactly `JSON.stringify(request)`, so a bridge that serialises a
 * request by parts for the panel sends those same bytes upstream instead of serialising it twice.
 * The placeholders are found by their first occurrence: only `model` (a JSON string, whose quotes are
 * all escaped) comes before them in the head, so the first unescaped `"messages":[]` is the key.
 */
export function joinChatRequestParts(parts: ChatRequestParts): string {
  const { head } = parts;
  const messagesAt = head.indexOf(MESSAGES_PLACEHOLDER);
  if (messagesAt === -1) throw new Error('the request head has no messages placeholder');
  const afterMessages = messagesAt + MESSAGES_PLACEHOLDER.length;
  const messages = `"messages":[${parts.messages.join(',')}]`;
  if (parts.tools === null) return `${head.slice(0, messagesAt)}${messages}${head.slice(afterMessages)}`;
  // Looked up in the head itself, where nothing but the placeholders can spell it.
  const toolsAt = head.indexOf(TOOLS_PLACEHOLDER, afterMessages);
  if (toolsAt === -1) throw new Error('the request head has no tools placeholder');
  return `${head.slice(0, messagesAt)}${messages}${head.slice(afterMessages, toolsAt)}"tools":${parts.tools}${head.slice(toolsAt + TOOLS_PLACEHOLDER.length)}`;
}

// ---------- encode ----------

/** A lowered request ready to send, and what the traffic panel may read of it. */
export interface EncodedChatRequest {
  /** What goes upstream. */
  body: string | Buffer;
  /** The request as objects, with real text (built on first read when it held placeholders). */
  readRequest: () => ChatRequest;
  /** The request cut into the panel's parts (`splitChatRequest`), with real text; null unless asked for. */
  readParts: (() => ChatRequestParts) | null;
}

function once<T>(compute: () => T): () => T {
  let computed: { value: T } | null = null;
  return () => (computed ??= { value: compute() }).value;
}

/**
 * Serialises a lowered request once. With `byParts` it is serialised part by part and the parts joined
 * (the same text as one `JSON.stringify`), so the panel keeps the parts without a second serialisation.
 * With `largeStrings`, the placeholders in the text are replaced by the long strings' bytes; whatever
 * reads the request or its parts for the panel gets the real text, built only when it is read.
 */
export function encodeChatRequest(request: ChatRequest, options: { byParts: boolean; largeStrings: LargeStringTable | null }): EncodedChatRequest {
  const { largeStrings: table } = options;
  const parts = options.byParts ? splitChatRequest(request) : null;
  const text = parts ? joinChatRequestParts(parts) : JSON.stringify(request);
  if (table === null) return { body: text, readRequest: () => request, readParts: parts ? () => parts : null };
  return {
    body: expand(table, text),
    readRequest: once(() => table.restore(request)),
    readParts: parts ? once(() => ({ head: expand(table, parts.head).toString('utf8'), messages: parts.messages.map((part) => expand(table, part).toString('utf8')), tools: parts.tools === null ? null : expand(table, parts.tools).toString('utf8') })) : null,
  };
}

/**
 * Passthrough text is only ever copied or joined, so every placeholder stands directly inside a string
 * value of the serialised request, the one form the splice takes. Anything else is a bug in the
 * lowering: it fails the request, loudly, and never sends a placeholder.
 */
function expand(table: LargeStringTable, text: string): Buffer {
  const bytes = table.expand(text);
  if (bytes === null) throw new Error('the lowered request holds a placeholder for a long string of the body outside a passthrough text');
  return bytes;
}
