import type { ChatRequest } from './chat/chat-completions-api.ts';
import { joinChatRequestParts, splitChatRequest, type JsonText, type KnownTexts } from './chat-request-fragments.ts';
import type { SerialisedMessages } from './message-text-cache.ts';
import type { LargeStringTable } from './large-json-strings.ts';
import type { ChatRequestParts } from './traffic-event.ts';

/** A lowered request ready to send, and what the traffic panel may read of it. */
export interface SerialisedChatRequest {
  /** What goes upstream: the request's JSON text, or its bytes when known parts were written in or long strings spliced in. */
  body: string | Buffer;
  /** The request as objects, with real text: built on first read when long strings were carried as placeholders. */
  readRequest: () => ChatRequest;
  /** The request cut into the panel's parts (chat-request-fragments.ts), with real text; null unless asked for. */
  readParts: (() => ChatRequestParts) | null;
}

function once<T>(compute: () => T): () => T {
  let computed: { value: T } | null = null;
  return () => (computed ??= { value: compute() }).value;
}

/** What a caller already has of the request's JSON: used instead of serialising those parts again. */
export interface KnownJson {
  /** `JSON.stringify(request.tools)` (a cached tool lowering's, LoweredRequest.toolsJson). */
  tools: JsonText | null;
  /** The messages' JSON (message-text-cache.ts). */
  messages: SerialisedMessages | null;
}

/**
 * `JSON.stringify(request)` as UTF-8, member by member, with the known parts written in instead of
 * serialising them again: the same bytes, since JSON.stringify also writes an object's members in
 * order and leaves out those whose value it cannot write (undefined). Written straight into one
 * buffer: text spliced from pieces would have to be flattened and then encoded as a whole.
 */
function encodeWithKnownJson(request: ChatRequest, known: KnownJson): Buffer {
  const pieces: Array<string | JsonText | Uint8Array> = [];
  // Members between the known parts gather into one text.
  let text = '{';
  let first = true;
  for (const [key, value] of Object.entries(request)) {
    const knownPart = key === 'tools' ? known.tools : key === 'messages' ? known.messages : null;
    const member = knownPart === null ? (JSON.stringify(value) as string | undefined) : '';
    if (member === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(key)}:${member}`;
    first = false;
    if (knownPart === null) continue;
    pieces.push(text, 'bytes' in knownPart ? knownPart.bytes : knownPart);
    text = '';
  }
  pieces.push(`${text}}`);
  let total = 0;
  for (const piece of pieces) total += typeof piece === 'string' ? Buffer.byteLength(piece, 'utf8') : piece.byteLength;
  const body = Buffer.allocUnsafe(total);
  let offset = 0;
  for (const piece of pieces) {
    if (typeof piece === 'string') offset += body.write(piece, offset, 'utf8');
    else if ('text' in piece) offset += body.write(piece.text, offset, 'utf8');
    else {
      body.set(piece, offset);
      offset += piece.byteLength;
    }
  }
  // Every byte of the unzeroed buffer must have been written.
  if (offset !== total) throw new Error(`the lowered request came out ${offset} bytes long, not the ${total} measured`);
  return body;
}

/**
 * Serialises a lowered request once. With `byParts` the panel also gets the request cut into parts:
 * from the known texts where there are some, or serialised part by part and joined for the wire, so
 * the panel keeps the same parts without a second serialisation. With `largeStrings` the request
 * holds placeholders for the body's long strings (large-json-strings.ts): they are spliced back as
 * bytes on the way out, and whatever reads the request or its parts for the panel gets the real
 * text, built only when it is read (after the request has left: the worker encodes traffic on its
 * next loop turn).
 */
export function serialiseChatRequest(
  request: ChatRequest,
  options: { byParts: boolean; largeStrings: LargeStringTable | null; known?: Partial<KnownJson> },
): SerialisedChatRequest {
  const { largeStrings: table } = options;
  const known: KnownJson = {
    tools: request.tools !== undefined ? (options.known?.tools ?? null) : null,
    messages: options.known?.messages?.count === request.messages.length ? options.known.messages : null,
  };
  const knownTexts = (): KnownTexts => ({ tools: known.tools?.text ?? null, messages: known.messages?.readTexts() ?? null });
  if (table === null && (known.tools !== null || known.messages !== null)) {
    return { body: encodeWithKnownJson(request, known), readRequest: () => request, readParts: options.byParts ? once(() => splitChatRequest(request, knownTexts())) : null };
  }
  // The large-body path splices text: the known parts save a serialisation only where parts are cut
  // anyway; the whole request's text is one JSON.stringify, cheap beside what such a body costs.
  const parts = options.byParts ? splitChatRequest(request, knownTexts()) : null;
  const text = parts ? joinChatRequestParts(parts) : JSON.stringify(request);
  if (table === null) return { body: text, readRequest: () => request, readParts: parts ? () => parts : null };
  const expanded = table.expand(text);
  if (expanded !== null) {
    return {
      body: expanded,
      readRequest: once(() => table.restore(request)),
      readParts: parts ? once(() => expandParts(parts, table)) : null,
    };
  }
  // A placeholder in a form the splice does not take: the real text everywhere, the slow way.
  const restored = table.restore(request);
  const restoredParts = options.byParts ? splitChatRequest(restored) : null;
  const body = restoredParts ? joinChatRequestParts(restoredParts) : JSON.stringify(restored);
  // Never a placeholder on the wire: a bug in what may pass through fails the request, loudly.
  if (table.mentionedIn(body)) throw new Error('the lowered request kept a placeholder for a long string of the body');
  return {
    body,
    readRequest: () => restored,
    readParts: restoredParts ? () => restoredParts : null,
  };
}

/** Each part with its long strings spliced back: parts of a request whose joined text expanded cannot fail. */
function expandParts(parts: ChatRequestParts, table: LargeStringTable): ChatRequestParts {
  const expand = (part: string): string => {
    const bytes = table.expand(part);
    if (bytes === null) throw new Error('a part of the request kept a placeholder its joined text did not have');
    return bytes.toString('utf8');
  };
  return { head: expand(parts.head), messages: parts.messages.map(expand), tools: parts.tools === null ? null : expand(parts.tools) };
}
