import type { ChatRequest } from './chat/chat-completions-api.ts';
import { joinChatRequestParts, splitChatRequest } from './chat-request-fragments.ts';
import { extractLargeStrings, type LargeStringTable } from './large-json-strings.ts';
import type { ChatRequestParts } from './traffic-event.ts';

/*
 * The outbound encoding: how a Codex request body becomes the bytes of the Chat request the backend
 * receives. One path for every request:
 *
 *   1. parse (`parseRequestBody`): the body as JSON. From LARGE_BODY_BYTES on, its long string values
 *      are first cut out and stand in the parsed body as placeholders (large-json-strings.ts), because
 *      decoding, parsing and serialising megabytes of history text again is most of what a long
 *      session's request costs. Every field the lowering reads gets its real text back at once; only
 *      the fields whose text the lowering copies into the Chat request keep their placeholders.
 *   2. lower (lower/convert-responses-request-to-chat-request.ts): those fields are typed
 *      `PassthroughText`, which can be copied and joined and nothing else, so the compiler refuses
 *      any code that would read a placeholder as if it were the text.
 *   3. encode (`encodeChatRequest`): `JSON.stringify` of the lowered request, cut into parts first when
 *      the traffic panel keeps them, then each placeholder replaced by its string's original bytes.
 */

// ---------- passthrough text ----------

declare const passthroughBrand: unique symbol;

/**
 * Text of the Responses request that the lowering copies into the Chat request without reading it.
 * For a large body it may be or contain a placeholder for a long string, so all it offers is what
 * gives the same result for a placeholder as for the text it stands for: copying, joining, and
 * comparing with '' (a long string is never empty). It is a string at run time; the type is opaque
 * so that nothing else compiles.
 */
export type PassthroughText = { readonly [passthroughBrand]: 'passthrough' };

/** Real text may always pass through: it is its own copy. */
export function passthroughText(text: string): PassthroughText {
  return text as unknown as PassthroughText;
}

export function joinPassthroughText(texts: readonly PassthroughText[], separator: string): PassthroughText {
  return passthroughText((texts as unknown as readonly string[]).join(separator));
}

export function isEmptyPassthroughText(text: PassthroughText | null | undefined): boolean {
  return text === undefined || text === null || (text as unknown as string) === '';
}

/** The text as it goes into the Chat request: whatever placeholders it holds are spliced when the request is encoded. */
export function outgoingText(text: PassthroughText): string {
  return text as unknown as string;
}

// ---------- parse ----------

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const TEXT_PART_TYPES: ReadonlySet<unknown> = new Set(['input_text', 'output_text', 'text']);

/*
 * Which strings keep their placeholders: exactly the fields the request schema types as
 * PassthroughText (responses/responses-request.ts). `instructions`, a string `input`, a message's
 * string content and the `text` of its text parts, the `text` of reasoning and summary parts, and a
 * tool output given as a string. Everything else is restored in place before lowering: the skeleton's
 * objects are the parse's own, so this costs one assignment per changed field. Assigning to a key
 * parsed as `__proto__` sets that own property.
 */

function restoreField(target: JsonObject, key: string, table: LargeStringTable): void {
  const value = target[key];
  const restored = table.restore(value);
  if (restored !== value) target[key] = restored;
}

/** Everything of the part but `text` restored, when `keep` says the part's text passes through. */
function restorePart(part: unknown, table: LargeStringTable, keep: (type: unknown) => boolean): unknown {
  if (!isObject(part) || !keep(part['type'])) return table.restore(part);
  for (const key of Object.keys(part)) if (key !== 'text' || typeof part[key] !== 'string') restoreField(part, key, table);
  return part;
}

function restoreParts(parts: unknown, table: LargeStringTable, keep: (type: unknown) => boolean): unknown {
  if (!Array.isArray(parts)) return table.restore(parts);
  for (let index = 0; index < parts.length; index++) parts[index] = restorePart(parts[index], table, keep);
  return parts;
}

const isTextPart = (type: unknown): boolean => TEXT_PART_TYPES.has(type);
const isReasoningTextPart = (type: unknown): boolean => type === 'reasoning_text';
const isSummaryTextPart = (type: unknown): boolean => type === 'summary_text';

function restoreItemField(item: JsonObject, type: unknown, key: string, table: LargeStringTable): void {
  const value = item[key];
  if (type === 'message' && key === 'content') {
    if (typeof value !== 'string') item[key] = restoreParts(value, table, isTextPart);
  } else if (type === 'reasoning' && key === 'content') {
    item[key] = restoreParts(value, table, isReasoningTextPart);
  } else if (type === 'reasoning' && key === 'summary') {
    item[key] = restoreParts(value, table, isSummaryTextPart);
  } else if ((type === 'function_call_output' || type === 'custom_tool_call_output') && key === 'output' && typeof value === 'string') {
    // Passes through.
  } else {
    restoreField(item, key, table);
  }
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
    if ((key === 'instructions' || key === 'input') && typeof value === 'string') continue;
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

// ---------- encode ----------

/** A lowered request ready to send, and what the traffic panel may read of it. */
export interface EncodedChatRequest {
  /** What goes upstream. */
  body: string | Buffer;
  /** The request as objects, with real text (built on first read when it held placeholders). */
  readRequest: () => ChatRequest;
  /** The request cut into the panel's parts (chat-request-fragments.ts), with real text; null unless asked for. */
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
