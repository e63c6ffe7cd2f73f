import type { ChatMessage } from './chat/chat-completions-api.ts';
import { isSameJsonValue } from './parse-json.ts';

/*
 * Codex resends a session's whole history on every turn, and the lowered messages of that history
 * come out the same turn after turn. The cache keeps, per session (Codex's prompt_cache_key, its
 * thread id), the messages of the session's last request and their JSON text as UTF-8 bytes. A
 * message equal to the one at the same place last time (value for value, keys in the same order) has
 * the same text, so only the new and the changed ones are serialised and encoded; the others' bytes
 * are copied. Comparing costs a fraction of serialising: strings are compared by their characters at
 * once, never escaped or copied.
 *
 * Bytes rather than text, because bytes are what goes upstream: a request spliced together from
 * texts is a JavaScript string of many pieces that must be flattened and then encoded, which for the
 * bench's 49 kB Codex request cost about five times what copying the kept bytes costs.
 *
 * The owner (the server, once per bridge) bounds what it keeps: the sessions used last, up to a total
 * of bytes. What it keeps are the lowered messages themselves, which share their strings with the
 * request they came from, and their bytes (outside V8's heap): about twice the request's size per
 * session.
 */

/** A request's messages as JSON, from the message text cache. */
export interface SerialisedMessages {
  /** `JSON.stringify(messages)` as UTF-8: `[`, each message's text, separated by commas, `]`. Read only. */
  readonly bytes: Uint8Array;
  /** How many messages. */
  readonly count: number;
  /** Each message's JSON text (`JSON.stringify(message)`), decoded from the bytes when asked for. */
  readTexts(): string[];
}

export interface MessageTextCache {
  /**
   * The messages' JSON, reusing the session's last bytes where its message is the same; remembers
   * these messages for the session's next request.
   */
  serialise(session: string, messages: readonly ChatMessage[]): SerialisedMessages;
  /** Messages whose text came from the cache so far (tests, the bench). */
  readonly reusedMessages: number;
}

/** Sessions kept at most: Codex's sub-agents are sessions of their own. */
export const DEFAULT_MESSAGE_CACHE_SESSIONS = 16;
/** Bytes of JSON kept at most, over all sessions (about twice that in memory, with the messages). */
export const DEFAULT_MESSAGE_CACHE_BYTES = 2_000_000;

const OPEN_BRACKET = 0x5b;
const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;

interface SessionEntry {
  messages: readonly ChatMessage[];
  bytes: Uint8Array;
  /** Message i's text is bytes[starts[i], starts[i + 1] - 1): each is followed by a comma or the closing bracket. */
  starts: Uint32Array;
}

function serialised(bytes: Uint8Array, starts: Uint32Array): SerialisedMessages {
  return {
    bytes,
    count: starts.length - 1,
    readTexts() {
      const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      return Array.from({ length: starts.length - 1 }, (_, index) => view.toString('utf8', starts[index] as number, (starts[index + 1] as number) - 1));
    },
  };
}

export function createMessageTextCache(settings: { maxSessions?: number; maxBytes?: number } = {}): MessageTextCache {
  const maxSessions = Math.max(1, settings.maxSessions ?? DEFAULT_MESSAGE_CACHE_SESSIONS);
  const maxBytes = Math.max(0, settings.maxBytes ?? DEFAULT_MESSAGE_CACHE_BYTES);
  // Map iteration order is insertion order: re-inserting on use makes the first key the least recently used.
  const sessions = new Map<string, SessionEntry>();
  let keptBytes = 0;
  let reusedMessages = 0;
  const forget = (session: string): void => {
    const entry = sessions.get(session);
    if (entry === undefined) return;
    sessions.delete(session);
    keptBytes -= entry.bytes.byteLength;
  };
  return {
    get reusedMessages() {
      return reusedMessages;
    },
    serialise(session, messages) {
      const last = sessions.get(session);
      forget(session);
      // First pass: which messages are the same as last time, and the text of the others, to size the bytes.
      const count = messages.length;
      const texts: Array<string | null> = new Array<string | null>(count);
      // What the entry keeps: the message kept last time wherever this one is the same. This request's
      // own copy then dies young, with the request, instead of surviving young-generation GCs and
      // being promoted because the cache still holds it.
      const kept: ChatMessage[] = new Array<ChatMessage>(count);
      const lengths = new Uint32Array(count);
      let total = count === 0 ? 2 : count + 1;
      for (let index = 0; index < count; index++) {
        const previous = last?.messages[index];
        if (previous !== undefined && isSameJsonValue(previous, messages[index])) {
          texts[index] = null;
          kept[index] = previous;
          lengths[index] = (last?.starts[index + 1] as number) - (last?.starts[index] as number) - 1;
          reusedMessages += 1;
        } else {
          const text = JSON.stringify(messages[index]);
          texts[index] = text;
          kept[index] = messages[index] as ChatMessage;
          lengths[index] = Buffer.byteLength(text, 'utf8');
        }
        total += lengths[index] as number;
      }
      // Second pass: every byte written once. Unpooled, so keeping it keeps nothing else alive.
      const bytes = Buffer.allocUnsafeSlow(total);
      const starts = new Uint32Array(count + 1);
      bytes[0] = OPEN_BRACKET;
      let offset = 1;
      for (let index = 0; index < count; index++) {
        starts[index] = offset;
        const text = texts[index];
        if (typeof text === 'string') {
          bytes.write(text, offset, 'utf8');
        } else {
          const from = last?.starts[index] as number;
          bytes.set((last as SessionEntry).bytes.subarray(from, from + (lengths[index] as number)), offset);
        }
        offset += lengths[index] as number;
        bytes[offset++] = index === count - 1 ? CLOSE_BRACKET : COMMA;
      }
      if (count === 0) bytes[offset++] = CLOSE_BRACKET;
      starts[count] = offset;
      // A session larger than the whole budget is not kept: it would only push every other one out.
      if (total <= maxBytes) {
        sessions.set(session, { messages: kept, bytes, starts });
        keptBytes += total;
        for (const oldest of sessions.keys()) {
          if (keptBytes <= maxBytes && sessions.size <= maxSessions) break;
          forget(oldest);
        }
      }
      return serialised(bytes, starts);
    },
  };
}
