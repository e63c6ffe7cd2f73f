import type { ServerResponse } from 'node:http';
import type { ResponsesResponse, ResponsesStreamEvent } from '../core/responses/responses-output.ts';
import { encodeResponsesEvent } from '../core/sse/sse-encoder.ts';
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

/** The events that open every stream, before the model's first output. */
function isStartEvent(event: ResponsesStreamEvent): boolean {
  return event.type === 'response.created' || event.type === 'response.in_progress';
}

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

/** Watches for Codex hanging up before the answer is complete; the returned function says whether it did. */
function watchClient(response: ServerResponse, onClientGone: () => void): () => boolean {
  let gone = false;
  response.on('close', () => {
    if (!response.writableFinished) {
      gone = true;
      onClientGone();
    }
  });
  return () => gone;
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

export function createStreamSink(response: ServerResponse, options: StreamSinkOptions): StreamSink {
  const isClientGone = watchClient(response, options.onClientGone);
  let committed = false;
  let keepaliveTimer: NodeJS.Timeout | null = null;
  /** Committed, and nothing written since: the head still waits in Node for the first events. */
  let headPending = false;
  /**
   * Encoded events not yet handed to the socket. The backend's bytes of one socket read arrive as
   * many body chunks in one run of the event loop (an engine writes each SSE event as an HTTP chunk of
   * its own); their events are joined and written once, when that run ends (a microtask), instead of
   * one response.write per chunk: no event waits for a later turn of the loop, and the socket gets one
   * write with one chunk header instead of dozens.
   */
  let pendingText = '';
  let flushQueued = false;
  /** The model's first output (an item, a delta) has left: what Codex's user waits for. */
  let outputSent = false;
  const flush = (): void => {
    flushQueued = false;
    const text = pendingText;
    pendingText = '';
    if (text.length === 0 || isClientGone()) return;
    headPending = false;
    if (!response.write(text)) options.onFull();
  };
  /**
   * The model's first output leaves at once, not with the rest of its socket read. Node's HTTP
   * response corks the socket on a write until the next tick, so the events of every chunk still to be
   * translated in that read would otherwise leave with it: an engine that sends its first tokens in
   * one burst (after prefill, or the bench's whole short answer) had its first delta wait for all of
   * them (about 0.2 ms for a 16-chunk answer). One more socket write per answer, once.
   */
  const sendFirstOutput = (): void => {
    outputSent = true;
    flush();
    response.socket?.uncork();
  };
  const sink: StreamSink = {
    kind: 'stream',
    get committed() {
      return committed;
    },
    get clientGone() {
      return isClientGone();
    },
    commit() {
      if (committed || isClientGone()) return false;
      committed = true;
      response.writeHead(200, SSE_HEADERS);
      headPending = true;
      if (options.keepaliveSeconds > 0) keepaliveTimer = setInterval(options.onKeepalive, options.keepaliveSeconds * 1000);
      return true;
    },
    write(events) {
      if (!committed || isClientGone()) return true;
      for (const event of events) pendingText += encodeResponsesEvent(event);
      if (pendingText.length === 0) {
        // Nothing to carry the head: it leaves alone, so Codex sees its status now.
        if (headPending) response.flushHeaders();
        headPending = false;
        return true;
      }
      keepaliveTimer?.refresh();
      if (!outputSent && !events.every(isStartEvent)) {
        sendFirstOutput();
        return !response.writableNeedDrain;
      }
      if (!flushQueued) {
        flushQueued = true;
        queueMicrotask(flush);
      }
      return !response.writableNeedDrain;
    },
    end() {
      sink.stop();
      if (sink.clientGone) return;
      // The last events leave with the end of the body: one write.
      const text = pendingText;
      pendingText = '';
      if (text.length > 0) response.end(text);
      else response.end();
    },
    sendHttp(answer) {
      sink.stop();
      if (!sink.clientGone) sendJson(response, answer.status, answer.body, answer.headers);
    },
    stop() {
      if (keepaliveTimer) clearInterval(keepaliveTimer);
      keepaliveTimer = null;
    },
  };
  return sink;
}

/** `stream: false`: the same Response object as one JSON body; a failure is an HTTP error. */
export function createJsonSink(response: ServerResponse, options: { onClientGone: () => void }): ResponseSink {
  const isClientGone = watchClient(response, options.onClientGone);
  const sink: ResponseSink = {
    kind: 'json',
    committed: false,
    get clientGone() {
      return isClientGone();
    },
    write: () => true,
    end(final) {
      if (!sink.clientGone) sendJson(response, 200, final);
    },
    sendHttp(answer) {
      if (!sink.clientGone) sendJson(response, answer.status, answer.body, answer.headers);
    },
    stop() {},
  };
  return sink;
}
