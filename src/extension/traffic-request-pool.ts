import { isPlainObject, parseJson } from '../core/parse-json.ts';
import { decodeFragment, type EncodedFragment, type EncodedRequestParts } from '../server/start-event-encoding.ts';

/*
 * The lowered requests of a session, each shared part kept once. Codex resends the whole
 * conversation on every turn, so consecutive lowered requests share almost all their messages and
 * the whole tool list. Each message and each tool list is therefore kept once, as JSON text in a
 * reference-counted pool, and every request is a list of references: a long session costs about
 * one copy of its history, not one per turn.
 *
 * A request arrives encoded by the bridge's worker thread (its own bridge's or a followed one's):
 * its parts come serialised and redacted already, each with a content hash, and are keyed by that
 * hash, so a part the pool holds costs one Map lookup. The parts it does not hold are copied, all
 * of one request's together, into one block of UTF-8 bytes, and decoded only when read (the panel
 * shows one, a search or an export walks them): decoding or copying the 10 MB first turn of a session
 * part by part takes tens of milliseconds, too long for the host's thread. A block is counted whole
 * until its last part is freed, so the budget sees what is really kept.
 */


/** The new parts of one encoded request, copied out of its transferred buffer (which is not kept). */
interface ByteBlock {
  readonly byteLength: number;
  /** Parts of it still in the pool. */
  liveEntries: number;
}

const utf8 = new TextDecoder();

/** A JSON fragment kept once however many requests contain it, as bytes decoded on each read. */
export class PoolEntry {
  references = 0;
  /** UTF-8 length, for the request size shown in the list. */
  readonly utf8Bytes: number;

  constructor(
    /** The part's content hash. */
    readonly key: string,
    private readonly bytes: Uint8Array,
    readonly block: ByteBlock,
  ) {
    this.utf8Bytes = bytes.byteLength;
    block.liveEntries += 1;
  }

  get text(): string {
    return utf8.decode(this.bytes);
  }
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

  /** A request as the worker thread encoded it: its parts were redacted there; only unknown ones are copied. */
  storeEncoded(request: EncodedRequestParts): StoredRequest {
    const keyOf = (fragment: EncodedFragment): string => fragment.hash;
    const parts = request.tools === null ? request.messages : [...request.messages, request.tools];
    const fresh = new Map<string, EncodedFragment>();
    let freshBytes = 0;
    for (const fragment of parts) {
      const key = keyOf(fragment);
      if (this.entries.has(key) || fresh.has(key)) continue;
      fresh.set(key, fragment);
      freshBytes += fragment.length;
    }
    if (fresh.size > 0) {
      const copy = new Uint8Array(freshBytes);
      const block: ByteBlock = { byteLength: freshBytes, liveEntries: 0 };
      let offset = 0;
      for (const [key, fragment] of fresh) {
        copy.set(request.bytes.subarray(fragment.offset, fragment.offset + fragment.length), offset);
        this.entries.set(key, new PoolEntry(key, copy.subarray(offset, offset + fragment.length), block));
        offset += fragment.length;
      }
      this.pooledBytes += block.byteLength;
    }
    const take = (fragment: EncodedFragment): PoolEntry => {
      const entry = this.entries.get(keyOf(fragment)) as PoolEntry;
      entry.references += 1;
      return entry;
    };
    return {
      // The head is small and not pooled: redacted once more here, which costs nothing.
      head: this.redactText(decodeFragment(request, request.head)),
      messages: request.messages.map(take),
      tools: request.tools === null ? null : take(request.tools),
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

  private release(entry: PoolEntry): void {
    entry.references -= 1;
    if (entry.references > 0) return;
    this.entries.delete(entry.key);
    entry.block.liveEntries -= 1;
    if (entry.block.liveEntries === 0) this.pooledBytes -= entry.block.byteLength;
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
