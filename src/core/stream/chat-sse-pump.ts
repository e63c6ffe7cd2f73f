import { chatCompletionSchema } from '../chat/chat-completions-api.ts';
import { parseJson } from '../parse-json.ts';
import type { ResponsesStreamEvent } from '../responses/responses-output.ts';
import * as z from '../schema/zod.ts';
import { SseDecoder, SseLimitError, parseChatStreamEvent, type SseEvent } from '../sse/sse-decoder.ts';
import { createWarning } from '../warnings.ts';
import type { ChatStreamTranslator } from './chat-stream-to-responses-events.ts';
import { convertChatCompletionToChunk } from './convert-chat-completion-to-chunk.ts';

export interface ChatSsePumpOptions {
  /** Names the backend in failure messages (its base URL); without it the messages name no source. */
  source?: string;
  /** An event that carries nothing the bridge reads (a proxy's ping): no failure, but worth a log line. */
  onIgnored?: (message: string) => void;
}

function naming(source: string | undefined): string {
  return source === undefined ? '' : ` (${source})`;
}

/**
 * The one loop from a backend's Chat Completions SSE body to Responses events: bytes are decoded into
 * SSE events, each is classified, chunks go through the stream translator, an error frame or an
 * unreadable frame fails the response, `[DONE]` stops the reading, and the end of the body flushes the
 * decoder and finishes the response. Pure: the caller reads the bytes and writes the events, so the
 * server, the tests and the bench all drive this same code.
 */
export class ChatSsePump {
  private readonly decoder = new SseDecoder();
  private readonly translator: ChatStreamTranslator;
  private readonly options: ChatSsePumpOptions;
  /** False after `[DONE]`, an error frame or an unreadable frame: later bytes are not the answer's. */
  private reading = true;
  private invalidUtf8Noted = false;

  constructor(translator: ChatStreamTranslator, options: ChatSsePumpOptions = {}) {
    this.translator = translator;
    this.options = options;
  }

  /** Whether more of the body is wanted: false once the stream said its last word or the response ended. */
  get wantsMore(): boolean {
    return this.reading && !this.translator.terminated;
  }

  /** One piece of the body, cut anywhere (inside a line, inside a UTF-8 character). */
  push(bytes: Uint8Array | string): ResponsesStreamEvent[] {
    const events: ResponsesStreamEvent[] = [];
    let decoded: SseEvent[];
    try {
      decoded = this.decoder.push(bytes);
    } catch (error) {
      if (!SseLimitError.is(error)) throw error;
      this.reading = false;
      events.push(...this.translator.fail({ code: 'server_error', message: `${error.message}${naming(this.options.source)}; the bridge stopped reading the backend` }));
      return events;
    }
    this.noticeInvalidUtf8();
    for (const event of decoded) if (this.reading) this.handle(event, events);
    return events;
  }

  /** The body ended: its last unterminated event still counts, then the response finishes (failed without a finish reason). */
  end(): ResponsesStreamEvent[] {
    const events: ResponsesStreamEvent[] = [];
    if (this.wantsMore) {
      const decoded = this.decoder.end();
      this.noticeInvalidUtf8();
      for (const event of decoded) if (this.reading) this.handle(event, events);
    }
    if (!this.translator.terminated) events.push(...this.translator.finish());
    return events;
  }

  /** Once per answer: the first bytes that are not UTF-8 are named; the text keeps U+FFFD in their place. */
  private noticeInvalidUtf8(): void {
    if (this.invalidUtf8Noted || this.decoder.invalidUtf8Count === 0) return;
    this.invalidUtf8Noted = true;
    this.translator.recordWarning(
      createWarning('invalid_utf8', `the backend${naming(this.options.source)} sent bytes that are not valid UTF-8; each was replaced with U+FFFD (\uFFFD) in the answer (an engine or proxy with a wrong character encoding)`),
    );
  }

  private handle(event: SseEvent, events: ResponsesStreamEvent[]): void {
    const parsed = parseChatStreamEvent(event);
    switch (parsed.kind) {
      case 'done':
        this.reading = false;
        // Nothing after `[DONE]` is the answer's: the response ends now, so its last events leave
        // with the bytes that carried `[DONE]` instead of waiting for the body's end.
        if (!this.translator.terminated) events.push(...this.translator.finish());
        return;
      case 'chunk':
        events.push(...this.translator.push(parsed.chunk));
        return;
      case 'error':
        this.reading = false;
        events.push(...this.translator.fail({ code: parsed.code, message: `backend stream failed${naming(this.options.source)}: ${parsed.message}` }));
        return;
      case 'ignored':
        this.options.onIgnored?.(parsed.message);
        return;
      case 'invalid':
        this.reading = false;
        events.push(...this.translator.fail({ code: 'server_error', message: `backend sent an unreadable stream frame${naming(this.options.source)}: ${parsed.message}` }));
        return;
      default: {
        const unexpected: never = parsed;
        throw new Error(`unhandled stream event ${String(unexpected)}`);
      }
    }
  }
}

/**
 * A backend that answers a stream request with one JSON completion (a proxy that does not stream):
 * the completion goes through the same translator as one chunk, so both shapes are lifted alike.
 */
export function liftJsonCompletion(translator: ChatStreamTranslator, text: string, options: Pick<ChatSsePumpOptions, 'source'> = {}): ResponsesStreamEvent[] {
  const parsed = parseJson(text);
  const completion = parsed.success ? z.safeParse(chatCompletionSchema, parsed.value) : null;
  if (!completion?.success) {
    return translator.fail({ code: 'server_error', message: `backend answered a stream request with unreadable JSON${naming(options.source)}` });
  }
  const events = translator.push(convertChatCompletionToChunk(completion.data));
  if (!translator.terminated) events.push(...translator.finish());
  return events;
}
