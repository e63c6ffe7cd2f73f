import type { ServerResponse } from 'node:http';
import type { ResponsesResponse, ResponsesStreamEvent } from '../core/responses/responses-output.ts';
import { encodeSseEvent } from '../core/sse/sse-encoder.ts';
import type { HttpAnswer } from './failure-map.ts';
import { sendJson } from './send-json.ts';

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // No explicit `connection`: Node answers `keep-alive` to a keep-alive request (Codex) by itself, and
  // `close` to a client that asked to close; forcing keep-alive held such a client's stream open until
  // the server's idle timeout (5 s) after the last event.
  // Reverse proxies (nginx) buffer responses unless told otherwise; Codex needs each event now.
  'x-accel-buffering': 'no',
} as const;

/**
 * Where one exchange's answer goes toward Codex: an SSE stream (`stream: true`, what Codex sends) or
 * one JSON body. The exchange writes every batch of events here and ends with the final response or
 * an HTTP error answer; the sink decides what of it reaches the socket.
 */
export interface ResponseSink {
  readonly kind: 'stream' | 'json';
  /** The HTTP status is on the wire: from now on a failure can only be a `response.failed` event. */
  readonly committed: boolean;
  /** Codex closed the connection before the answer ended: nothing more is written. */
  readonly clientGone: boolean;
  /**
   * Writes a batch of events (a stream, once committed; a JSON answer keeps nothing, its body is the
   * final response). False when Codex's socket is full: the caller stops reading until 'drain'.
   */
  write(events: readonly ResponsesStreamEvent[]): boolean;
  /** The answer ended with `final`; a stream closes, a JSON answer sends it as its body. */
  end(final: ResponsesResponse): void;
  /** A failure before anything was committed: the HTTP error answer. */
  sendHttp(answer: HttpAnswer): void;
  /** Stops the sink's timers (the keepalive); the answer is over or about to be. */
  stop(): void;
}

/** Watches for Codex hanging up before the answer is complete: `gone` turns true and `onClientGone` runs. */
class ClientWatch {
  gone = false;

  constructor(response: ServerResponse, onClientGone: () => void) {
    response.on('close', () => {
      if (!response.writableFinished) {
        this.gone = true;
        onClientGone();
      }
    });
  }
}

export interface StreamSinkOptions {
  /** Seconds without any event before `onKeepalive` is asked for events; 0 disables. */
  keepaliveSeconds: number;
  onKeepalive: () => void;
  onClientGone: () => void;
  /** A deferred write found Codex's socket full: the caller stops reading the backend until 'drain'. */
  onFull: () => void;
}

export interface StreamSink extends ResponseSink {
  readonly kind: 'stream';
  /**
   * Writes the 200 and the SSE headers and starts the keepalive. False when already committed or
   * Codex is gone. The headers leave with the first events written (one write instead of two).
   */
  commit(): boolean;
}

class StreamResponseSink implements StreamSink {
  readonly kind = 'stream';
  private readonly response: ServerResponse;
  private readonly options: StreamSinkOptions;
  private readonly watch: ClientWatch;
  private isCommitted = false;
  private keepaliveTimer: NodeJS.Timeout | null = null;
  /** Committed, and nothing written since: the head still waits in Node for the first events. */
  private headPending = false;
  /**
   * Encoded events not yet handed to the socket. The backend's bytes of one socket read arrive as
   * many body chunks in one run of the event loop (an engine writes each SSE event as an HTTP chunk of
   * its own); their events are joined and written once, when that run ends (a microtask), instead of
   * one response.write per chunk: no event waits for a later turn of the loop, and the socket gets one
   * write with one chunk header instead of dozens.
   */
  private pendingText = '';
  private flushQueued = false;
  /** An arrow function, so it can be handed to queueMicrotask as it is. */
  private readonly flush = (): void => {
    this.flushQueued = false;
    const text = this.pendingText;
    this.pendingText = '';
    if (text.length === 0 || this.watch.gone) return;
    this.headPending = false;
    if (!this.response.write(text)) this.options.onFull();
  };

  constructor(response: ServerResponse, options: StreamSinkOptions) {
    this.response = response;
    this.options = options;
    this.watch = new ClientWatch(response, options.onClientGone);
  }

  get committed(): boolean {
    return this.isCommitted;
  }

  get clientGone(): boolean {
    return this.watch.gone;
  }

  commit(): boolean {
    if (this.isCommitted || this.watch.gone) return false;
    this.isCommitted = true;
    this.response.writeHead(200, SSE_HEADERS);
    this.headPending = true;
    if (this.options.keepaliveSeconds > 0) this.keepaliveTimer = setInterval(this.options.onKeepalive, this.options.keepaliveSeconds * 1000);
    return true;
  }

  write(events: readonly ResponsesStreamEvent[]): boolean {
    if (!this.isCommitted || this.watch.gone) return true;
    for (const event of events) this.pendingText += encodeSseEvent(event);
    if (this.pendingText.length === 0) {
      // Nothing to carry the head: it leaves alone, so Codex sees its status now.
      if (this.headPending) this.response.flushHeaders();
      this.headPending = false;
      return true;
    }
    this.keepaliveTimer?.refresh();
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flush);
    }
    return !this.response.writableNeedDrain;
  }

  end(): void {
    this.stop();
    if (this.watch.gone) return;
    // The last events leave with the end of the body: one write.
    const text = this.pendingText;
    this.pendingText = '';
    if (text.length > 0) this.response.end(text);
    else this.response.end();
  }

  sendHttp(answer: HttpAnswer): void {
    this.stop();
    if (!this.watch.gone) sendJson(this.response, answer.status, answer.body, answer.headers);
  }

  stop(): void {
    if (this.keepaliveTimer) clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = null;
  }
}

export function createStreamSink(response: ServerResponse, options: StreamSinkOptions): StreamSink {
  return new StreamResponseSink(response, options);
}

/** `stream: false`: the same Response object as one JSON body; a failure is an HTTP error. */
class JsonResponseSink implements ResponseSink {
  readonly kind = 'json';
  readonly committed = false;
  private readonly response: ServerResponse;
  private readonly watch: ClientWatch;

  constructor(response: ServerResponse, options: { onClientGone: () => void }) {
    this.response = response;
    this.watch = new ClientWatch(response, options.onClientGone);
  }

  get clientGone(): boolean {
    return this.watch.gone;
  }

  write(): boolean {
    return true;
  }

  end(final: ResponsesResponse): void {
    if (!this.watch.gone) sendJson(this.response, 200, final);
  }

  sendHttp(answer: HttpAnswer): void {
    if (!this.watch.gone) sendJson(this.response, answer.status, answer.body, answer.headers);
  }

  stop(): void {}
}

export function createJsonSink(response: ServerResponse, options: { onClientGone: () => void }): ResponseSink {
  return new JsonResponseSink(response, options);
}
