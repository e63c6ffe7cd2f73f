import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BridgeOptions } from '../core/bridge-options.ts';
import type { GrammarCache } from '../core/grammar/grammar-cache.ts';
import { createItemId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import { convertResponsesRequestToChatRequest, type LoweredRequest } from '../core/lower/convert-responses-request-to-chat-request.ts';
import { classifyEngineRefusal } from '../core/engine-error.ts';
import { withoutEnginePatterns } from '../core/lower/lower-tools.ts';
import { encodeChatRequest, type ParsedRequestBody } from '../core/outbound/outbound-encoding.ts';
import { redactSecrets } from '../core/redact-secrets.ts';
import type { ResponsesStreamEvent } from '../core/responses/responses-output.ts';
import { labelRoundTrip, type RoundTripLabel } from '../core/traffic/round-trip-label.ts';
import { ChatStreamTranslator } from '../core/stream/chat-stream-to-responses-events.ts';
import { ChatSsePump, liftJsonCompletion } from '../core/stream/chat-sse-pump.ts';
import type { TrafficListener } from '../core/traffic/traffic-event.ts';
import { createWarning, type WarningLedger } from '../core/warnings.ts';
import { ExchangeReporter } from './exchange-reporter.ts';
import { isPatternRefusal, type GrammarEnforcementRegistry } from './grammar-enforcement.ts';
import { answerFailure, type Failure, type HttpAnswer, type StreamFailure } from './failure-map.ts';
import { createJsonSink, createStreamSink, type ResponseSink, type StreamSink } from './response-sink.ts';
import { UpstreamCall } from './upstream-call.ts';
import { MAX_ERROR_BODY_BYTES, type UpstreamClient, type UpstreamResponse } from './upstream-client.ts';

export interface ResponsesExchangeDependencies {
  upstream: UpstreamClient;
  getOptions: () => BridgeOptions;
  /** Whether this backend and model get grammar patterns (grammar-enforcement.ts); absent: never. */
  grammarEnforcement?: GrammarEnforcementRegistry;
  ledger: WarningLedger;
  grammarCache: GrammarCache;
  logger: Logger;
  onTraffic: TrafficListener;
  /** Seconds without any event before a `response.in_progress` keepalive goes out; 0 disables. */
  keepaliveSeconds: number;
  /**
   * Serialise each lowered request by parts (head, messages, tools) and send their joined text: the
   * start event then carries the parts, for a traffic consumer that keeps them (the extension's panel)
   * without serialising the request a second time.
   */
  serialiseRequestParts?: boolean;
  /**
   * How long to wait for the backend's status before committing the SSE response anyway. Errors
   * engines return before streaming still become proper HTTP statuses within this window.
   */
  commitGraceMs: number;
  /** Backend silence (no byte) that turns into `response.failed`; 0 disables. */
  upstreamIdleTimeoutSeconds: number;
  /** Backend silence after which the panel and the log say what is awaited and for how long still. */
  backendWaitNoticeSeconds: number;
  /** Secrets that must never appear in anything we send back or log. */
  getSecrets: () => ReadonlyArray<string | null>;
  /**
   * Aborted when the bridge stops: every exchange still in flight ends with a clear error (a stream with
   * `response.failed`, a JSON request with 503) and aborts its backend call, instead of a cut socket.
   */
  shutdownSignal?: AbortSignal;
}

/** What the request path and the exchange tell each other about one request. */
export interface ExchangeLocals {
  /** What the request is for Codex, read before lowering so a refusal can say it too. */
  roundTrip?: RoundTripLabel;
  /**
   * Bytes of the request body as read (after decompression), set by the request path that read it:
   * a chunked or compressed request has no Content-Length that says its size.
   */
  requestBytes?: number;
  exchangeId?: string;
}

function seconds(milliseconds: number): number {
  return Math.floor(milliseconds / 1000);
}

function isTerminalEvent(event: ResponsesStreamEvent): boolean {
  return event.type === 'response.completed' || event.type === 'response.incomplete' || event.type === 'response.failed';
}

function headerOf(response: UpstreamResponse, name: string): string | null {
  const value = response.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/**
 * One `POST /v1/responses` exchange, from a parsed body to the last event: lower, call the backend,
 * lift its answer back as it streams. The body middleware (request-body-checks.ts) reads and parses
 * the body; its route (create-app.ts) ends here. A request refused before the exchange starts
 * (lowering) is thrown for the error middleware to answer; from the start on, the exchange answers
 * every failure itself. `parsed.body` holds placeholders for the long strings `parsed.largeStrings`
 * carries as bytes, in the text the lowering only copies (outbound-encoding.ts).
 */
export type ResponsesExchange = (parsed: ParsedRequestBody, request: IncomingMessage, response: ServerResponse, locals: ExchangeLocals) => Promise<void>;

export function createResponsesExchange(dependencies: ResponsesExchangeDependencies): ResponsesExchange {
  // Returned, not awaited: no frame of this function stays suspended through the generation, which may
  // last minutes. The parsed body itself stays reachable as `request.body` until the request is done
  // with, as Express keeps it.
  return (parsed, request, response, locals) => startExchange(dependencies, parsed, request, response, locals).run();
}

/** Lowers, sends the request and reports its start; every local of it is gone once it returns. */
function startExchange(dependencies: ResponsesExchangeDependencies, { body, largeStrings }: ParsedRequestBody, request: IncomingMessage, response: ServerResponse, locals: ExchangeLocals): Exchange {
  const exchangeId = createItemId('resp');
  locals.exchangeId = exchangeId;
  const roundTrip = labelRoundTrip(request.headers['x-codex-turn-metadata']);
  locals.roundTrip = roundTrip;
  const startedAtMs = Date.now();
  const baseOptions = dependencies.getOptions();
  const registry = dependencies.grammarEnforcement;
  const requestedModel = baseOptions.modelOverride ?? (typeof (body as { model?: unknown } | null)?.model === 'string' ? (body as { model: string }).model : '');
  const options = registry ? registry.optionsFor(baseOptions, requestedModel) : baseOptions;
  const lowered = convertResponsesRequestToChatRequest(body, options, dependencies.ledger, { grammarCache: dependencies.grammarCache });
  // Only while a pattern goes out: an engine that refuses it gets the same request once more without
  // it, the lowered request with its patterns stripped (the per-tool line that now says "checked after
  // generation" is left for the next exchange to show).
  const { chatRequest: sentRequest, toolMap } = lowered;
  const retryWithoutPattern =
    registry && options.grammarEnforcement.enforced
      ? (refusal: string): string | Uint8Array => {
          registry.refuse(requestedModel, refusal);
          return encodeChatRequest(withoutEnginePatterns(sentRequest, toolMap), { byParts: false, largeStrings }).body;
        }
      : null;
  const exchange = new Exchange(dependencies, response, lowered, { exchangeId, roundTrip, startedAtMs, grammarRepair: options.grammarRepair, recoverTextToolCalls: options.recoverTextToolCalls, retryWithoutPattern });
  // Only placeholders of text the lowering copies can be left; anything else it kept, such as a
  // warning quoting an item, is given its real text.
  if (largeStrings) lowered.warnings = largeStrings.restore(lowered.warnings);
  const sent = encodeChatRequest(lowered.chatRequest, { byParts: dependencies.serialiseRequestParts === true, largeStrings });
  exchange.send(sent.body);
  exchange.reporter.start(lowered, locals.requestBytes ?? Number(request.headers['content-length'] ?? 0), exchange.translator, sent);
  return exchange;
}

/**
 * The named parts of one exchange and the few steps that join them. It answers its own failures
 * through the failure map (failure-map.ts), which decides between an HTTP answer and `response.failed`.
 */
class Exchange {
  readonly translator: ChatStreamTranslator;
  readonly reporter: ExchangeReporter;
  private readonly dependencies: ResponsesExchangeDependencies;
  private readonly response: ServerResponse;
  private readonly sink: ResponseSink;
  /** The same sink when the answer is a stream (it alone can be committed early); null for JSON. */
  private readonly streamSink: StreamSink | null;
  private readonly call: UpstreamCall;
  private readonly exchangeId: string;
  private readonly roundTrip: RoundTripLabel;
  private readonly upstreamModel: string;
  private pending: Promise<UpstreamResponse> | null = null;
  /** Set while the request carries a grammar pattern and has not been retried without it. */
  private retryWithoutPattern: ((refusal: string) => string | Uint8Array) | null;

  constructor(
    dependencies: ResponsesExchangeDependencies,
    response: ServerResponse,
    lowered: LoweredRequest,
    identity: {
      exchangeId: string;
      roundTrip: RoundTripLabel;
      startedAtMs: number;
      grammarRepair: boolean;
      recoverTextToolCalls: boolean;
      retryWithoutPattern: ((refusal: string) => string | Uint8Array) | null },
  ) {
    this.dependencies = dependencies;
    this.retryWithoutPattern = identity.retryWithoutPattern;
    this.response = response;
    this.exchangeId = identity.exchangeId;
    this.roundTrip = identity.roundTrip;
    this.upstreamModel = lowered.chatRequest.model;
    this.translator = new ChatStreamTranslator({
      responseId: identity.exchangeId,
      model: lowered.summary.model,
      createdAt: seconds(identity.startedAtMs),
      toolMap: lowered.toolMap,
      grammarRepair: identity.grammarRepair,
      recoverTextToolCalls: identity.recoverTextToolCalls,
      toolCallsRefused: lowered.chatRequest.tool_choice === 'none',
      grammarCache: dependencies.grammarCache,
    });
    this.reporter = new ExchangeReporter({ onTraffic: dependencies.onTraffic, exchangeId: identity.exchangeId, roundTrip: identity.roundTrip, startedAtMs: identity.startedAtMs });
    const onClientGone = (): void => this.call.abort(new Error('client disconnected'));
    this.streamSink = lowered.clientStream
      ? createStreamSink(response, {
          keepaliveSeconds: dependencies.keepaliveSeconds,
          onKeepalive: () => this.deliver(this.translator.keepalive()),
          onClientGone,
          onFull: () => this.call.holdUntilDrained(response),
        })
      : null;
    this.sink = this.streamSink ?? createJsonSink(response, { onClientGone });
    this.call = new UpstreamCall({
      upstream: dependencies.upstream,
      idleTimeoutSeconds: dependencies.upstreamIdleTimeoutSeconds,
      waitNoticeSeconds: dependencies.backendWaitNoticeSeconds,
      onLongWait: (message) => {
        // Codex shows only "Working"; the person watching the panel or the terminal learns why.
        dependencies.logger.warn(`exchange ${identity.exchangeId} (${identity.roundTrip.text}): ${message}`);
        this.reporter.warn(createWarning('backend_waiting', message));
      },
      commitGraceMs: lowered.clientStream ? dependencies.commitGraceMs : 0,
      shutdown: dependencies.shutdownSignal,
      // The backend is slow to even answer (queueing proxies): start the stream so Codex's idle timer
      // is fed; an error status from here on becomes response.failed.
      onGraceElapsed: () => this.commit(),
      onSilence: (message) => this.fail({ kind: 'answer-failed', code: 'server_error', message }),
      onShutdown: (message) => this.fail({ kind: 'answer-failed', code: 'server_error', message }),
    });
    response.on('close', () => this.call.dispose());
  }

  /** Codex has its answer (a final event, or an HTTP error): nothing more is delivered. */
  private get answered(): boolean {
    return this.translator.terminated || this.reporter.ended;
  }

  /** Starts the backend call; the body is not kept. */
  send(chatRequestBody: string | Uint8Array): void {
    this.pending = this.call.send(chatRequestBody);
  }

  async run(): Promise<void> {
    try {
      await this.callBackend();
    } catch (error) {
      this.stopTimers();
      if (!this.translator.terminated && !this.reporter.ended) this.fail({ kind: 'thrown', error, during: 'bridge' });
    }
  }

  private redact(text: string): string {
    return redactSecrets(text, this.dependencies.getSecrets());
  }

  private stopTimers(): void {
    this.call.stopTimers();
    this.sink.stop();
  }

  private async callBackend(): Promise<void> {
    let upstreamResponse: UpstreamResponse;
    try {
      if (this.pending === null) throw new Error('the backend call was not started');
      upstreamResponse = await this.call.response(this.pending);
    } catch (error) {
      this.stopTimers();
      if (this.sink.clientGone) {
        this.reporter.end('aborted', 499, null);
        return;
      }
      // The watchdog or a shutdown aborted the call after answering Codex; nothing more to say.
      if (this.answered) return;
      this.fail({ kind: 'thrown', error, during: 'backend-call' });
      return;
    } finally {
      this.pending = null;
    }
    this.reporter.upstreamHeadersArrived();

    if (upstreamResponse.status !== 200) {
      const bodyText = await upstreamResponse.text(MAX_ERROR_BODY_BYTES, 'error body').catch((error: unknown) => `(could not read the error body: ${error instanceof Error ? error.message : String(error)})`);
      // The failure itself is reported once, from the exchange's end event (start-server.ts).
      this.dependencies.logger.debug('backend answered with an error status', { exchangeId: this.exchangeId, roundTrip: this.roundTrip.text, status: upstreamResponse.status });
      const retry = this.retryWithoutPattern;
      this.retryWithoutPattern = null;
      if (retry !== null && !this.answered && isPatternRefusal(bodyText)) {
        const refusal = this.redact(bodyText).slice(0, 500);
        this.dependencies.logger.warn(`the backend refused the grammar pattern (HTTP ${upstreamResponse.status}: ${refusal.slice(0, 200)}); enforcement is off for model ${this.upstreamModel}, retrying without it`);
        this.pending = this.call.send(retry(refusal));
        return this.callBackend();
      }
      this.stopTimers();
      // The watchdog or a shutdown may have answered while the error body was being read.
      if (this.answered) return;
      const context = { backendUrl: this.dependencies.upstream.baseUrl, model: this.upstreamModel, retryAfter: headerOf(upstreamResponse, 'retry-after') };
      // Redacted before the message is cut to length, so a cut can never leave half a key behind.
      this.fail({ kind: 'engine-refusal', refusal: classifyEngineRefusal(upstreamResponse.status, this.redact(bodyText), context) });
      return;
    }

    if (this.streamSink) this.commit();
    else this.deliver(this.translator.start());
    await this.readAnswer(upstreamResponse);
  }

  private async readAnswer(upstreamResponse: UpstreamResponse): Promise<void> {
    const source = this.dependencies.upstream.baseUrl;
    let answerComplete = false;
    try {
      const contentType = (headerOf(upstreamResponse, 'content-type') ?? '').toLowerCase();
      if (contentType.includes('text/html')) {
        // A proxy's login page or an engine's web UI at the base URL: its body is no API answer.
        this.fail({
          kind: 'answer-failed',
          code: 'server_error',
          message: `the backend at ${source} answered with an HTML page (text/html), not a Chat Completions answer: check the base URL (it must be the engine's OpenAI-compatible /v1, not a web UI or a proxy's sign-in page)`,
        });
        return;
      }
      if (contentType.includes('application/json')) {
        this.deliver(liftJsonCompletion(this.translator, await this.call.readText(upstreamResponse), { source }));
      } else {
        const pump = new ChatSsePump(this.translator, { source, onIgnored: (message) => this.dependencies.logger.debug(message, { exchangeId: this.exchangeId }) });
        await this.call.read(upstreamResponse, (bytes) => {
          this.deliver(pump.push(bytes));
          return pump.wantsMore;
        });
        this.deliver(pump.end());
        answerComplete = !this.sink.clientGone && this.translator.finalResponse?.status !== 'failed';
      }
    } catch (error) {
      if (this.sink.clientGone) this.reporter.end('aborted', 499, null);
      else this.fail({ kind: 'answer-failed', code: 'server_error', message: `backend stream broke (${source}): ${error instanceof Error ? error.message : String(error)}` });
    } finally {
      this.stopTimers();
      if (!this.translator.terminated && this.sink.clientGone) this.reporter.end('aborted', 499, null);
      // A complete answer drains its last bytes and keeps its socket; a stream left after an error
      // frame or an abort would pin its socket, so it is cut (a no-op for a fully read body).
      if (answerComplete) upstreamResponse.release();
      else upstreamResponse.discard();
    }
  }

  /** Opens the stream: the 200 and the SSE headers, which leave with response.created / in_progress. */
  private commit(): void {
    if (this.streamSink?.commit()) this.deliver(this.translator.start());
  }

  /** Every batch of events toward Codex goes through here. */
  private deliver(events: ResponsesStreamEvent[]): void {
    // A JSON request's failure was answered as HTTP: what the backend still sends has nowhere to go.
    if (this.reporter.ended) return;
    if (events.length === 0) {
      // Nothing to write, but a head just committed must still leave.
      this.sink.write(events);
      return;
    }
    for (const event of events) {
      // A failure carries the backend's own words (an error frame, an error body), which may quote the key.
      if (event.type === 'response.failed' && event.response.error) event.response.error.message = this.redact(event.response.error.message);
    }
    if (!this.sink.write(events)) this.call.holdUntilDrained(this.response);
    this.reporter.delivering(events);
    if (events.some(isTerminalEvent)) this.finish();
  }

  /** The translator reached its final response: the answer ends, and so does the exchange. */
  private finish(): void {
    this.stopTimers();
    const final = this.translator.finalResponse;
    if (!final) return;
    const outcome = final.status === 'in_progress' ? 'failed' : final.status;
    if (this.sink.committed) {
      this.sink.end(final);
      this.reporter.end(outcome, 200, final.error ?? null);
    } else if (final.status === 'failed') {
      this.fail({ kind: 'answer-failed', code: final.error?.code ?? 'server_error', message: final.error?.message ?? 'backend failed' });
    } else {
      this.sink.end(final);
      this.reporter.end(outcome, 200, null);
    }
  }

  private fail(failure: Failure): void {
    const target = {
      committed: this.sink.committed,
      sendHttp: (answer: HttpAnswer) => this.sendHttp(answer),
      failStream: this.streamSink ? (streamFailure: StreamFailure) => this.failStream(streamFailure) : undefined,
    };
    answerFailure(failure, target, this.dependencies.logger);
  }

  private sendHttp(answer: HttpAnswer): void {
    this.stopTimers();
    const message = this.redact(answer.body.error.message);
    this.sink.sendHttp({ ...answer, body: { error: { ...answer.body.error, message } } });
    this.reporter.end('failed', answer.status, { code: answer.body.error.code ?? 'backend_error', message });
  }

  /** response.failed; a stream that is not committed yet commits first. */
  private failStream(failure: StreamFailure): void {
    if (this.translator.terminated) return;
    if (!this.sink.committed) this.commit();
    this.deliver(this.translator.fail(failure));
  }
}
