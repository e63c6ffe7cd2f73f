import { randomBytes } from 'node:crypto';

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
  // Never an empty string: passthrough text may be compared with '' (outbound-encoding.ts).
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
