import { DEFAULT_TRAFFIC_BUFFER_SIZE, MAX_TRAFFIC_BUFFER_SIZE, MIN_TRAFFIC_BUFFER_SIZE } from '../core/defaults.ts';
import type { ResponsesOutputItem } from '../core/responses/responses-output.ts';
import type { BridgeWarning } from '../core/warnings.ts';
import type { BridgeTrafficEvent, EncodedExchangeStartEvent } from '../server/start-event-encoding.ts';
import type { BodyContent, BodyReference, ExchangeDetail, ExchangeSummary, TrafficStats } from '../shared/webview-protocol.ts';
import { estimateItemBytes, estimateWarningBytes, redactItem, toJsonText, type ExchangeRecord } from './traffic-record.ts';
import { toBodyContent, toCopyText, toDocumentText, toExchangeDetail, toExportValue } from './traffic-record-views.ts';
import { measureStoredRequest, RequestPool, rebuildStoredRequest, stringBytes } from './traffic-request-pool.ts';
import { searchRecords } from './traffic-search.ts';
import { capSummaryError, countOutputInto, createExchangeSummary } from './traffic-summary.ts';

/*
 * The live traffic panel's memory, kept free of `vscode` so it runs in plain Node tests.
 *
 * Bounded twice: a ring buffer of round trips (`capacity`, setting freeformBridge.trafficBufferSize)
 * and a byte budget for what is large (lowered requests, lifted inputs, raw warning payloads). When
 * the budget is exceeded the oldest round trips lose their bodies (their summary stays in the list).
 * Shared history is kept once (traffic-request-pool.ts); search, the summaries and the views of a
 * record each live in their own file.
 */

/**
 * Default budget for retained bodies: 64 MiB, strings counted as UTF-16 (an upper bound of V8's string
 * storage) and the parts of encoded requests, kept as UTF-8 bytes, by their length.
 */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface TrafficStoreOptions {
  /** Ring buffer size in round trips. */
  capacity?: number;
  /** Budget for retained bodies, in bytes (UTF-16 upper bound). */
  maxBodyBytes?: number;
  /** The backend URL requests go to right now (recorded at exchange start, for "copy as curl"). */
  getBackendUrl?: () => string | null;
  /** Applied to every string kept (removes known secrets before anything can show them). */
  redactText?: (text: string) => string;
}

/** What one event changed, for the host to post. */
export interface TrafficStoreChange {
  /** Round trips added or updated (including ones whose bodies were just evicted). */
  upserted: ExchangeSummary[];
  /** Round trips that left the ring buffer. */
  removedIds: string[];
}

function clampCapacity(capacity: number): number {
  if (!Number.isFinite(capacity)) return DEFAULT_TRAFFIC_BUFFER_SIZE;
  return Math.min(MAX_TRAFFIC_BUFFER_SIZE, Math.max(MIN_TRAFFIC_BUFFER_SIZE, Math.floor(capacity)));
}

export class TrafficStore {
  /** Insertion order = arrival order (a Map iterates in insertion order). */
  private readonly records = new Map<string, ExchangeRecord>();
  private readonly pool: RequestPool;
  private ownBytes = 0;
  private evictedBodyCount = 0;
  private nextSequence = 1;
  private capacity: number;
  private readonly maxBodyBytes: number;
  private readonly getBackendUrl: () => string | null;
  private readonly redactText: (text: string) => string;

  constructor(options: TrafficStoreOptions = {}) {
    this.capacity = clampCapacity(options.capacity ?? DEFAULT_TRAFFIC_BUFFER_SIZE);
    this.maxBodyBytes = Math.max(0, options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
    this.getBackendUrl = options.getBackendUrl ?? (() => null);
    this.redactText = options.redactText ?? ((text) => text);
    this.pool = new RequestPool(this.redactText);
  }

  /** Either form of the start event: objects (a bridge on this thread) or encoded (a bridge in a worker). */
  apply(event: BridgeTrafficEvent): TrafficStoreChange {
    switch (event.type) {
      case 'exchange-start':
        return this.start(event);
      case 'exchange-delta': {
        const record = this.records.get(event.exchangeId);
        if (!record) return { upserted: [], removedIds: [] };
        this.addItems(record, event.items);
        this.addWarnings(record, event.warnings);
        countOutputInto(record.summary, record.items, record.warnings);
        return { upserted: [record.summary, ...this.enforceBudget(record)], removedIds: [] };
      }
      case 'exchange-end': {
        // An exchange that began before a clear has no record any more: it stays forgotten.
        const record = this.records.get(event.exchangeId);
        if (!record) return { upserted: [], removedIds: [] };
        // The end carries the final output and every warning (lowering's too): it replaces the deltas.
        this.releaseItemsAndWarnings(record);
        if (!record.evicted) {
          this.addItems(record, event.output);
          this.addWarnings(record, event.warnings);
        }
        record.usage = event.usage;
        const summary = record.summary;
        summary.status = event.outcome;
        summary.httpStatus = event.httpStatus;
        summary.durationMs = event.timings.totalMs;
        summary.firstTokenMs = event.timings.firstDeltaMs;
        summary.upstreamHeadersMs = event.timings.upstreamHeadersMs;
        summary.inputTokens = event.usage?.input_tokens ?? null;
        summary.outputTokens = event.usage?.output_tokens ?? null;
        summary.error = event.error ? { code: event.error.code, message: capSummaryError(event.error.message, this.redactText) } : null;
        // Counts come from the full lists even after the bodies are evicted.
        countOutputInto(summary, event.output, event.warnings);
        return { upserted: [summary, ...this.enforceBudget(record)], removedIds: [] };
      }
      case 'exchange-rejected': {
        const summary = this.createSummary(event.exchangeId, event.startedAt);
        if (event.roundTrip) summary.roundTrip = { ...event.roundTrip };
        summary.status = 'rejected';
        summary.httpStatus = event.httpStatus;
        summary.durationMs = 0;
        summary.error = { code: event.error.code, message: capSummaryError(event.error.message, this.redactText) };
        summary.bodyRetained = false;
        const record: ExchangeRecord = { summary, tools: [], toolChoice: null, inputItems: null, backendUrl: null, request: null, items: [], warnings: [], usage: null, ownBytes: 0, evicted: false };
        this.records.set(summary.id, record);
        return { upserted: [summary], removedIds: this.enforceCapacity() };
      }
      default: {
        const unknownEvent: never = event;
        throw new Error(`unknown traffic event ${toJsonText(unknownEvent)}`);
      }
    }
  }

  /** Round trips, oldest first. */
  getSummaries(): ExchangeSummary[] {
    return [...this.records.values()].map((record) => ({ ...record.summary }));
  }

  getStats(): TrafficStats {
    return {
      exchangeCount: this.records.size,
      capacity: this.capacity,
      retainedBodyBytes: this.pool.bytes + this.ownBytes,
      maxBodyBytes: this.maxBodyBytes,
      evictedBodyCount: this.evictedBodyCount,
    };
  }

  getCapacity(): number {
    return this.capacity;
  }

  /** Changes the ring buffer size; returns the round trips that fell out. */
  resize(capacity: number): string[] {
    this.capacity = clampCapacity(capacity);
    return this.enforceCapacity();
  }

  clear(): void {
    this.records.clear();
    this.pool.clear();
    this.ownBytes = 0;
    this.evictedBodyCount = 0;
  }

  has(exchangeId: string): boolean {
    return this.records.has(exchangeId);
  }

  getDetail(exchangeId: string): ExchangeDetail | null {
    const record = this.records.get(exchangeId);
    return record ? toExchangeDetail(record) : null;
  }

  /** The lowered Chat request as sent upstream (compact JSON), or null when evicted or rejected. */
  getLoweredRequestValue(exchangeId: string): unknown {
    const request = this.records.get(exchangeId)?.request;
    return request ? rebuildStoredRequest(request) : null;
  }

  getBackendUrlOf(exchangeId: string): string | null {
    return this.records.get(exchangeId)?.backendUrl ?? null;
  }

  /** A body for the panel (formatted, cut at TEXT_VIEW_LIMIT). */
  getBodyContent(reference: BodyReference): BodyContent | null {
    const record = this.records.get(reference.exchangeId);
    return record ? toBodyContent(record, reference) : null;
  }

  /** Full text for "open as JSON document": formatted JSON of the referenced body. */
  getDocumentText(reference: BodyReference): string | null {
    const record = this.records.get(reference.exchangeId);
    return record ? toDocumentText(record, reference) : null;
  }

  /** Text for "copy": a lifted input, arguments or raw payload verbatim; JSON for whole bodies. */
  getCopyText(reference: BodyReference): string | null {
    const record = this.records.get(reference.exchangeId);
    return record ? toCopyText(record, reference) : null;
  }

  /** Round trips whose payloads contain `query` (case-insensitive); see searchRecords. */
  search(query: string): string[] {
    return searchRecords(this.records.values(), query);
  }

  /** One JSON value per round trip, oldest first, for "export as JSON Lines". */
  *exportValues(): Generator<unknown> {
    for (const record of this.records.values()) yield toExportValue(record);
  }

  // ---------- internals ----------

  private start(event: EncodedExchangeStartEvent): TrafficStoreChange {
    const summary = this.createSummary(event.exchangeId, event.startedAt);
    summary.roundTrip = { ...event.roundTrip };
    summary.model = event.model;
    summary.upstreamModel = event.upstreamModel;
    summary.stream = event.clientStream;
    summary.requestBytes = event.requestBytes;
    const request = this.pool.storeEncoded(event.encodedRequest);
    summary.loweredRequestBytes = measureStoredRequest(request);
    const original = toJsonText(event.toolChoice.original);
    const sent = toJsonText(event.toolChoice.sent);
    const record: ExchangeRecord = {
      summary,
      tools: event.tools.map((tool) => ({
        name: tool.name,
        namespace: tool.namespace,
        kind: tool.kind,
        source: tool.source,
        disposition: tool.disposition,
        wireName: tool.wireName,
        reason: tool.reason,
      })),
      toolChoice: { original, sent, rewritten: original !== sent },
      inputItems: event.inputItems,
      backendUrl: this.getBackendUrl(),
      request,
      items: [],
      warnings: [],
      usage: null,
      ownBytes: stringBytes(request.head),
      evicted: false,
    };
    this.ownBytes += record.ownBytes;
    this.records.set(summary.id, record);
    const removedIds = this.enforceCapacity();
    return { upserted: [summary, ...this.enforceBudget(record)], removedIds };
  }

  private createSummary(id: string, startedAt: string): ExchangeSummary {
    // A repeated id (should not happen) replaces the old record rather than leaking it.
    if (this.records.has(id)) this.removeRecord(id);
    return createExchangeSummary(id, this.nextSequence++, startedAt);
  }

  private addItems(record: ExchangeRecord, items: readonly ResponsesOutputItem[]): void {
    for (const item of items) {
      const kept = redactItem(item, this.redactText);
      record.items.push(kept);
      this.addOwnBytes(record, estimateItemBytes(kept));
    }
  }

  private addWarnings(record: ExchangeRecord, warnings: readonly BridgeWarning[]): void {
    for (const warning of warnings) {
      const kept: BridgeWarning = { ...warning, detail: this.redactText(warning.detail) };
      if (warning.raw !== undefined) kept.raw = this.redactText(warning.raw);
      record.warnings.push(kept);
      this.addOwnBytes(record, estimateWarningBytes(kept));
    }
  }

  private addOwnBytes(record: ExchangeRecord, bytes: number): void {
    record.ownBytes += bytes;
    this.ownBytes += bytes;
  }

  private releaseItemsAndWarnings(record: ExchangeRecord): void {
    const bytes = record.items.reduce((total, item) => total + estimateItemBytes(item), 0) + record.warnings.reduce((total, warning) => total + estimateWarningBytes(warning), 0);
    record.items = [];
    record.warnings = [];
    this.addOwnBytes(record, -bytes);
  }

  /** Oldest first, never the round trip just changed: the newest request is always viewable. */
  private enforceBudget(current: ExchangeRecord): ExchangeSummary[] {
    const evicted: ExchangeSummary[] = [];
    if (this.pool.bytes + this.ownBytes <= this.maxBodyBytes) return evicted;
    for (const record of this.records.values()) {
      if (this.pool.bytes + this.ownBytes <= this.maxBodyBytes) break;
      if (record === current || record.evicted || record.ownBytes === 0) continue;
      this.dropBodies(record);
      record.evicted = true;
      record.summary.bodyRetained = false;
      this.evictedBodyCount += 1;
      evicted.push(record.summary);
    }
    return evicted;
  }

  private dropBodies(record: ExchangeRecord): void {
    if (record.request) {
      this.pool.releaseRequest(record.request);
      record.request = null;
    }
    record.items = [];
    record.warnings = [];
    this.ownBytes -= record.ownBytes;
    record.ownBytes = 0;
  }

  private enforceCapacity(): string[] {
    const removed: string[] = [];
    for (const id of this.records.keys()) {
      if (this.records.size <= this.capacity) break;
      removed.push(id);
      this.removeRecord(id);
    }
    return removed;
  }

  private removeRecord(id: string): void {
    const record = this.records.get(id);
    if (!record) return;
    this.dropBodies(record);
    if (record.evicted) this.evictedBodyCount -= 1;
    this.records.delete(id);
  }
}
