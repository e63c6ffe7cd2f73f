import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BridgeOptions } from '../core/bridge-options.ts';
import { chatCompletionSchema } from '../core/chat/chat-completions-api.ts';
import { UpstreamConnectionError } from '../core/errors.ts';
import { createItemId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import { convertResponsesRequestToChatRequest, type LoweredRequest } from '../core/lower/convert-responses-request-to-chat-request.ts';
import { mapUpstreamHttpError, type MappedUpstreamError } from '../core/map-upstream-http-error.ts';
import { parseJson } from '../core/parse-json.ts';
import { redactSecrets } from '../core/redact-secrets.ts';
import type { ResponsesOutputItem, ResponsesStreamEvent } from '../core/responses/responses-output.ts';
import { SseDecoder, parseChatStreamEvent, type SseEvent } from '../core/sse/sse-decoder.ts';
import { encodeSseEvent } from '../core/sse/sse-encoder.ts';
import { ChatStreamTranslator } from '../core/stream/chat-stream-to-responses-events.ts';
import { convertChatCompletionToChunk } from '../core/stream/convert-chat-completion-to-chunk.ts';
import { labelRoundTrip, type RoundTripLabel } from '../core/round-trip-label.ts';
import type { ExchangeOutcome, TrafficListener } from '../core/traffic-event.ts';
import type { BridgeWarning, WarningLedger } from '../core/warnings.ts';
import type { GrammarCache } from '../core/grammar/grammar-cache.ts';
import { sendJson } from './send-json.ts';
import type { UpstreamClient, UpstreamResponse } from './upstream-client.ts';

export interface ResponsesExchangeDependencies {
  upstream: UpstreamClient;
  getOptions: () => BridgeOptions;
  ledger: WarningLedger;
  grammarCache: GrammarCache;
  logger: Logger;
  onTraffic: TrafficListener;
  /** Seconds without any event before a `response.in_progress` keepalive goes out; 0 disables. */
  keepaliveSeconds: number;
  /**
   * How long to wait for the backend's status before committing the SSE response anyway. Errors
   * engines return before streaming still become proper HTTP statuses within this window
   * (bridge-rules.md §7).
   */
  commitGraceMs: number;
  /** Backend silence (no byte) that turns into `response.failed`; 0 disables. */
  upstreamIdleTimeoutSeconds: number;
  /** Secrets that must never appear in anything we send back or log. */
  getSecrets: () => ReadonlyArray<string | null>;
  /**
   * Aborted when the bridge stops: every exchange still in flight ends with a clear error (a stream with
   * `response.failed`, a JSON request with 503) and aborts its backend call, instead of a cut socket.
   */
  shutdownSignal?: AbortSignal;
}

/** What the error answer (error-middleware.ts) reads when a failure happens after the SSE response was committed. */
export interface ExchangeLocals {
  /** What the request is for Codex, read before lowering so a refusal can say it too. */
  roundTrip?: RoundTripLabel;
  /**
   * Bytes of the request body as read (after decompression), set by the request path that read it:
   * a chunked or compressed request has no Content-Length that says its size.
   */
  requestBytes?: number;
  exchangeId?: string;
  exchangeStarted?: boolean;
  failStream?: (code: 'server_error', message: string) => void;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // No explicit `connection`: Node answers `keep-alive` to a keep-alive request (Codex) by itself, and
  // `close` to a client that asked to close; forcing keep-alive held such a client's stream open until
  // the server's idle timeout (5 s) after the last event.
  // Reverse proxies (nginx) buffer responses unless told otherwise; Codex needs each event now.
  'x-accel-buffering': 'no',
} as const;

function seconds(milliseconds: number): number {
  return Math.floor(milliseconds / 1000);
}

function isTerminalEvent(event: ResponsesStreamEvent): boolean {
  return event.type === 'response.completed' || event.type === 'response.incomplete' || event.type === 'response.failed';
}

function contentTypeOf(response: UpstreamResponse): string {
  const value = response.headers['content-type'];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function retryAfterOf(response: UpstreamResponse): string | null {
  const value = response.headers['retry-after'];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/**
 * One `POST /v1/responses` exchange, from a parsed body to the last event: lower, call the backend,
 * lift its answer back as it streams. Transport-neutral on purpose: the fast path
 * (responses-fast-path.ts) and the Express route (create-app.ts) read the body their own way and
 * both end here. Throws for failures before anything was written; the caller answers them.
 */
export type ResponsesExchange = (body: unknown, request: IncomingMessage, response: ServerResponse, locals: ExchangeLocals) => Promise<void>;

export function createResponsesExchange(dependencies: ResponsesExchangeDependencies): ResponsesExchange {
  const { upstream, logger, onTraffic } = dependencies;

  return async function runExchange(body, request, response, locals) {
    const exchangeId = createItemId('resp');
    locals.exchangeId = exchangeId;
    const roundTrip = labelRoundTrip(request.headers['x-codex-turn-metadata']);
    locals.roundTrip = roundTrip;
    const startedAtMs = Date.now();
    const elapsed = (): number => Date.now() - startedAtMs;

    const options = dependencies.getOptions();
    // `let`: both are released once the request is sent (see below).
    let lowered: LoweredRequest | null = convertResponsesRequestToChatRequest(body, options, dependencies.ledger, {
      grammarCache: dependencies.grammarCache,
    });
    let chatRequestText: string | null = JSON.stringify(lowered.chatRequest);
    const clientStream = lowered.clientStream;
    const upstreamModel = lowered.chatRequest.model;

    locals.exchangeStarted = true;
    onTraffic({
      type: 'exchange-start',
      exchangeId,
      startedAt: new Date(startedAtMs).toISOString(),
      model: lowered.summary.model,
      upstreamModel: lowered.summary.upstreamModel,
      clientStream: lowered.clientStream,
      promptCacheKey: lowered.summary.promptCacheKey,
      tools: lowered.summary.tools,
      toolChoice: lowered.summary.toolChoice,
      inputItems: lowered.summary.inputItems,
      requestBytes: locals.requestBytes ?? Number(request.headers['content-length'] ?? 0),
      loweredRequest: lowered.chatRequest,
      roundTrip,
    });

    const translator = new ChatStreamTranslator({
      responseId: exchangeId,
      model: lowered.summary.model,
      createdAt: seconds(startedAtMs),
      toolMap: lowered.toolMap,
      grammarRepair: options.grammarRepair,
      grammarCache: dependencies.grammarCache,
    });
    const warnings: BridgeWarning[] = [...lowered.warnings];
    let reportedTranslatorWarnings = 0;
    const delivered: ResponsesOutputItem[] = [];
    let upstreamHeadersMs: number | null = null;
    let firstDeltaMs: number | null = null;
    let committed = false;
    let finished = false;
    let clientGone = false;

    const abortController = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished) {
        clientGone = true;
        abortController.abort(new Error('client disconnected'));
      }
    });

    const sendTrafficDelta = (items: ResponsesOutputItem[]): void => {
      const newWarnings = translator.warnings.slice(reportedTranslatorWarnings);
      reportedTranslatorWarnings = translator.warnings.length;
      warnings.push(...newWarnings);
      if (items.length > 0 || newWarnings.length > 0) onTraffic({ type: 'exchange-delta', exchangeId, items, warnings: newWarnings });
    };

    const endExchange = (outcome: ExchangeOutcome, httpStatus: number, error: { code: string; message: string } | null): void => {
      if (finished) return;
      finished = true;
      sendTrafficDelta([]);
      const final = translator.finalResponse;
      onTraffic({
        type: 'exchange-end',
        exchangeId,
        roundTrip,
        outcome,
        httpStatus,
        timings: { upstreamHeadersMs, firstDeltaMs, totalMs: elapsed() },
        usage: final?.usage ?? null,
        output: final?.output ?? delivered,
        warnings,
        error,
      });
    };

    // ---- writing toward Codex ----
    let keepaliveTimer: NodeJS.Timeout | null = null;
    /** Backend silence watchdog; armed before the backend call so headers that never arrive are covered too. */
    let watchdog: NodeJS.Timeout | null = null;
    /** The backend's body while it is being read; paused while Codex's socket is full. */
    let readingUpstream: UpstreamResponse | null = null;
    /**
     * Codex is not reading (its socket buffer is full): the backend's stream is paused until it drains,
     * so a stalled client holds the backend back through TCP instead of the bridge buffering the whole
     * generation in memory.
     */
    let waitingForClient = false;
    const waitForClientToDrain = (): void => {
      if (waitingForClient || readingUpstream === null) return;
      waitingForClient = true;
      readingUpstream.pause();
      response.once('drain', () => {
        waitingForClient = false;
        // The backend was silent because we stopped reading it; its silence clock starts again now.
        watchdog?.refresh();
        readingUpstream?.resume();
      });
    };
    const writeEvents = (events: ResponsesStreamEvent[]): void => {
      if (events.length === 0) return;
      const items: ResponsesOutputItem[] = [];
      let text = '';
      for (const event of events) {
        // A failure carries the backend's own words (an error frame, an error body), which may quote the key.
        if (event.type === 'response.failed' && event.response.error) event.response.error.message = redactSecrets(event.response.error.message, dependencies.getSecrets());
        if (event.type === 'response.output_item.done') items.push(event.item);
        if (firstDeltaMs === null && event.type !== 'response.created' && event.type !== 'response.in_progress') firstDeltaMs = elapsed();
        if (committed) text += encodeSseEvent(event);
      }
      delivered.push(...items);
      if (committed && !clientGone) {
        if (!response.write(text)) waitForClientToDrain();
        keepaliveTimer?.refresh();
      }
      sendTrafficDelta(items);
      if (events.some(isTerminalEvent)) finishResponse();
    };

    const commit = (): void => {
      if (committed || clientGone) return;
      committed = true;
      response.writeHead(200, SSE_HEADERS);
      // No flushHeaders(): the headers leave with response.created/in_progress written just below, in
      // one write instead of two (a syscall and a wake-up of Codex fewer per stream; issue #7).
      const startEvents = translator.start();
      if (startEvents.length === 0) response.flushHeaders();
      writeEvents(startEvents);
      if (dependencies.keepaliveSeconds > 0) {
        keepaliveTimer = setInterval(() => writeEvents(translator.keepalive()), dependencies.keepaliveSeconds * 1000);
      }
    };

    const stopTimers = (): void => {
      if (keepaliveTimer) clearInterval(keepaliveTimer);
      keepaliveTimer = null;
      if (watchdog) clearTimeout(watchdog);
      watchdog = null;
    };

    const finishResponse = (): void => {
      stopTimers();
      const final = translator.finalResponse;
      if (!final) return;
      const outcome: ExchangeOutcome = final.status === 'in_progress' ? 'failed' : final.status;
      if (committed) {
        if (!clientGone) response.end();
        endExchange(outcome, 200, final.error ?? null);
        return;
      }
      // stream: false — the same Response object as one JSON body; a failure is an HTTP error.
      if (final.status === 'failed') {
        const code = final.error?.code ?? 'server_error';
        const status = code === 'context_length_exceeded' ? 400 : 503;
        const message = final.error?.message ?? 'backend failed';
        if (!clientGone) {
          sendJson(response, status, { error: { message, type: status === 400 ? 'invalid_request_error' : 'server_error', param: null, code } });
        }
        endExchange('failed', status, { code, message });
        return;
      }
      if (!clientGone) sendJson(response, 200, final);
      endExchange(outcome, 200, null);
    };

    const failStream = (code: 'context_length_exceeded' | 'server_error', message: string): void => {
      if (translator.terminated) return;
      if (!committed && clientStream) commit();
      writeEvents(translator.fail({ code, message }));
    };
    locals.failStream = failStream;

    const answerWithError = (mapped: MappedUpstreamError): void => {
      stopTimers();
      // The watchdog or a shutdown may have answered while the error body was being read.
      if (translator.terminated) return;
      const message = redactSecrets(mapped.body.error.message, dependencies.getSecrets());
      if (committed) {
        const code = mapped.body.error.code === 'context_length_exceeded' ? 'context_length_exceeded' : 'server_error';
        failStream(code, message);
        return;
      }
      sendJson(response, mapped.status, { error: { ...mapped.body.error, message } }, mapped.headers);
      endExchange('failed', mapped.status, { code: mapped.body.error.code ?? 'backend_error', message });
    };

    // Bridge shutdown: answer now, then abort the backend call (its rejection finds the exchange finished).
    const shutdownSignal = dependencies.shutdownSignal;
    if (shutdownSignal) {
      const onShutdown = (): void => {
        failStream('server_error', 'freeform-bridge stopped while this request was in flight; retry once the bridge runs again');
        abortController.abort(new Error('bridge stopping'));
      };
      shutdownSignal.addEventListener('abort', onShutdown, { once: true });
      response.on('close', () => shutdownSignal.removeEventListener('abort', onShutdown));
    }

    // ---- calling the backend ----
    // The watchdog starts now, not when headers arrive: a backend (or a stuck proxy) that never sends its
    // headers would otherwise hold the exchange forever, as undici's own timers are off.
    if (dependencies.upstreamIdleTimeoutSeconds > 0) {
      watchdog = setTimeout(() => {
        if (waitingForClient) {
          // The silence is ours: Codex is not reading, so neither are we.
          watchdog?.refresh();
          return;
        }
        abortController.abort(new Error('backend idle timeout'));
        failStream('server_error', `backend at ${upstream.baseUrl} sent nothing for ${dependencies.upstreamIdleTimeoutSeconds} s; giving up`);
      }, dependencies.upstreamIdleTimeoutSeconds * 1000);
    }
    const upstreamPromise = upstream.postChatCompletions(chatRequestText, abortController.signal);
    // The request is on its way (undici has copied the text into a buffer): drop the parsed body, its
    // lowered copy and the JSON text now rather than when the generation ends, possibly minutes later.
    // Kept, they survive every young-generation GC while exchanges are in flight (issue #7: scavenge
    // time per request about halved at 32 concurrent requests) and a 10 MB history stays resident.
    body = undefined;
    lowered = null;
    chatRequestText = null;
    let upstreamResponse: UpstreamResponse;
    try {
      if (clientStream && dependencies.commitGraceMs > 0) {
        let graceTimer: NodeJS.Timeout | undefined;
        const grace = new Promise<'grace'>((resolve) => {
          graceTimer = setTimeout(() => resolve('grace'), dependencies.commitGraceMs);
        });
        const first = await Promise.race([upstreamPromise, grace]);
        clearTimeout(graceTimer);
        if (first === 'grace') {
          // The backend is slow to even answer (queueing proxies): start the stream so Codex's idle
          // timer is fed; an error status from here on becomes response.failed.
          commit();
          upstreamResponse = await upstreamPromise;
        } else {
          upstreamResponse = first;
        }
      } else {
        upstreamResponse = await upstreamPromise;
      }
    } catch (error) {
      stopTimers();
      if (clientGone) {
        endExchange('aborted', 499, null);
        return;
      }
      // The watchdog or a shutdown aborted the call after answering Codex; nothing more to say.
      if (translator.terminated) return;
      if (committed) {
        const message = UpstreamConnectionError.is(error) ? error.message : `backend request failed: ${String(error)}`;
        failStream('server_error', message);
        return;
      }
      endExchange('failed', 503, { code: 'backend_unreachable', message: error instanceof Error ? error.message : String(error) });
      throw error;
    }
    upstreamHeadersMs = elapsed();

    const errorContext = { backendUrl: upstream.baseUrl, model: upstreamModel, retryAfter: retryAfterOf(upstreamResponse) };
    if (upstreamResponse.status !== 200) {
      const bodyText = await upstreamResponse.text().catch((error: unknown) => `(could not read the error body: ${String(error)})`);
      // The failure itself is reported once, from the exchange's end event (start-server.ts).
      logger.debug('backend answered with an error status', { exchangeId, roundTrip: roundTrip.text, status: upstreamResponse.status });
      // Redacted before the message is cut to length, so a cut can never leave half a key behind.
      answerWithError(mapUpstreamHttpError(upstreamResponse.status, redactSecrets(bodyText, dependencies.getSecrets()), errorContext));
      return;
    }

    if (clientStream) commit();
    else writeEvents(translator.start());

    // ---- reading the backend's answer ----
    watchdog?.refresh();

    const handleSseEvent = (event: SseEvent): boolean => {
      const parsed = parseChatStreamEvent(event);
      switch (parsed.kind) {
        case 'done':
          return false;
        case 'chunk':
          writeEvents(translator.push(parsed.chunk));
          return true;
        case 'error':
          failStream(parsed.code, `backend stream failed (${upstream.baseUrl}): ${parsed.message}`);
          return false;
        case 'ignored':
          logger.debug(parsed.message, { exchangeId });
          return true;
        case 'invalid':
          failStream('server_error', `backend sent an unreadable stream frame (${upstream.baseUrl}): ${parsed.message}`);
          return false;
        default: {
          const unexpected: never = parsed;
          throw new Error(`unhandled stream event ${String(unexpected)}`);
        }
      }
    };

    let answerComplete = false;
    try {
      if (contentTypeOf(upstreamResponse).includes('application/json')) {
        await relayJsonCompletion(upstreamResponse);
      } else {
        const decoder = new SseDecoder();
        let keepReading = true;
        readingUpstream = upstreamResponse;
        await upstreamResponse.consume((bytes) => {
          watchdog?.refresh();
          for (const event of decoder.push(bytes)) {
            if (keepReading) keepReading = handleSseEvent(event);
          }
          return keepReading && !translator.terminated;
        });
        if (keepReading && !translator.terminated) for (const event of decoder.end()) if (keepReading) keepReading = handleSseEvent(event);
        if (!translator.terminated) writeEvents(translator.finish());
        answerComplete = !clientGone && translator.finalResponse?.status !== 'failed';
      }
    } catch (error) {
      if (clientGone) {
        endExchange('aborted', 499, null);
      } else {
        failStream('server_error', `backend stream broke (${upstream.baseUrl}): ${error instanceof Error ? error.message : String(error)}`);
      }
    } finally {
      readingUpstream = null;
      stopTimers();
      if (!translator.terminated && clientGone) endExchange('aborted', 499, null);
      // A complete answer drains its last bytes and keeps its socket; a stream left after an error
      // frame or an abort would pin its socket, so it is cut (a no-op for a fully read body).
      if (answerComplete) upstreamResponse.release();
      else upstreamResponse.discard();
    }

    async function relayJsonCompletion(source: UpstreamResponse): Promise<void> {
      const text = await source.text();
      const parsed = parseJson(text);
      const completion = parsed.success ? chatCompletionSchema.safeParse(parsed.value) : null;
      if (!completion?.success) {
        failStream('server_error', `backend answered a stream request with unreadable JSON (${upstream.baseUrl})`);
        return;
      }
      writeEvents(translator.push(convertChatCompletionToChunk(completion.data)));
      if (!translator.terminated) writeEvents(translator.finish());
    }
  };
}
