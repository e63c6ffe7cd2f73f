import type { ChatRequest } from '../core/chat/chat-completions-api.ts';
import { DEFAULT_TRAFFIC_BUFFER_SIZE, MAX_TRAFFIC_BUFFER_SIZE, MIN_TRAFFIC_BUFFER_SIZE } from '../core/defaults.ts';
import { isPlainObject, parseJson } from '../core/parse-json.ts';
import type { ResponsesOutputItem, ResponsesUsage } from '../core/responses/responses-output.ts';
import { UNLABELLED_ROUND_TRIP } from '../core/round-trip-label.ts';
import type { ExchangeStartEvent, TrafficEvent } from '../core/traffic-event.ts';
import type { BridgeWarning, WarningKind } from '../core/warnings.ts';
import {
  TEXT_VIEW_LIMIT,
  type BodyContent,
  type BodyReference,
  type ExchangeDetail,
  type ExchangeSummary,
  type LoweredToolMark,
  type OutputItemView,
  type TextView,
  type ToolView,
  type TrafficStats,
  type WarningView,
} from '../shared/webview-protocol.ts';

/*
 * The live traffic panel's memory, kept free of `vscode` so it runs in plain Node tests.
 *
 * Bounded twice: a ring buffer of round trips (`capacity`, setting freeformBridge.trafficBufferSize)
 * and a byte budget for what is large (lowered requests, lifted inputs, raw warning payloads). When
 * the budget is exceeded the oldest round trips lose their bodies (their summary stays in the list).
 *
 * Codex resends the whole conversation on every turn, so consecutive lowered requests share almost
 * all their messages and the whole tool list. Each message and each tool list is therefore kept once,
 * as JSON text in a reference-counted pool, and every request is a list of references: a long
 * session costs about one copy of its history, not one per turn.
 */

/** Default budget for retained bodies: 64 MiB counted as UTF-16 (an upper bound of V8's string storage). */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Error messages in summaries are cut here: they travel in every snapshot. */
const SUMMARY_ERROR_LIMIT = 2000;
/** Per-object overhead added to the byte estimate of retained items and warnings. */
const OBJECT_OVERHEAD_BYTES = 64;

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

/** A JSON fragment kept once however many requests contain it. */
interface PoolEntry {
  text: string;
  references: number;
  /** UTF-8 length, for the request size shown in the list. */
  utf8Bytes: number;
}

interface StoredRequest {
  /** The request as JSON with `messages` (and `tools`, when present) emptied; key order kept. */
  head: string;
  messages: PoolEntry[];
  tools: PoolEntry | null;
}

interface ExchangeRecord {
  summary: ExchangeSummary;
  tools: ToolView[];
  toolChoice: { original: string; sent: string; rewritten: boolean } | null;
  inputItems: number | null;
  backendUrl: string | null;
  request: StoredRequest | null;
  items: ResponsesOutputItem[];
  warnings: BridgeWarning[];
  usage: ResponsesUsage | null;
  /** Bytes of the head, items and warnings (pooled fragments are counted in the pool). */
  ownBytes: number;
  /** The bodies were dropped to keep within the byte budget. */
  evicted: boolean;
}

/** What one event changed, for the host to post. */
export interface TrafficStoreChange {
  /** Round trips added or updated (including ones whose bodies were just evicted). */
  upserted: ExchangeSummary[];
  /** Round trips that left the ring buffer. */
  removedIds: string[];
}

function stringBytes(text: string | null | undefined): number {
  return text ? text.length * 2 : 0;
}

function clampCapacity(capacity: number): number {
  if (!Number.isFinite(capacity)) return DEFAULT_TRAFFIC_BUFFER_SIZE;
  return Math.min(MAX_TRAFFIC_BUFFER_SIZE, Math.max(MIN_TRAFFIC_BUFFER_SIZE, Math.floor(capacity)));
}

function toTextView(text: string): TextView {
  return text.length <= TEXT_VIEW_LIMIT ? { text, totalLength: text.length, truncated: false } : { text: text.slice(0, TEXT_VIEW_LIMIT), totalLength: text.length, truncated: true };
}

function toJsonText(value: unknown): string {
  return JSON.stringify(value ?? null) ?? 'null';
}

function estimateItemBytes(item: ResponsesOutputItem): number {
  switch (item.type) {
    case 'custom_tool_call':
      return OBJECT_OVERHEAD_BYTES + stringBytes(item.input) + stringBytes(item.name) + stringBytes(item.call_id);
    case 'function_call':
      return OBJECT_OVERHEAD_BYTES + stringBytes(item.arguments) + stringBytes(item.name) + stringBytes(item.call_id);
    case 'message':
      return OBJECT_OVERHEAD_BYTES + item.content.reduce((total, part) => total + stringBytes(part.text), 0);
    case 'reasoning':
      return OBJECT_OVERHEAD_BYTES + [...item.summary, ...item.content].reduce((total, part) => total + stringBytes(part.text), 0);
    default: {
      const unknownItem: never = item;
      return OBJECT_OVERHEAD_BYTES + stringBytes(toJsonText(unknownItem));
    }
  }
}

function estimateWarningBytes(warning: BridgeWarning): number {
  return OBJECT_OVERHEAD_BYTES + stringBytes(warning.detail) + stringBytes(warning.raw) + stringBytes(warning.tool) + stringBytes(warning.callId);
}

function itemText(item: ResponsesOutputItem): string {
  switch (item.type) {
    case 'custom_tool_call':
      return item.input;
    case 'function_call':
      return item.arguments;
    case 'message':
      return item.content.map((part) => part.text).join('');
    case 'reasoning':
      return [...item.summary, ...item.content].map((part) => part.text).join('\n');
    default: {
      const unknownItem: never = item;
      return toJsonText(unknownItem);
    }
  }
}

function toItemView(item: ResponsesOutputItem, index: number): OutputItemView {
  switch (item.type) {
    case 'custom_tool_call':
      return { kind: 'custom_tool_call', index, name: item.name, namespace: item.namespace ?? null, callId: item.call_id, input: toTextView(item.input), status: item.status };
    case 'function_call':
      return { kind: 'function_call', index, name: item.name, namespace: item.namespace ?? null, callId: item.call_id, arguments: toTextView(item.arguments), status: item.status };
    case 'message':
      return { kind: 'message', index, text: toTextView(itemText(item)), status: item.status };
    case 'reasoning':
      return { kind: 'reasoning', index, text: toTextView(itemText(item)) };
    default: {
      const unknownItem: never = item;
      throw new Error(`unknown output item ${toJsonText(unknownItem)}`);
    }
  }
}

function callIdOf(item: ResponsesOutputItem): string | null {
  return item.type === 'custom_tool_call' || item.type === 'function_call' ? item.call_id : null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class TrafficStore {
  /** Insertion order = arrival order (a Map iterates in insertion order). */
  private readonly records = new Map<string, ExchangeRecord>();
  private readonly pool = new Map<string, PoolEntry>();
  private poolBytes = 0;
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
  }

  apply(event: TrafficEvent): TrafficStoreChange {
    switch (event.type) {
      case 'exchange-start':
        return this.start(event);
      case 'exchange-delta': {
        const record = this.records.get(event.exchangeId);
        if (!record) return { upserted: [], removedIds: [] };
        this.addItems(record, event.items);
        this.addWarnings(record, event.warnings);
        this.refreshSummary(record);
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
        summary.error = event.error ? { code: event.error.code, message: this.capError(event.error.message) } : null;
        this.refreshSummary(record, event.output, event.warnings);
        return { upserted: [summary, ...this.enforceBudget(record)], removedIds: [] };
      }
      case 'exchange-rejected': {
        const summary = this.createSummary(event.exchangeId, event.startedAt);
        if (event.roundTrip) summary.roundTrip = { ...event.roundTrip };
        summary.status = 'rejected';
        summary.httpStatus = event.httpStatus;
        summary.durationMs = 0;
        summary.error = { code: event.error.code, message: this.capError(event.error.message) };
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
      retainedBodyBytes: this.poolBytes + this.ownBytes,
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
    this.poolBytes = 0;
    this.ownBytes = 0;
    this.evictedBodyCount = 0;
  }

  has(exchangeId: string): boolean {
    return this.records.has(exchangeId);
  }

  getDetail(exchangeId: string): ExchangeDetail | null {
    const record = this.records.get(exchangeId);
    if (!record) return null;
    const deliveredIndex = new Map<string, number>();
    record.items.forEach((item, index) => {
      const callId = callIdOf(item);
      if (callId !== null && !deliveredIndex.has(callId)) deliveredIndex.set(callId, index);
    });
    return {
      summary: { ...record.summary },
      tools: record.tools.map((tool) => ({ ...tool })),
      toolChoice: record.toolChoice,
      inputItems: record.inputItems,
      items: record.items.map(toItemView),
      warnings: record.warnings.map(
        (warning, index): WarningView => ({
          index,
          kind: warning.kind,
          tool: warning.tool,
          callId: warning.callId,
          detail: warning.detail,
          raw: warning.raw === undefined ? null : toTextView(warning.raw),
          deliveredIndex: warning.callId === null ? null : (deliveredIndex.get(warning.callId) ?? null),
        }),
      ),
      usage: record.usage ? JSON.stringify(record.usage, null, 2) : null,
      backendUrl: record.backendUrl,
    };
  }

  /** The lowered Chat request as sent upstream (compact JSON), or null when evicted or rejected. */
  getLoweredRequestValue(exchangeId: string): unknown {
    const request = this.records.get(exchangeId)?.request;
    return request ? this.rebuildRequest(request) : null;
  }

  getBackendUrlOf(exchangeId: string): string | null {
    return this.records.get(exchangeId)?.backendUrl ?? null;
  }

  /** A body for the panel (formatted, cut at TEXT_VIEW_LIMIT). */
  getBodyContent(reference: BodyReference): BodyContent | null {
    const record = this.records.get(reference.exchangeId);
    if (!record) return null;
    switch (reference.kind) {
      case 'loweredRequest': {
        if (!record.request) return null;
        const value = this.rebuildRequest(record.request);
        return { text: toTextView(JSON.stringify(value, null, 2)), loweredTools: this.markLoweredTools(record), toolChoice: record.toolChoice };
      }
      case 'exchange':
      case 'item':
      case 'warningRaw': {
        const text = this.getDocumentText(reference);
        return text === null ? null : { text: toTextView(text), loweredTools: null, toolChoice: null };
      }
      default: {
        const unknownReference: never = reference;
        throw new Error(`unknown body ${toJsonText(unknownReference)}`);
      }
    }
  }

  /** Full text for "open as JSON document": formatted JSON of the referenced body. */
  getDocumentText(reference: BodyReference): string | null {
    const record = this.records.get(reference.exchangeId);
    if (!record) return null;
    switch (reference.kind) {
      case 'exchange':
        return JSON.stringify(this.toExportValue(record), null, 2);
      case 'loweredRequest':
        return record.request ? JSON.stringify(this.rebuildRequest(record.request), null, 2) : null;
      case 'item': {
        const item = record.items[reference.index];
        return item ? JSON.stringify(item, null, 2) : null;
      }
      case 'warningRaw': {
        const warning = record.warnings[reference.index];
        return warning ? JSON.stringify(warning, null, 2) : null;
      }
      default: {
        const unknownReference: never = reference;
        throw new Error(`unknown body ${toJsonText(unknownReference)}`);
      }
    }
  }

  /** Text for "copy": a lifted input, arguments or raw payload verbatim; JSON for whole bodies. */
  getCopyText(reference: BodyReference): string | null {
    const record = this.records.get(reference.exchangeId);
    if (!record) return null;
    if (reference.kind === 'item') {
      const item = record.items[reference.index];
      return item ? itemText(item) : null;
    }
    if (reference.kind === 'warningRaw') return record.warnings[reference.index]?.raw ?? null;
    return this.getDocumentText(reference);
  }

  /**
   * Round trips whose payloads contain `query` (case-insensitive): lowered request (also matched in
   * its JSON-escaped form, so a line break typed as such finds `\n` in the JSON), lifted inputs,
   * arguments, texts, warnings and errors.
   */
  search(query: string): string[] {
    if (query === '') return [];
    const plain = new RegExp(escapeRegExp(query), 'i');
    const escaped = JSON.stringify(query).slice(1, -1);
    const jsonPattern = escaped === query ? plain : new RegExp(`${escapeRegExp(query)}|${escapeRegExp(escaped)}`, 'i');
    const poolHits = new Map<PoolEntry, boolean>();
    const poolMatches = (entry: PoolEntry): boolean => {
      let hit = poolHits.get(entry);
      if (hit === undefined) {
        hit = jsonPattern.test(entry.text);
        poolHits.set(entry, hit);
      }
      return hit;
    };
    const matches: string[] = [];
    for (const record of this.records.values()) {
      const summary = record.summary;
      const found =
        plain.test(summary.id) ||
        plain.test(summary.model) ||
        plain.test(summary.roundTrip.text) ||
        plain.test(summary.error?.message ?? '') ||
        record.items.some((item) => plain.test(itemText(item)) || ((item.type === 'custom_tool_call' || item.type === 'function_call') && plain.test(item.name))) ||
        record.warnings.some((warning) => plain.test(warning.detail) || plain.test(warning.raw ?? '') || plain.test(warning.kind)) ||
        (record.request !== null && (jsonPattern.test(record.request.head) || (record.request.tools !== null && poolMatches(record.request.tools)) || record.request.messages.some(poolMatches)));
      if (found) matches.push(summary.id);
    }
    return matches;
  }

  /** One JSON value per round trip, oldest first, for "export as JSON Lines". */
  *exportValues(): Generator<unknown> {
    for (const record of this.records.values()) yield this.toExportValue(record);
  }

  // ---------- internals ----------

  private start(event: ExchangeStartEvent): TrafficStoreChange {
    const summary = this.createSummary(event.exchangeId, event.startedAt);
    summary.roundTrip = { ...event.roundTrip };
    summary.model = event.model;
    summary.upstreamModel = event.upstreamModel;
    summary.stream = event.clientStream;
    summary.requestBytes = event.requestBytes;
    const request = this.storeRequest(event.loweredRequest);
    summary.loweredRequestBytes = this.measureRequest(request);
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
    return {
      id,
      sequence: this.nextSequence++,
      startedAt,
      roundTrip: { ...UNLABELLED_ROUND_TRIP },
      model: '',
      upstreamModel: '',
      stream: false,
      status: 'running',
      httpStatus: null,
      durationMs: null,
      firstTokenMs: null,
      upstreamHeadersMs: null,
      inputTokens: null,
      outputTokens: null,
      liftedCallCount: 0,
      functionCallCount: 0,
      warningCount: 0,
      warningKinds: [],
      toolNames: [],
      error: null,
      requestBytes: 0,
      loweredRequestBytes: null,
      bodyRetained: true,
    };
  }

  private capError(message: string): string {
    const redacted = this.redactText(message);
    return redacted.length > SUMMARY_ERROR_LIMIT ? `${redacted.slice(0, SUMMARY_ERROR_LIMIT)} …` : redacted;
  }

  /** Counts come from the full lists even after the bodies are evicted (then from the end event). */
  private refreshSummary(record: ExchangeRecord, items: readonly ResponsesOutputItem[] = record.items, warnings: readonly BridgeWarning[] = record.warnings): void {
    const summary = record.summary;
    summary.liftedCallCount = items.filter((item) => item.type === 'custom_tool_call').length;
    summary.functionCallCount = items.filter((item) => item.type === 'function_call').length;
    summary.warningCount = warnings.length;
    summary.warningKinds = [...new Set<WarningKind>(warnings.map((warning) => warning.kind))];
    const names = new Set<string>();
    for (const item of items) if (item.type === 'custom_tool_call' || item.type === 'function_call') names.add(item.name);
    for (const warning of warnings) if (warning.tool) names.add(warning.tool);
    summary.toolNames = [...names];
  }

  private addItems(record: ExchangeRecord, items: readonly ResponsesOutputItem[]): void {
    for (const item of items) {
      const kept = this.redactItem(item);
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

  private redactItem(item: ResponsesOutputItem): ResponsesOutputItem {
    switch (item.type) {
      case 'custom_tool_call':
        return { ...item, input: this.redactText(item.input) };
      case 'function_call':
        return { ...item, arguments: this.redactText(item.arguments) };
      case 'message':
        return { ...item, content: item.content.map((part) => ({ ...part, text: this.redactText(part.text) })) };
      case 'reasoning':
        return {
          ...item,
          summary: item.summary.map((part) => ({ ...part, text: this.redactText(part.text) })),
          content: item.content.map((part) => ({ ...part, text: this.redactText(part.text) })),
        };
      default: {
        const unknownItem: never = item;
        return unknownItem;
      }
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

  private storeRequest(request: ChatRequest): StoredRequest {
    const hasTools = request.tools !== undefined;
    // Emptied, not deleted: the rebuilt request keeps the original key order.
    const head = this.redactText(JSON.stringify({ ...request, messages: [], ...(hasTools ? { tools: [] } : {}) }));
    return {
      head,
      messages: request.messages.map((message) => this.acquire(JSON.stringify(message))),
      tools: hasTools ? this.acquire(JSON.stringify(request.tools)) : null,
    };
  }

  private acquire(json: string): PoolEntry {
    const text = this.redactText(json);
    const existing = this.pool.get(text);
    if (existing) {
      existing.references += 1;
      return existing;
    }
    const entry: PoolEntry = { text, references: 1, utf8Bytes: Buffer.byteLength(text, 'utf8') };
    this.pool.set(text, entry);
    this.poolBytes += stringBytes(text);
    return entry;
  }

  private release(entry: PoolEntry): void {
    entry.references -= 1;
    if (entry.references > 0) return;
    this.pool.delete(entry.text);
    this.poolBytes -= stringBytes(entry.text);
  }

  /** Exact UTF-8 size of the compact request JSON, from its parts. */
  private measureRequest(request: StoredRequest): number {
    const messagesBytes = request.messages.reduce((total, entry) => total + entry.utf8Bytes, 0) + Math.max(0, request.messages.length - 1);
    // The head holds `[]` for messages (and tools); the pooled parts carry their own brackets.
    return Buffer.byteLength(request.head, 'utf8') + messagesBytes + (request.tools ? request.tools.utf8Bytes - 2 : 0);
  }

  private rebuildRequest(request: StoredRequest): unknown {
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

  private markLoweredTools(record: ExchangeRecord): LoweredToolMark[] {
    if (!record.request?.tools) return [];
    const parsed = parseJson(record.request.tools.text);
    if (!parsed.success || !Array.isArray(parsed.value)) return [];
    return parsed.value.map((tool: unknown): LoweredToolMark => {
      const wireName = wireNameOf(tool);
      const declared = record.tools.find((candidate) => candidate.wireName === wireName && candidate.disposition !== 'dropped');
      return {
        wireName: wireName ?? '?',
        name: declared?.name ?? wireName ?? '?',
        namespace: declared?.namespace ?? null,
        kind: declared?.kind ?? 'function',
        disposition: declared?.disposition ?? 'lowered',
        json: JSON.stringify(tool, null, 2),
      };
    });
  }

  private toExportValue(record: ExchangeRecord): Record<string, unknown> {
    const parse = (text: string): unknown => {
      const parsed = parseJson(text);
      return parsed.success ? parsed.value : text;
    };
    return {
      exchange: { ...record.summary },
      backendUrl: record.backendUrl,
      inputItems: record.inputItems,
      tools: record.tools,
      toolChoice: record.toolChoice ? { original: parse(record.toolChoice.original), sent: parse(record.toolChoice.sent) } : null,
      loweredRequest: record.request ? this.rebuildRequest(record.request) : null,
      output: record.items,
      warnings: record.warnings,
      usage: record.usage,
    };
  }

  /** Oldest first, never the round trip just changed: the newest request is always viewable. */
  private enforceBudget(current: ExchangeRecord): ExchangeSummary[] {
    const evicted: ExchangeSummary[] = [];
    if (this.poolBytes + this.ownBytes <= this.maxBodyBytes) return evicted;
    for (const record of this.records.values()) {
      if (this.poolBytes + this.ownBytes <= this.maxBodyBytes) break;
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
      for (const entry of record.request.messages) this.release(entry);
      if (record.request.tools) this.release(record.request.tools);
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

function wireNameOf(tool: unknown): string | null {
  if (!isPlainObject(tool)) return null;
  for (const key of ['function', 'custom']) {
    const inner = tool[key];
    if (isPlainObject(inner) && typeof inner.name === 'string') return inner.name;
  }
  return null;
}
