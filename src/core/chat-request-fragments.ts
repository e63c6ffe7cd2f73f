import { createHash } from 'node:crypto';
import type { ChatRequest } from './chat/chat-completions-api.ts';
import type { EncodedChatRequest, EncodedFragment } from './traffic-event.ts';

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

/** The parts as JSON text; the head keeps the request's key order. */
export interface ChatRequestParts {
  head: string;
  messages: string[];
  tools: string | null;
}

export function splitChatRequest(request: ChatRequest): ChatRequestParts {
  const hasTools = request.tools !== undefined;
  return {
    // Emptied, not deleted: the rebuilt request keeps the original key order.
    head: JSON.stringify({ ...request, messages: [], ...(hasTools ? { tools: [] } : {}) }),
    messages: request.messages.map((message) => JSON.stringify(message)),
    tools: hasTools ? JSON.stringify(request.tools) : null,
  };
}

/** 128 bits of SHA-256: collisions are out of reach even for text a model or a file chose. */
const HASH_CHARACTERS = 22;

/** `redactText` is applied to every part before it is encoded and hashed. */
export function encodeChatRequest(request: ChatRequest, redactText: (text: string) => string): EncodedChatRequest {
  const parts = splitChatRequest(request);
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

/** One part's text. */
export function decodeFragment(request: EncodedChatRequest, fragment: EncodedFragment): string {
  return Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength).toString('utf8', fragment.offset, fragment.offset + fragment.length);
}
