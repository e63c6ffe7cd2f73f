import type { ChatRequest } from '../core/chat/chat-completions-api.ts';
import type { LoweredRequest } from '../core/lower/convert-responses-request-to-chat-request.ts';
import type { EncodedChatRequest } from '../core/outbound/outbound-encoding.ts';
import type { ResponsesOutputItem, ResponsesResponse, ResponsesStreamEvent } from '../core/responses/responses-output.ts';
import type { RoundTripLabel } from '../core/traffic/round-trip-label.ts';
import type { ChatRequestParts } from '../core/outbound/chat-request-parts.ts';
import { SENT_REQUEST_PARTS, type ExchangeOutcome, type ExchangeStartEvent, type TrafficListener } from '../core/traffic/traffic-event.ts';
import type { BridgeWarning } from '../core/warnings.ts';

/** What the reporter reads from the stream translator: its warnings so far and its final response. */
export interface TranslatorView {
  readonly warnings: readonly BridgeWarning[];
  readonly finalResponse: ResponsesResponse | null;
}

export interface ExchangeReporterOptions {
  onTraffic: TrafficListener;
  exchangeId: string;
  roundTrip: RoundTripLabel;
  startedAtMs: number;
  /** Milliseconds since an arbitrary origin; the exchange's timings are differences of it. */
  now?: () => number;
}

export type RequestReaders = Pick<EncodedChatRequest, 'readRequest' | 'readParts'>;

/** Where a start event keeps how to read its request: not enumerable, so no copy or encoding of the event sees it. */
const requestReaders = Symbol('how the start event reads its request');

type LazyStartEvent = ExchangeStartEvent & { [requestReaders]: RequestReaders };

/**
 * The start event's request, computed on first read, so a listener that never reads it costs
 * nothing: `loweredRequest` enumerable (spread and JSON.stringify read it like any other field), the
 * parts as sent not (traffic-event.ts).
 */
const lazyStartProperties = {
  loweredRequest: {
    enumerable: true,
    configurable: true,
    get(this: LazyStartEvent): ChatRequest {
      return this[requestReaders].readRequest();
    },
  },
  sentRequestParts: {
    enumerable: false,
    configurable: true,
    get(this: LazyStartEvent): ChatRequestParts | undefined {
      return this[requestReaders].readParts?.();
    },
  },
} satisfies Record<string, PropertyDescriptor>;

/**
 * The traffic events of one exchange (the panel and the log read them): one start, a delta for each
 * batch that delivered items or raised warnings, and exactly one end, whatever ends the exchange.
 */
export class ExchangeReporter {
  private readonly options: ExchangeReporterOptions;
  private readonly now: () => number;
  private translator: TranslatorView | null = null;
  private readonly warnings: BridgeWarning[] = [];
  private reportedTranslatorWarnings = 0;
  /** Items as delivered, the end event's output when the translator never reached a final response. */
  private readonly delivered: ResponsesOutputItem[] = [];
  private upstreamHeadersMs: number | null = null;
  private firstDeltaMs: number | null = null;
  private isEnded = false;

  constructor(options: ExchangeReporterOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  get ended(): boolean {
    return this.isEnded;
  }

  private elapsed(): number {
    return this.now() - this.options.startedAtMs;
  }

  /**
   * `sent` says how to read the request as sent: the event's `loweredRequest` (and its parts as sent,
   * when there are parts) are read through it on first access, so a listener that does not read them
   * costs nothing.
   */
  start(lowered: LoweredRequest, requestBytes: number, translator: TranslatorView, sent: RequestReaders): void {
    this.translator = translator;
    this.warnings.push(...lowered.warnings);
    const event: Omit<ExchangeStartEvent, 'loweredRequest'> = {
      type: 'exchange-start',
      exchangeId: this.options.exchangeId,
      startedAt: new Date(this.options.startedAtMs).toISOString(),
      model: lowered.summary.model,
      upstreamModel: lowered.summary.upstreamModel,
      clientStream: lowered.clientStream,
      promptCacheKey: lowered.summary.promptCacheKey,
      tools: lowered.summary.tools,
      toolChoice: lowered.summary.toolChoice,
      inputItems: lowered.summary.inputItems,
      requestBytes,
      roundTrip: this.options.roundTrip,
    };
    // The readers alone, not `sent` itself: a listener that keeps the event must not keep the body's bytes.
    Object.defineProperty(event, requestReaders, { value: { readRequest: sent.readRequest, readParts: sent.readParts } });
    Object.defineProperty(event, 'loweredRequest', lazyStartProperties.loweredRequest);
    if (sent.readParts) Object.defineProperty(event, SENT_REQUEST_PARTS, lazyStartProperties.sentRequestParts);
    this.options.onTraffic(event as LazyStartEvent);
  }

  /** The backend's status line arrived. */
  upstreamHeadersArrived(): void {
    this.upstreamHeadersMs = this.elapsed();
  }

  /** A batch of events went toward Codex: the first delta's time, the items delivered, new warnings. */
  delivering(events: readonly ResponsesStreamEvent[]): void {
    const items: ResponsesOutputItem[] = [];
    for (const event of events) {
      if (event.type === 'response.output_item.done') items.push(event.item);
      if (this.firstDeltaMs === null && event.type !== 'response.created' && event.type !== 'response.in_progress') this.firstDeltaMs = this.elapsed();
    }
    this.delivered.push(...items);
    this.sendDelta(items);
  }

  private sendDelta(items: ResponsesOutputItem[]): void {
    const all = this.translator?.warnings ?? [];
    const newWarnings = all.slice(this.reportedTranslatorWarnings);
    this.reportedTranslatorWarnings = all.length;
    this.warnings.push(...newWarnings);
    if (items.length > 0 || newWarnings.length > 0) this.options.onTraffic({ type: 'exchange-delta', exchangeId: this.options.exchangeId, items, warnings: newWarnings });
  }

  /** A warning of the exchange itself (not of lowering or the translator), shown at once. */
  warn(warning: BridgeWarning): void {
    if (this.isEnded) return;
    this.warnings.push(warning);
    this.options.onTraffic({ type: 'exchange-delta', exchangeId: this.options.exchangeId, items: [], warnings: [warning] });
  }

  /** The exchange's one end event; later calls do nothing. */
  end(outcome: ExchangeOutcome, httpStatus: number, error: { code: string; message: string } | null): void {
    if (this.isEnded) return;
    this.isEnded = true;
    this.sendDelta([]);
    const final = this.translator?.finalResponse ?? null;
    this.options.onTraffic({
      type: 'exchange-end',
      exchangeId: this.options.exchangeId,
      roundTrip: this.options.roundTrip,
      outcome,
      httpStatus,
      timings: { upstreamHeadersMs: this.upstreamHeadersMs, firstDeltaMs: this.firstDeltaMs, totalMs: this.elapsed() },
      usage: final?.usage ?? null,
      output: final?.output ?? this.delivered,
      warnings: this.warnings,
      error,
    });
  }
}
