import { chatCompletionChunkSchema, type ChatCompletionChunk } from '../chat/chat-completions-api.ts';
import { isContextOverflow, readEngineErrorEnvelope, readEngineErrorText, type EngineError } from '../engine-error.ts';
import { parseJson } from '../parse-json.ts';
import * as z from '../schema/zod.ts';

/** Every streamed chunk is checked. */
const parseChunk = (value: unknown) => z.safeParse(chatCompletionChunkSchema, value);

/**
 * One dispatched SSE event from a backend stream. `event` and `id` are null when the
 * event had no such line; `data` joins multiple `data:` lines with `\n`. Field names outside the SSE
 * standard are kept in `unknownFields` because 2025 llama.cpp builds send their mid-stream error as a
 * non-standard `error:` field: a standard reader would drop it and the failed stream
 * would look like an empty success.
 */
export interface SseEvent {
  event: string | null;
  data: string;
  id: string | null;
  unknownFields: Array<{ name: string; value: string }>;
}

/**
 * The longest SSE line, and the largest event (its `data:` lines together), the decoder holds while it
 * waits for the rest, in UTF-16 units. Without a cap, a backend that sends bytes without a line break
 * grows one string until the process runs out of memory. One line carries one chunk; even a proxy
 * that sends a whole answer as a single chunk stays far below 32 M (a 128k-token answer is about 0.5 M).
 */
export const MAX_SSE_LINE_CHARS = 32 * 1024 * 1024;

/** A backend stream broke a limit of the decoder: the stream cannot be read any further. */
export class SseLimitError extends Error {
  readonly reason = 'sse-limit' as const;

  static is(value: unknown): value is SseLimitError {
    return value instanceof Error && (value as { reason?: unknown }).reason === 'sse-limit';
  }
}

const LINE_FEED = 10;
const CARRIAGE_RETURN = 13;

/**
 * Incremental SSE reader for backend streams, modelled on openai-node's decoder: bytes go through a
 * streaming UTF-8 decoder (a multibyte character may be split across TCP chunks), lines end at `\n`,
 * `\r\n` or `\r`, `:` lines are comments, a blank line dispatches, and `end()` flushes the last event
 * because llama.cpp ends with `data: [DONE]` and a single newline.
 *
 * `id` is per event (not carried over as the browser's last-event-id): backends do not resume streams,
 * and a per-event value is what the traffic view wants to show.
 */
export class SseDecoder {
  private readonly textDecoder = new TextDecoder('utf-8');
  /** Per instance: a global regex carries `lastIndex` state. */
  private readonly lineBreak = /[\r\n]/g;
  /**
   * Text after the last line break, waiting for the rest of its line: kept as the pieces it came in
   * and joined once when the line ends, so a long line split over many chunks costs linear time
   * (joining or rescanning it per chunk would be quadratic).
   */
  private pendingParts: string[] = [];
  private pendingLength = 0;
  /** The previous chunk ended in `\r`; a `\n` starting the next chunk belongs to the same line break. */
  private skipLeadingLineFeed = false;
  private eventName: string | null = null;
  private eventId: string | null = null;
  private dataText: string | null = null;
  private unknownFields: Array<{ name: string; value: string }> = [];
  /** The last two bytes of the previous chunk: a real U+FFFD (EF BF BD) may be split across chunks. */
  private tailBytes: Uint8Array = new Uint8Array(0);
  private invalidBytes = 0;

  /**
   * How many U+FFFD the decoder put in place of bytes that are not UTF-8 (a real U+FFFD the backend
   * sent, encoded properly, is not counted): the text is kept, but the replacement is worth a warning.
   */
  get invalidUtf8Count(): number {
    return this.invalidBytes;
  }

  push(input: Uint8Array | string): SseEvent[] {
    const text = typeof input === 'string' ? input : this.decodeCounting(input);
    const events: SseEvent[] = [];
    this.consumeText(text, events);
    return events;
  }

  private decodeCounting(bytes: Uint8Array): string {
    const text = this.textDecoder.decode(bytes, { stream: true });
    let replacements = countReplacementCharacters(text);
    if (replacements > 0) {
      const joined = new Uint8Array(this.tailBytes.length + bytes.length);
      joined.set(this.tailBytes);
      joined.set(bytes, this.tailBytes.length);
      replacements -= countEncodedReplacementCharacters(joined);
      if (replacements > 0) this.invalidBytes += replacements;
    }
    this.tailBytes = bytes.slice(Math.max(0, bytes.length - 2));
    return text;
  }

  /** End of stream: flush the UTF-8 decoder, the unterminated last line and the undispatched event. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    // A character cut off by the end of the body becomes U+FFFD here.
    const rest = this.textDecoder.decode();
    this.invalidBytes += countReplacementCharacters(rest);
    this.consumeText(rest, events);
    if (this.pendingLength > 0) this.processLine(this.takePending(''), events);
    this.skipLeadingLineFeed = false;
    this.dispatch(events);
    return events;
  }

  private consumeText(input: string, events: SseEvent[]): void {
    let text = input;
    if (text.length === 0) return;
    if (this.skipLeadingLineFeed) {
      this.skipLeadingLineFeed = false;
      if (text.charCodeAt(0) === LINE_FEED) text = text.slice(1);
      if (text.length === 0) return;
    }
    let lineStart = 0;
    // Only the new text is scanned: the pending pieces hold no line break.
    this.lineBreak.lastIndex = 0;
    for (let match = this.lineBreak.exec(text); match !== null; match = this.lineBreak.exec(text)) {
      const breakIndex = match.index;
      const tail = text.slice(lineStart, breakIndex);
      this.processLine(this.pendingLength === 0 ? tail : this.takePending(tail), events);
      lineStart = breakIndex + 1;
      if (text.charCodeAt(breakIndex) === CARRIAGE_RETURN) {
        if (lineStart === text.length) this.skipLeadingLineFeed = true;
        else if (text.charCodeAt(lineStart) === LINE_FEED) lineStart += 1;
      }
      this.lineBreak.lastIndex = lineStart;
    }
    if (lineStart < text.length) {
      const rest = lineStart === 0 ? text : text.slice(lineStart);
      this.pendingLength += rest.length;
      this.checkLength(this.pendingLength, 'line');
      this.pendingParts.push(rest);
    }
  }

  /** The pending pieces and `tail` as one line; the pending state is empty afterwards. */
  private takePending(tail: string): string {
    this.checkLength(this.pendingLength + tail.length, 'line');
    this.pendingParts.push(tail);
    const line = this.pendingParts.join('');
    this.pendingParts = [];
    this.pendingLength = 0;
    return line;
  }

  private checkLength(length: number, what: 'line' | 'event'): void {
    if (length <= MAX_SSE_LINE_CHARS) return;
    this.pendingParts = [];
    this.pendingLength = 0;
    this.dataText = null;
    const cap = `${MAX_SSE_LINE_CHARS / 1024 / 1024} MB`;
    throw new SseLimitError(
      what === 'line'
        ? `backend sent an SSE line longer than ${cap} without a line break (the bridge's cap on one line)`
        : `backend sent an SSE event larger than ${cap} without the blank line that ends it (the bridge's cap on one event)`,
    );
  }

  private processLine(line: string, events: SseEvent[]): void {
    if (line.length === 0) {
      this.dispatch(events);
      return;
    }
    if (line.charCodeAt(0) === 58 /* ':' */) return;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* ' ' */) value = value.slice(1);
    switch (name) {
      case 'data':
        if (this.dataText !== null) this.checkLength(this.dataText.length + 1 + value.length, 'event');
        this.dataText = this.dataText === null ? value : `${this.dataText}\n${value}`;
        return;
      case 'event':
        this.eventName = value;
        return;
      case 'id':
        // The SSE standard ignores ids containing NUL.
        if (!value.includes('\u0000')) this.eventId = value;
        return;
      case 'retry':
        // Reconnection delay: meaningless for a one-shot backend request.
        return;
      default:
        this.unknownFields.push({ name, value });
    }
  }

  private dispatch(events: SseEvent[]): void {
    // As in the SSE standard, an event without data is not dispatched, except that an unknown field
    // alone (llama.cpp's `error:`) is: it carries the failure.
    if (this.dataText !== null || this.unknownFields.length > 0) {
      events.push({ event: this.eventName, data: this.dataText ?? '', id: this.eventId, unknownFields: this.unknownFields });
      this.unknownFields = [];
    }
    this.eventName = null;
    this.eventId = null;
    this.dataText = null;
  }
}

function countReplacementCharacters(text: string): number {
  let count = 0;
  for (let index = text.indexOf('\uFFFD'); index !== -1; index = text.indexOf('\uFFFD', index + 1)) count += 1;
  return count;
}

/** EF BF BD, U+FFFD as UTF-8: one the backend really sent. */
function countEncodedReplacementCharacters(bytes: Uint8Array): number {
  let count = 0;
  for (let index = bytes.indexOf(0xef); index !== -1 && index + 2 < bytes.length; index = bytes.indexOf(0xef, index + 1)) {
    if (bytes[index + 1] === 0xbf && bytes[index + 2] === 0xbd) count += 1;
  }
  return count;
}

/** OpenAI-compatible engines end the stream with `data: [DONE]`. */
export function isDoneSentinel(event: SseEvent): boolean {
  return event.data.trim() === '[DONE]';
}

export type ChatStreamEvent =
  | { kind: 'done' }
  | { kind: 'chunk'; chunk: ChatCompletionChunk; raw: string }
  | { kind: 'error'; message: string; code: 'context_length_exceeded' | 'server_error'; raw: string }
  | { kind: 'invalid'; message: string; raw: string }
  /** Carries nothing the bridge reads (an `event: ping` or unknown field without data); skipped, kept for the log. */
  | { kind: 'ignored'; message: string; raw: string };

/**
 * Classifies one backend SSE event. Errors come in every shape the engines use: a `data:` frame with
 * a top-level `error` (object with `message`, or a string), SGLang's flat `{"object":"error",…}`, and
 * the 2025 llama.cpp `error:` field holding JSON or text. Context overflow is recognised so Codex gets
 * `context_length_exceeded` (no retry) instead of `server_error`.
 */
export function parseChatStreamEvent(event: SseEvent): ChatStreamEvent {
  const errorField = event.unknownFields.find((field) => field.name.toLowerCase() === 'error');
  if (errorField !== undefined) return createErrorEvent(readEngineErrorText(errorField.value), errorField.value);

  if (isDoneSentinel(event)) return { kind: 'done' };

  const raw = event.data;
  if (event.data.length === 0) {
    const names = event.unknownFields.map((field) => field.name).join(', ');
    const detail = names.length > 0 ? `only unknown SSE fields (${names})` : 'an empty data field';
    // Per the SSE standard an event without data carries no message; proxies send such pings.
    return { kind: 'ignored', message: `backend sent an SSE event with ${detail}`, raw };
  }

  const parsed = parseJson(raw);
  if (!parsed.success) return { kind: 'invalid', message: `backend sent a chunk that is not JSON: ${parsed.error.message}`, raw };

  const error = readEngineErrorEnvelope(parsed.value);
  if (error !== null) return createErrorEvent(error, raw);

  const chunk = parseChunk(parsed.value);
  if (!chunk.success) {
    const issue = chunk.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    return { kind: 'invalid', message: `backend sent a malformed chunk${where}: ${issue?.message ?? 'invalid'}`, raw };
  }
  return { kind: 'chunk', chunk: chunk.data, raw };
}

function createErrorEvent(error: EngineError, raw: string): ChatStreamEvent {
  return { kind: 'error', message: error.message, code: isContextOverflow(error) ? 'context_length_exceeded' : 'server_error', raw };
}
