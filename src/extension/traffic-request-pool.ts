import type { ChatRequest } from '../core/chat/chat-completions-api.ts';
import { decodeFragment, splitChatRequest } from '../core/chat-request-fragments.ts';
import type { EncodedChatRequest, EncodedFragment } from '../core/traffic-event.ts';
import { isPlainObject, parseJson } from '../core/parse-json.ts';

/*
 * The lowered requests of a session, each shared part kept once. Codex resends the whole
 * conversation on every turn, so consecutive lowered requests share almost all their messages and
 * the whole tool list. Each message and each tool list is therefore kept once, as JSON text in a
 * reference-counted pool, and every request is a list of references: a long session costs about
 * one copy of its history, not one per turn.
 *
 * A request arrives in one of two forms. As objects (a bridge on this thread, a followed bridge): each
 * part is serialised and redacted here and keyed by its text. Encoded (a bridge in a worker thread):
 * its parts come serialised and redacted already, each with a content hash, and are keyed by that
 * hash, so a part the pool holds costs one Map lookup. A part it does not hold is kept as its UTF-8
 * bytes and decoded only when read (the panel shows it, a search or an export walks it): decoding
 * the 10 MB first turn of a session takes tens of milliseconds, too long for the host's thread.
 */

/** Keys of encoded parts; a text key is JSON (it starts with `{` or `[`) and can never look like this. */
const HASH_KEY_PREFIX = 'sha256:';

/** A JSON fragment kept once however many requests contain it. */
export interface PoolEntry {
  /** The text itself, or the part's content hash (encoded requests). */
  readonly key: string;
  /** The JSON text (decoded on each read for a part kept as bytes). */
  readonly text: string;
  references: number;
  /** UTF-8 length, for the request size shown in the list. */
  readonly utf8Bytes: number;
  /** What the pool counts against the budget: UTF-16 bytes of a text, the length of kept bytes. */
  readonly retainedBytes: number;
}

const utf8 = new TextDecoder();

/** A part kept as its own copy of the bytes (the transferred buffer of its request is not kept alive). */
function createBytesEntry(key: string, bytes: Uint8Array): PoolEntry {
  return {
    key,
    get text() {
      return utf8.decode(bytes);
    },
    references: 1,
    utf8Bytes: bytes.byteLength,
    retainedBytes: bytes.byteLength,
  };
}

export interface StoredRequest {
  /** The request as JSON with `messages` (and `tools`, when present) emptied; key order kept. */
  head: string;
  messages: PoolEntry[];
  tools: PoolEntry | null;
}

/** Retained bytes are counted as UTF-16 (an upper bound of V8's string storage). */
export function stringBytes(text: string | null | undefined): number {
  return text ? text.length * 2 : 0;
}

export class RequestPool {
  private readonly entries = new Map<string, PoolEntry>();
  private pooledBytes = 0;

  /** @param redactText applied to every fragment before it is kept (and before it is compared). */
  constructor(private readonly redactText: (text: string) => string) {}

  /** Bytes of the pooled fragments (the heads are the caller's to count). */
  get bytes(): number {
    return this.pooledBytes;
  }

  store(request: ChatRequest): StoredRequest {
    const parts = splitChatRequest(request);
    return {
      head: this.redactText(parts.head),
      messages: parts.messages.map((message) => this.acquire(message)),
      tools: parts.tools === null ? null : this.acquire(parts.tools),
    };
  }

  /** A request from a bridge in a worker thread: its parts were redacted there; only unknown ones are decoded. */
  storeEncoded(request: EncodedChatRequest): StoredRequest {
    return {
      // The head is small and not pooled: redacted once more here, which costs nothing.
      head: this.redactText(decodeFragment(request, request.head)),
      messages: request.messages.map((fragment) => this.acquireEncoded(request, fragment)),
      tools: request.tools === null ? null : this.acquireEncoded(request, request.tools),
    };
  }

  /** Gives back a request's fragments; a fragment no other request holds is freed. */
  releaseRequest(request: StoredRequest): void {
    for (const entry of request.messages) this.release(entry);
    if (request.tools) this.release(request.tools);
  }

  clear(): void {
    this.entries.clear();
    this.pooledBytes = 0;
  }

  private acquire(json: string): PoolEntry {
    const text = this.redactText(json);
    return this.acquireKey(text, () => ({ key: text, text, references: 1, utf8Bytes: Buffer.byteLength(text, 'utf8'), retainedBytes: stringBytes(text) }));
  }

  private acquireEncoded(request: EncodedChatRequest, fragment: EncodedFragment): PoolEntry {
    const key = `${HASH_KEY_PREFIX}${fragment.hash}`;
    return this.acquireKey(key, () => createBytesEntry(key, request.bytes.slice(fragment.offset, fragment.offset + fragment.length)));
  }

  private acquireKey(key: string, create: () => PoolEntry): PoolEntry {
    const existing = this.entries.get(key);
    if (existing) {
      existing.references += 1;
      return existing;
    }
    const entry = create();
    this.entries.set(key, entry);
    this.pooledBytes += entry.retainedBytes;
    return entry;
  }

  private release(entry: PoolEntry): void {
    entry.references -= 1;
    if (entry.references > 0) return;
    this.entries.delete(entry.key);
    this.pooledBytes -= entry.retainedBytes;
  }
}

/** Exact UTF-8 size of the compact request JSON, from its parts. */
export function measureStoredRequest(request: StoredRequest): number {
  const messagesBytes = request.messages.reduce((total, entry) => total + entry.utf8Bytes, 0) + Math.max(0, request.messages.length - 1);
  // The head holds `[]` for messages (and tools); the pooled parts carry their own brackets.
  return Buffer.byteLength(request.head, 'utf8') + messagesBytes + (request.tools ? request.tools.utf8Bytes - 2 : 0);
}

/** The request as it was sent, rebuilt from its head and fragments. */
export function rebuildStoredRequest(request: StoredRequest): unknown {
  const head = parseJson(request.head);
  if (!head.success || !isPlainObject(head.value)) return null;
  const value: Record<string, unknown> = head.value;
  value.messages = request.messages.map((entry) => {
    const parsed = parseJson(entry.text);
    return parsed.success ? parsed.value : entry.text;
  });
  if (request.tools) {
    const parsed = parseJson(request.tools.text);
    value.tools = parsed.success ? parsed.value : request.tools.text;
  }
  return value;
}
