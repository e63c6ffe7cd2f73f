import type { ChatMessage } from './chat/chat-completions-api.ts';
import { isSameJsonValue } from './parse-json.ts';

/*
 * Codex resends a session's whole history on every turn, and the lowered messages of that history
 * come out the same turn after turn. The cache keeps, per session (Codex's prompt_cache_key, its
 * thread id), the messages of the session's last request and their JSON text. A message equal to the
 * one at the same place last time (value for value, keys in the same order) has the same text, so
 * only the new and the changed ones are serialised. Comparing costs a fraction of serialising:
 * strings are compared by their characters at once, never escaped or copied.
 *
 * The owner (the server, once per bridge) bounds what it keeps: the sessions used last, up to a total
 * of text. What it keeps are the lowered messages themselves, which share their strings with the
 * request they came from: about the request's own size per session.
 */

export interface MessageTextCache {
  /**
   * The JSON text of each message (`JSON.stringify(message)`), reusing the session's last texts where
   * its message is the same; remembers these messages for the session's next request.
   */
  serialise(session: string, messages: readonly ChatMessage[]): readonly string[];
  /** Messages whose text came from the cache so far (tests, the bench). */
  readonly reusedMessages: number;
}

/** Sessions kept at most: Codex's sub-agents are sessions of their own. */
export const DEFAULT_MESSAGE_CACHE_SESSIONS = 16;
/** Characters of text kept at most, over all sessions (about twice that in memory, with the messages). */
export const DEFAULT_MESSAGE_CACHE_CHARACTERS = 2_000_000;

interface SessionEntry {
  messages: readonly ChatMessage[];
  /** Handed out as they are: readonly, since the next request of the session reads them again. */
  texts: readonly string[];
  characters: number;
}

export function createMessageTextCache(settings: { maxSessions?: number; maxCharacters?: number } = {}): MessageTextCache {
  const maxSessions = Math.max(1, settings.maxSessions ?? DEFAULT_MESSAGE_CACHE_SESSIONS);
  const maxCharacters = Math.max(0, settings.maxCharacters ?? DEFAULT_MESSAGE_CACHE_CHARACTERS);
  // Map iteration order is insertion order: re-inserting on use makes the first key the least recently used.
  const sessions = new Map<string, SessionEntry>();
  let characters = 0;
  let reusedMessages = 0;
  const forget = (session: string): void => {
    const entry = sessions.get(session);
    if (entry === undefined) return;
    sessions.delete(session);
    characters -= entry.characters;
  };
  return {
    get reusedMessages() {
      return reusedMessages;
    },
    serialise(session, messages) {
      const last = sessions.get(session);
      forget(session);
      const texts: string[] = [];
      let total = 0;
      for (let index = 0; index < messages.length; index++) {
        const message = messages[index];
        const previous = last?.messages[index];
        const reuse = previous !== undefined && isSameJsonValue(previous, message);
        const text = reuse ? (last?.texts[index] as string) : JSON.stringify(message);
        if (reuse) reusedMessages += 1;
        texts.push(text);
        total += text.length;
      }
      // A session larger than the whole budget is not kept: it would only push every other one out.
      if (total <= maxCharacters) {
        sessions.set(session, { messages, texts, characters: total });
        characters += total;
        for (const oldest of sessions.keys()) {
          if (characters <= maxCharacters && sessions.size <= maxSessions) break;
          forget(oldest);
        }
      }
      return texts;
    },
  };
}
