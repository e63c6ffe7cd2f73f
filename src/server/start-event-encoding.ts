import { createHash } from 'node:crypto';
import type { ChatRequest } from './chat/chat-completions-api.ts';
import { SENT_REQUEST_PARTS, type ChatRequestParts, type EncodedChatRequest, type EncodedExchangeStartEvent, type EncodedFragment, type ExchangeStartEvent } from './traffic-event.ts';

/*
 * A lowered Chat request cut into the parts the traffic panel keeps once each: the head (the request
 * with `messages` and `tools` emptied), every message, and the tool list. Codex resends the whole
 * conversation on every turn, so consecutive requests share almost all of these parts.
 *
 * The encoded form carries them across threads: the bridge's worker serialises and redacts each part
 * there, and sends one transferable buffer of UTF-8 bytes with a content hash per part, so the
 * extension host's thread neither walks 10 MB of objects nor parses them, and skips every part it
 * already holds by looking its hash up.
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

/** 128 bits of SHA-256: collisions are out of reach even for text a model or a file chose. */
const HASH_CHARACTERS = 22;

/** `redactText` is applied to every part before it is encoded and hashed. */
export function encodeChatRequest(request: ChatRequest, redactText: (text: string) => string): EncodedChatRequest {
  return encodeChatRequestParts(splitChatRequest(request), redactText);
}

/** The same, from parts already serialised (the exchange's own, when it sent them upstream). */
export function encodeChatRequestParts(parts: ChatRequestParts, redactText: (text: string) => string): EncodedChatRequest {
  const texts = [parts.head, ...parts.messages, ...(parts.tools === null ? [] : [parts.tools])].map(redactText);
  const lengths = texts.map((text) => Buffer.byteLength(text, 'utf8'));
  const bytes = new Uint8Array(lengths.reduce((total, length) => total + length, 0));
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  const fragments = texts.map((text, index) => {
    const length = lengths[index] as number;
    view.write(text, offset, length, 'utf8');
    const hash = createHash('sha256').update(view.subarray(offset, offset + length)).digest('base64url').slice(0, HASH_CHARACTERS);
    const fragment: EncodedFragment = { hash, offset, length };
    offset += length;
    return fragment;
  });
  const [head, ...rest] = fragments as [EncodedFragment, ...EncodedFragment[]];
  const tools = parts.tools === null ? null : (rest.pop() ?? null);
  return { bytes, head, messages: rest, tools };
}

/**
 * A start event in the form the extension receives it (the bridge's worker thread encodes it so):
 * the lowered request encoded, from the parts the exchange sent upstream when it serialised the
 * request by parts. Only the parts are read then: the request as objects may be built on first read
 * (outbound-encoding.ts), so the other fields are copied key by key, where a rest pattern would
 * build it only to drop it.
 */
export function encodeStartEvent(event: ExchangeStartEvent, redactText: (text: string) => string): EncodedExchangeStartEvent {
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(event)) if (key !== 'loweredRequest') rest[key] = event[key as keyof ExchangeStartEvent];
  const parts = event[SENT_REQUEST_PARTS];
  const encodedRequest = parts ? encodeChatRequestParts(parts, redactText) : encodeChatRequest(event.loweredRequest, redactText);
  return { ...(rest as Omit<ExchangeStartEvent, 'loweredRequest'>), encodedRequest };
}

/** One part's text. */
export function decodeFragment(request: EncodedChatRequest, fragment: EncodedFragment): string {
  return Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength).toString('utf8', fragment.offset, fragment.offset + fragment.length);
}
