import type { ChatRequest } from './chat/chat-completions-api.ts';
import { joinChatRequestParts, splitChatRequest, type KnownTexts } from './chat-request-fragments.ts';
import type { LargeStringTable } from './large-json-strings.ts';
import type { ChatRequestParts } from './traffic-event.ts';

/** A lowered request ready to send, and what the traffic panel may read of it. */
export interface SerialisedChatRequest {
  /** What goes upstream: the request's JSON text, or its bytes when long strings were spliced in. */
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

/**
 * `JSON.stringify(request)`, member by member, with the known texts put in instead of serialising
 * those members again: the same bytes, since JSON.stringify also writes an object's members in order
 * and leaves out those whose value it cannot write (undefined).
 */
function stringifyWithKnownTexts(request: ChatRequest, known: KnownTexts): string {
  let text = '';
  for (const [key, value] of Object.entries(request)) {
    const member =
      key === 'tools' && known.tools !== null ? known.tools : key === 'messages' && known.messages !== null ? `[${known.messages.join(',')}]` : (JSON.stringify(value) as string | undefined);
    if (member === undefined) continue;
    text += `${text.length === 0 ? '{' : ','}${JSON.stringify(key)}:${member}`;
  }
  return text.length === 0 ? '{}' : `${text}}`;
}

/**
 * Serialises a lowered request once. With `byParts` the request is serialised part by part and the
 * parts are joined for the wire, so the panel keeps the same parts without a second serialisation.
 * With `largeStrings` the request holds placeholders for the body's long strings
 * (large-json-strings.ts): they are spliced back as bytes on the way out, and whatever reads the
 * request or its parts for the panel gets the real text, built only when it is read (after the
 * request has left: the worker encodes traffic on its next loop turn).
 */
export function serialiseChatRequest(
  request: ChatRequest,
  options: { byParts: boolean; largeStrings: LargeStringTable | null; known?: Partial<KnownTexts> },
): SerialisedChatRequest {
  const { largeStrings: table } = options;
  // Texts of these very parts: long strings they hold are spliced back like the rest's.
  const known: KnownTexts = {
    tools: request.tools !== undefined ? (options.known?.tools ?? null) : null,
    messages: options.known?.messages?.length === request.messages.length ? options.known.messages : null,
  };
  const parts = options.byParts ? splitChatRequest(request, known) : null;
  const text = parts ? joinChatRequestParts(parts) : known.tools !== null || known.messages !== null ? stringifyWithKnownTexts(request, known) : JSON.stringify(request);
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
