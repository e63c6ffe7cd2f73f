import type { ChatCompletionChunk, ChatToolCallWire, ChatUsage } from '../chat/chat-completions-api.ts';
import { createGrammarCache, type GrammarCache } from '../grammar/grammar-cache.ts';
import { createCallId as createRandomCallId, createItemId as createRandomItemId, type ItemIdPrefix } from '../ids.ts';
import { createCallIdDeduplicator, liftNativeCustomToolCall, liftToolCall, readChatToolCallArguments } from '../lift/lift-tool-call.ts';
import { mapChatUsageToResponsesUsage } from '../lift/map-chat-usage.ts';
import { adviseTextToolCallFix, readTextToolCalls, TEXT_TOOL_CALL_FAMILY_NAMES, TextToolCallHold, type TextToolCallReading } from '../lift/read-text-tool-calls.ts';
import { mapChatFinishReason, type MappedChatFinishReason } from '../map-chat-finish-reason.ts';
import { isContextOverflow, readEngineErrorEnvelope } from '../engine-error.ts';
import type {
  ResponsesCustomToolCallItem,
  ResponsesFunctionCallItem,
  ResponsesMessageItem,
  ResponsesOutputItem,
  ResponsesReasoningItem,
  ResponsesResponse,
  ResponsesStatus,
  ResponsesStreamEvent,
  ResponsesUsage,
} from '../responses/responses-output.ts';
import type { ToolMap } from '../tool-map.ts';
import { createWarning, type BridgeWarning } from '../warnings.ts';
import { InputStringDecoder } from './input-string-decoder.ts';

/*
 * The stream translator: a pure, synchronous state machine from
 * parsed Chat Completions chunks to Responses SSE event objects. No I/O, no timers: the server owns
 * the clock and calls `keepalive()`, so the sequence counter lives in exactly one place.
 */

export interface StreamTranslatorOptions {
  responseId: string;
  model: string;
  createdAt: number;
  toolMap: ToolMap;
  /** Item id factory; tests inject a deterministic one. */
  createItemId?: (prefix: ItemIdPrefix) => string;
  /** Factory for call ids the engine did not send; tests inject a deterministic one. */
  createCallId?: () => string;
  /** Deliver custom inputs repaired when a repair makes them match their grammar (BridgeOptions.grammarRepair). */
  grammarRepair?: boolean;
  /**
   * Compiled grammars; the server keeps one per process so an uncompilable grammar is reported once
   * per process. Without it, the translator makes its own (once per response).
   */
  grammarCache?: GrammarCache;
  /**
   * Deliver a tool call the engine left in the assistant text as the call it is, when the whole text is
   * nothing but complete calls of offered tools (BridgeOptions.recoverTextToolCalls). Off: such text is
   * delivered as a message, with the same warning.
   */
  recoverTextToolCalls?: boolean;
  /**
   * Codex asked for no tool call (`tool_choice: "none"`): text that looks like call markup is then the
   * model's own text, delivered as written, neither read as calls nor warned about (the engine did
   * right not to parse it).
   */
  toolCallsRefused?: boolean;
}

export type StreamFailureCode = 'context_length_exceeded' | 'server_error';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type UnsequencedEvent = DistributiveOmit<ResponsesStreamEvent, 'sequence_number'>;

interface TextItemState {
  kind: 'reasoning' | 'message';
  outputIndex: number;
  itemId: string;
  /** Fragments joined once at close: no quadratic string building on long answers. */
  parts: string[];
  closed: boolean;
  doneItem: ResponsesOutputItem | null;
}

interface ToolCallState {
  kind: 'tool_call';
  /** Set when `output_item.added` is sent (once the name is known); -1 before. */
  outputIndex: number;
  itemId: string;
  /** Whether the engine sent the Chat-native `{"type":"custom","custom":{name,input}}` form. */
  native: boolean;
  wireId: string | null;
  wireName: string;
  /** Raw argument text (or the native custom input) exactly as the engine streamed it. */
  argumentsText: string;
  callId: string;
  itemType: 'function_call' | 'custom_tool_call';
  /** Progressive `{"input":"…"}` decoder for bridged custom calls. */
  decoder: InputStringDecoder | null;
  opened: boolean;
  closed: boolean;
  truncated: boolean;
  doneItem: ResponsesOutputItem | null;
  /** Read from the assistant text, not sent by the engine as a tool call. */
  recovered: boolean;
}

type ItemState = TextItemState | ToolCallState;

const WHITESPACE_ONLY = /^\s*$/;

/**
 * The most text (message, reasoning and tool-call arguments together, in UTF-16 units) one answer may
 * carry. The translator keeps all of it until the `*.done` events, and a backend that never finishes
 * would otherwise grow it until the process runs out of memory. 32 M units is about 60 times the
 * largest answer a model's output limit allows (a 128k-token answer is about 0.5 M), and what it costs
 * while the final events are written stays well under 300 MB.
 */
export const MAX_ANSWER_OUTPUT_CHARS = 32 * 1024 * 1024;

export class ChatStreamTranslator {
  private readonly options: StreamTranslatorOptions;
  private readonly createItemId: (prefix: ItemIdPrefix) => string;
  private readonly createCallId: () => string;
  private readonly deduplicateCallId = createCallIdDeduplicator();
  private readonly grammarCache: GrammarCache;

  private sequenceNumber = 0;
  private started = false;
  private isTerminated = false;
  private events: ResponsesStreamEvent[] = [];
  private readonly recordedWarnings: BridgeWarning[] = [];
  private terminalResponse: ResponsesResponse | null = null;

  /** Every opened item, in `output_index` order. */
  private readonly items: ItemState[] = [];
  /** The reasoning or message item that receives text now; a tool call or the other kind retires it. */
  private activeTextItem: TextItemState | null = null;
  /**
   * Whitespace-only text is held back: `"\n\n"` next to tool calls must not become a message,
   * but it is kept and sent once real text follows.
   */
  private heldWhitespace: { reasoning: string; message: string } = { reasoning: '', message: '' };
  /**
   * The answer's first message text, held while it could still be nothing but tool-call markup the
   * engine did not parse (read-text-tool-calls.ts); null once it is known to be a message (or when
   * recovery is off or no tool was offered), and from then on text streams as it comes.
   */
  private heldCallText: TextToolCallHold | null;
  private readonly recoverTextToolCalls: boolean;
  /** Whether assistant text is read for call markup at all: tools were offered and calls allowed. */
  private readonly readsCallMarkup: boolean;
  /** The engine sent a call of its own in this answer: call markup in the text is then not read as another. */
  private engineSentCalls = false;

  private readonly callsByIndex = new Map<number, ToolCallState>();
  private readonly callsByWireId = new Map<string, ToolCallState>();
  /** Every call seen, in order of first appearance (including calls whose name has not arrived yet). */
  private readonly calls: ToolCallState[] = [];
  private lastCall: ToolCallState | null = null;

  /** Text of every kind received so far, checked against MAX_ANSWER_OUTPUT_CHARS. */
  private outputChars = 0;

  private finishReason: string | null = null;
  private finishMapping: MappedChatFinishReason | null = null;
  private usage: ChatUsage | null = null;

  constructor(options: StreamTranslatorOptions) {
    this.options = options;
    this.createItemId = options.createItemId ?? createRandomItemId;
    this.createCallId = options.createCallId ?? createRandomCallId;
    this.grammarCache = options.grammarCache ?? createGrammarCache();
    this.recoverTextToolCalls = options.recoverTextToolCalls ?? true;
    this.readsCallMarkup = options.toolMap.size > 0 && options.toolCallsRefused !== true;
    this.heldCallText = this.recoverTextToolCalls && this.readsCallMarkup ? new TextToolCallHold() : null;
  }

  get warnings(): readonly BridgeWarning[] {
    return this.recordedWarnings;
  }

  get finalResponse(): ResponsesResponse | null {
    return this.terminalResponse;
  }

  get terminated(): boolean {
    return this.isTerminated;
  }

  /** `response.created` + `response.in_progress`; the other methods call it implicitly when needed. */
  start(): ResponsesStreamEvent[] {
    if (this.started || this.isTerminated) return [];
    this.beginBatch();
    this.ensureStarted();
    return this.endBatch();
  }

  push(chunk: ChatCompletionChunk): ResponsesStreamEvent[] {
    if (this.isTerminated) return [];
    this.beginBatch();
    this.ensureStarted();
    const error = readEngineErrorEnvelope(chunk);
    if (error !== null) {
      // The SSE layer normally turns error frames into fail(); an error frame that reaches us
      // anyway must still end the stream as failed, never be read as an empty success.
      this.emitFailed(isContextOverflow(error) ? 'context_length_exceeded' : 'server_error', `backend stream failed: ${error.message}`);
      return this.endBatch();
    }
    if (chunk.usage) this.usage = chunk.usage;
    const choice = pickFirstChoice(chunk);
    if (choice) {
      const delta = choice.delta;
      if (delta) {
        // vLLM 0.11.1–0.15 sends the same text under both keys: read one, never both.
        const reasoning = delta.reasoning ?? delta.reasoning_content;
        if (reasoning) this.appendText('reasoning', reasoning);
        // A chunk may carry content and tool_calls together; text comes first.
        if (delta.content) this.appendText('message', delta.content);
        if (delta.tool_calls) for (const entry of delta.tool_calls) this.applyToolCallDelta(entry);
        if (this.outputChars > MAX_ANSWER_OUTPUT_CHARS) {
          this.emitFailed(
            'server_error',
            `the backend's answer has more than ${MAX_ANSWER_OUTPUT_CHARS / 1024 / 1024} MB of output text, the bridge's cap on the text it keeps for one answer; it stopped reading the backend (a backend that never finishes, or an answer far beyond any output limit)`,
          );
          return this.endBatch();
        }
      }
      // Arguments in the finish chunk were applied above, before anything closes.
      if (choice.finish_reason && this.finishReason === null) this.handleFinishReason(choice.finish_reason);
    }
    return this.endBatch();
  }

  keepalive(): ResponsesStreamEvent[] {
    if (this.isTerminated) return [];
    this.beginBatch();
    if (!this.started) this.ensureStarted();
    else this.emit({ type: 'response.in_progress', response: this.createSnapshot() });
    return this.endBatch();
  }

  finish(): ResponsesStreamEvent[] {
    if (this.isTerminated) return [];
    this.beginBatch();
    this.ensureStarted();
    const mapping = this.finishMapping;
    if (this.finishReason === null || mapping === null) {
      // Ollama's error path and engine deaths end the stream without a finish reason.
      this.emitFailed('server_error', 'backend stream ended before a finish reason (no finish chunk before the end of the stream)');
    } else if (mapping.status === 'failed') {
      this.emitFailed('server_error', `backend finished with reason "${this.finishReason}"`);
    } else if (this.findNamelessCall() !== null) {
      // A call whose header came after the finish chunk and never carried a name.
      this.emitNamelessCallFailure();
    } else {
      // Items that opened after the finish chunk (nothing should, but engines vary) close now.
      this.closeOpenItems();
      const truncated = this.items.some((item) => item.kind === 'tool_call' && item.truncated);
      let status: ResponsesStatus = mapping.status;
      let incompleteReason = mapping.incompleteReason;
      if (truncated && status === 'completed') {
        status = 'incomplete';
        incompleteReason = 'max_output_tokens';
      }
      const response = this.createResponse(status);
      response.usage = this.createUsage();
      if (status === 'incomplete') {
        response.incomplete_details = { reason: incompleteReason ?? 'max_output_tokens' };
        this.emitTerminal('response.incomplete', response);
      } else {
        this.emitTerminal('response.completed', response);
      }
    }
    return this.endBatch();
  }

  /** Failure after the stream started: `response.failed`, open calls never delivered. */
  fail(error: { code: StreamFailureCode; message: string }): ResponsesStreamEvent[] {
    if (this.isTerminated) return [];
    this.beginBatch();
    this.ensureStarted();
    this.emitFailed(error.code, error.message);
    return this.endBatch();
  }

  // ---------- event plumbing ----------

  private beginBatch(): void {
    this.events = [];
  }

  private endBatch(): ResponsesStreamEvent[] {
    const batch = this.events;
    this.events = [];
    return batch;
  }

  private emit(event: UnsequencedEvent): void {
    // `type` first, then `sequence_number`, as OpenAI orders them; the remaining fields follow.
    const sequenced: ResponsesStreamEvent = Object.assign({ type: event.type, sequence_number: this.sequenceNumber++ }, event);
    this.events.push(sequenced);
  }

  private ensureStarted(): void {
    if (this.started) return;
    this.started = true;
    this.emit({ type: 'response.created', response: this.createSnapshot() });
    this.emit({ type: 'response.in_progress', response: this.createSnapshot() });
  }

  /** The in-progress snapshot; created, the first in_progress and every keepalive carry the same one. */
  private createSnapshot(): ResponsesResponse {
    return this.createResponse('in_progress', []);
  }

  private createResponse(status: ResponsesStatus, output: ResponsesOutputItem[] = this.collectDoneItems()): ResponsesResponse {
    return {
      id: this.options.responseId,
      object: 'response',
      created_at: this.options.createdAt,
      model: this.options.model,
      status,
      output,
    };
  }

  /** The terminal `output` is exactly the items sent in `output_item.done`, in `output_index` order. */
  private collectDoneItems(): ResponsesOutputItem[] {
    const output: ResponsesOutputItem[] = [];
    for (const item of this.items) if (item.doneItem) output.push(item.doneItem);
    return output;
  }

  private createUsage(): ResponsesUsage {
    return mapChatUsageToResponsesUsage(this.usage);
  }

  private emitTerminal(type: 'response.completed' | 'response.incomplete' | 'response.failed', response: ResponsesResponse): void {
    this.emit({ type, response });
    this.terminalResponse = response;
    this.isTerminated = true;
  }

  /** Open items stay open: Codex only stores `output_item.done`, so nothing partial reaches its history. */
  private emitFailed(code: StreamFailureCode, message: string): void {
    const response = this.createResponse('failed');
    response.error = { code, message };
    this.emitTerminal('response.failed', response);
  }

  /** A warning about the answer found outside the translator (the stream's bytes), kept with its own. */
  recordWarning(warning: BridgeWarning): void {
    this.recordedWarnings.push(warning);
  }

  private addWarning(warning: BridgeWarning | null): void {
    if (warning) this.recordedWarnings.push(warning);
  }

  // ---------- reasoning and message items ----------

  private appendText(kind: 'reasoning' | 'message', text: string): void {
    this.outputChars += text.length;
    if (kind === 'message' && this.heldCallText !== null) {
      if (this.heldCallText.push(text)) return;
      this.releaseHeldCallText();
      return;
    }
    this.streamText(kind, text);
  }

  /** The held text is a message after all: it streams from here on. */
  private releaseHeldCallText(): void {
    const held = this.heldCallText?.text ?? '';
    this.heldCallText = null;
    if (held !== '') this.streamText('message', held);
  }

  private streamText(kind: 'reasoning' | 'message', text: string): void {
    const active = this.activeTextItem;
    if (active && active.kind === kind && !active.closed) {
      active.parts.push(text);
      this.emitTextDelta(active, text);
      return;
    }
    if (WHITESPACE_ONLY.test(text)) {
      this.heldWhitespace[kind] += text;
      return;
    }
    const fullText = this.heldWhitespace[kind] + text;
    const item = this.openTextItem(kind);
    item.parts.push(fullText);
    this.emitTextDelta(item, fullText);
  }

  private openTextItem(kind: 'reasoning' | 'message'): TextItemState {
    this.retireActiveTextItem();
    this.heldWhitespace = { reasoning: '', message: '' };
    const item: TextItemState = {
      kind,
      outputIndex: this.items.length,
      itemId: this.createItemId(kind === 'reasoning' ? 'rs' : 'msg'),
      parts: [],
      closed: false,
      doneItem: null,
    };
    this.items.push(item);
    this.activeTextItem = item;
    if (kind === 'reasoning') {
      this.emit({
        type: 'response.output_item.added',
        output_index: item.outputIndex,
        item: { type: 'reasoning', id: item.itemId, summary: [], content: [] },
      });
    } else {
      this.emit({
        type: 'response.output_item.added',
        output_index: item.outputIndex,
        item: { type: 'message', id: item.itemId, role: 'assistant', status: 'in_progress', content: [] },
      });
      this.emit({
        type: 'response.content_part.added',
        item_id: item.itemId,
        output_index: item.outputIndex,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
    }
    return item;
  }

  private emitTextDelta(item: TextItemState, delta: string): void {
    const type = item.kind === 'reasoning' ? 'response.reasoning_text.delta' : 'response.output_text.delta';
    this.emit({ type, item_id: item.itemId, output_index: item.outputIndex, content_index: 0, delta });
  }

  /** The next item opens: the active text item stops receiving text and closes. */
  private retireActiveTextItem(): void {
    const active = this.activeTextItem;
    this.activeTextItem = null;
    if (!active) return;
    this.closeTextItem(active);
  }

  private closeTextItem(item: TextItemState): void {
    if (item.closed) return;
    item.closed = true;
    if (this.activeTextItem === item) this.activeTextItem = null;
    const text = item.parts.join('');
    item.parts = [text];
    if (item.kind === 'reasoning') {
      const doneItem: ResponsesReasoningItem = {
        type: 'reasoning',
        id: item.itemId,
        summary: [],
        content: [{ type: 'reasoning_text', text }],
      };
      item.doneItem = doneItem;
      this.emit({ type: 'response.reasoning_text.done', item_id: item.itemId, output_index: item.outputIndex, content_index: 0, text });
      this.emit({ type: 'response.output_item.done', output_index: item.outputIndex, item: doneItem });
      return;
    }
    if (this.readsCallMarkup) this.warnAboutCallMarkup(readTextToolCalls(text, this.options.toolMap), null, text);
    const doneItem: ResponsesMessageItem = {
      type: 'message',
      id: item.itemId,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    };
    item.doneItem = doneItem;
    this.emit({ type: 'response.output_text.done', item_id: item.itemId, output_index: item.outputIndex, content_index: 0, text });
    this.emit({
      type: 'response.content_part.done',
      item_id: item.itemId,
      output_index: item.outputIndex,
      content_index: 0,
      part: { type: 'output_text', text, annotations: [] },
    });
    this.emit({ type: 'response.output_item.done', output_index: item.outputIndex, item: doneItem });
  }

  // ---------- tool calls ----------

  private applyToolCallDelta(entry: ChatToolCallWire): void {
    const call = this.findOrCreateCall(entry);
    if (call.closed) return; // Fragments after the finish chunk cannot change a delivered call.

    const wireId = entry.id;
    if (wireId && call.wireId === null) {
      // `null` never overwrites a known id (SGLang), and a repeated id (qwen3_xml) is the same call.
      call.wireId = wireId;
      if (!this.callsByWireId.has(wireId)) this.callsByWireId.set(wireId, call);
    }

    const native = entry.type === 'custom' || (entry.custom !== null && entry.custom !== undefined);
    // The kind is fixed once `added` went out: a later entry in the other shape must not turn an
    // announced function_call into a custom_tool_call at `done` (found by the fuzz suite).
    if (native && !call.opened) call.native = true;
    const name = native ? entry.custom?.name : entry.function?.name;
    // The name is taken from the first non-empty value; later nulls (SGLang) are ignored.
    if (name && call.wireName === '') call.wireName = name;

    const fragment = native ? (entry.custom?.input ?? '') : readChatToolCallArguments(entry.function?.arguments);
    this.outputChars += fragment.length;

    if (!call.opened) {
      call.argumentsText += fragment;
      // The custom/function decision and the namespace need the name, so `added` waits for it.
      if (call.wireName !== '') this.openCall(call);
      return;
    }
    if (fragment !== '') {
      call.argumentsText += fragment;
      this.emitCallDelta(call, fragment);
    }
  }

  private findOrCreateCall(entry: ChatToolCallWire): ToolCallState {
    const index = entry.index;
    if (typeof index === 'number') {
      const known = this.callsByIndex.get(index);
      if (known) return known;
      const call = this.createCallState();
      this.callsByIndex.set(index, call);
      return call;
    }
    // No index: fall back to the id, then to the call that is currently streaming.
    if (entry.id) {
      const known = this.callsByWireId.get(entry.id);
      if (known) return known;
      return this.createCallState();
    }
    return this.lastCall ?? this.createCallState();
  }

  private createCallState(): ToolCallState {
    const call: ToolCallState = {
      kind: 'tool_call',
      outputIndex: -1,
      itemId: '',
      native: false,
      wireId: null,
      wireName: '',
      argumentsText: '',
      callId: '',
      itemType: 'function_call',
      decoder: null,
      opened: false,
      closed: false,
      truncated: false,
      doneItem: null,
      recovered: false,
    };
    this.calls.push(call);
    this.lastCall = call;
    return call;
  }

  private openCall(call: ToolCallState): void {
    // The engine parsed a call itself: text before it is a message, whatever markup it carries.
    if (!call.recovered) {
      this.engineSentCalls = true;
      this.releaseHeldCallText();
    }
    this.retireActiveTextItem();
    this.heldWhitespace = { reasoning: '', message: '' };

    const deduplicated = this.deduplicateCallId(call.wireId || this.createCallId());
    this.addWarning(deduplicated.warning);
    call.callId = deduplicated.callId;

    const entry = this.options.toolMap.get(call.wireName);
    const isCustom = call.native || entry?.kind === 'custom';
    call.itemType = isCustom ? 'custom_tool_call' : 'function_call';
    call.itemId = this.createItemId(isCustom ? 'ctc' : 'fc');
    call.outputIndex = this.items.length;
    call.opened = true;
    this.items.push(call);

    const name = entry?.name ?? call.wireName;
    const namespace = entry?.namespace ?? null;
    let item: ResponsesFunctionCallItem | ResponsesCustomToolCallItem;
    if (isCustom) {
      item = { type: 'custom_tool_call', id: call.itemId, call_id: call.callId, name, input: '', status: 'in_progress' };
      // Bridged calls stream JSON arguments that need decoding; native ones stream the input itself.
      if (!call.native) call.decoder = new InputStringDecoder();
    } else {
      item = { type: 'function_call', id: call.itemId, call_id: call.callId, name, arguments: '', status: 'in_progress' };
    }
    if (namespace !== null) item.namespace = namespace;
    this.emit({ type: 'response.output_item.added', output_index: call.outputIndex, item });

    if (call.argumentsText !== '') this.emitCallDelta(call, call.argumentsText);
  }

  private emitCallDelta(call: ToolCallState, fragment: string): void {
    if (call.itemType === 'function_call') {
      this.emit({ type: 'response.function_call_arguments.delta', item_id: call.itemId, output_index: call.outputIndex, delta: fragment });
      return;
    }
    const delta = call.decoder ? call.decoder.push(fragment) : fragment;
    if (delta === '') return;
    this.emit({
      type: 'response.custom_tool_call_input.delta',
      item_id: call.itemId,
      call_id: call.callId,
      output_index: call.outputIndex,
      delta,
    });
  }

  private closeCall(call: ToolCallState): void {
    if (call.closed) return;
    call.closed = true;
    const finishReason = this.finishReason;

    if (call.native) {
      // A native input cannot be checked for completeness; when the engine stopped for length, the
      // last item is the one that was cut, and partial code must never reach `exec`.
      if (finishReason === 'length' && call.outputIndex === this.items.length - 1) {
        call.truncated = true;
        this.addWarning(
          createWarning('truncated', 'the backend stopped for length while streaming this call; it was not delivered', {
            tool: call.wireName,
            callId: call.callId,
            raw: call.argumentsText,
          }),
        );
        return;
      }
      const item = liftNativeCustomToolCall({
        name: call.wireName,
        input: call.argumentsText,
        callId: call.callId,
        toolMap: this.options.toolMap,
        itemId: call.itemId,
      });
      this.emitCallDone(call, item);
      return;
    }

    const lifted = liftToolCall({
      wireName: call.wireName,
      argumentsText: call.argumentsText,
      callId: call.callId,
      finishReason,
      toolMap: this.options.toolMap,
      itemId: call.itemId,
      grammarRepair: this.options.grammarRepair ?? false,
      grammarCache: this.grammarCache,
    });
    for (const warning of lifted.warnings) this.addWarning(warning);
    if (lifted.item === null) {
      // Truncated: no done events. Codex executes only `output_item.done`, so the `added` it saw is inert.
      call.truncated = true;
      return;
    }
    this.emitCallDone(call, lifted.item, lifted.grammarRepaired ?? false);
  }

  /**
   * `repaired`: the input was changed to match its grammar after its deltas went out; the
   * `grammar_repaired` warning already says so, and the done event carries the repaired input.
   */
  private emitCallDone(call: ToolCallState, item: ResponsesFunctionCallItem | ResponsesCustomToolCallItem, repaired = false): void {
    call.doneItem = item;
    switch (item.type) {
      case 'function_call':
        this.emit({
          type: 'response.function_call_arguments.done',
          item_id: call.itemId,
          output_index: call.outputIndex,
          arguments: item.arguments,
        });
        break;
      case 'custom_tool_call': {
        const sent = call.decoder ? call.decoder.decoded : call.argumentsText;
        if (!repaired && !item.input.startsWith(sent)) {
          // Malformed arguments can decode to something the lift rules then replace: the done value wins.
          this.addWarning(
            createWarning('input_delta_mismatch', 'the streamed input deltas are not a prefix of the delivered input; the done event carries the delivered input', {
              tool: item.name,
              callId: item.call_id,
              raw: call.argumentsText,
            }),
          );
        }
        this.emit({
          type: 'response.custom_tool_call_input.done',
          item_id: call.itemId,
          call_id: item.call_id,
          output_index: call.outputIndex,
          input: item.input,
        });
        break;
      }
      default: {
        const exhaustive: never = item;
        throw new Error(`unexpected call item ${JSON.stringify(exhaustive)}`);
      }
    }
    this.emit({ type: 'response.output_item.done', output_index: call.outputIndex, item });
  }

  // ---------- finishing ----------

  private handleFinishReason(reason: string): void {
    this.finishReason = reason;
    const mapping = mapChatFinishReason(reason);
    this.finishMapping = mapping;
    if (mapping.unusual) {
      this.addWarning(createWarning('finish_reason_unusual', `the backend finished with reason "${reason}"; the response is ${mapping.status}`));
    }
    // A failed finish (abort, error) delivers nothing more; finish() sends response.failed.
    if (mapping.status === 'failed') return;
    if (this.findNamelessCall() !== null) {
      this.emitNamelessCallFailure();
      return;
    }
    this.closeOpenItems();
  }

  /**
   * A call whose name never arrived cannot be lifted: Codex silently drops an item without a name, and
   * guessing a tool would run the wrong one. With arguments the model meant to call something, so the
   * response fails (Codex retries; the panel shows the arguments). Found by the stream fuzz suite:
   * it used to be delivered as a `function_call` named "".
   */
  private findNamelessCall(): ToolCallState | null {
    return this.calls.find((call) => !call.opened && call.argumentsText !== '') ?? null;
  }

  private emitNamelessCallFailure(): void {
    const call = this.findNamelessCall();
    const raw = call ? call.argumentsText : '';
    const shown = raw.length > 200 ? `${raw.slice(0, 200)}…` : raw;
    this.emitFailed('server_error', `backend sent a tool call without a function name (arguments: ${JSON.stringify(shown)}); it cannot be delivered`);
  }

  /**
   * At the finish, text still held is nothing but call markup or a message: the calls are opened here
   * (and close with the others, through the same lift and checks as an engine's calls), or the text
   * streams as the message it is. Think blocks around the calls become a reasoning item.
   */
  private settleHeldCallText(): void {
    if (this.heldCallText === null) return;
    const held = this.heldCallText.text;
    const reading = readTextToolCalls(held, this.options.toolMap);
    if (reading.kind !== 'calls' || this.engineSentCalls) {
      this.releaseHeldCallText();
      return;
    }
    this.heldCallText = null;
    if (reading.reasoning !== '') {
      this.streamText('reasoning', reading.reasoning);
      this.retireActiveTextItem();
    }
    for (const text of reading.calls) {
      const call = this.createCallState();
      call.recovered = true;
      call.wireName = text.wireName;
      call.argumentsText = text.argumentsText;
      this.openCall(call);
      this.warnAboutCallMarkup(reading, call, held);
    }
  }

  /** The tool_call_as_text warning: the family, the tool, what was delivered and the engine's fix. */
  private warnAboutCallMarkup(reading: TextToolCallReading, call: ToolCallState | null, text = ''): void {
    // Markup matters only where a call could have been meant: the request offered tools.
    if (reading.kind === 'none' || this.options.toolMap.size === 0) return;
    const family = TEXT_TOOL_CALL_FAMILY_NAMES[reading.family];
    const fix = `fix the engine so it parses the calls itself: ${adviseTextToolCallFix(reading.family)}`;
    if (call !== null) {
      const tool = this.options.toolMap.get(call.wireName)?.name ?? call.wireName;
      this.addWarning(
        createWarning('tool_call_as_text', `the engine left a ${family} call of ${tool} in the assistant text instead of tool_calls; the bridge read it and delivered it as a ${call.itemType}; ${fix}`, {
          tool,
          callId: call.callId,
          raw: text,
        }),
      );
      return;
    }
    const tool = reading.kind === 'markup' ? reading.tool : (reading.calls[0]?.wireName ?? null);
    const named = tool === null ? null : (this.options.toolMap.get(tool)?.name ?? tool);
    const why =
      reading.kind === 'markup'
        ? `it was not read as a call because ${reading.reason}`
        : !this.recoverTextToolCalls
          ? 'it was not read as a call because recovering text calls is off (freeformBridge.recoverTextToolCalls, serve --no-recover-text-calls)'
          : this.engineSentCalls
            ? 'it was not read as a call because the engine also sent tool_calls in the same answer'
            : 'it was not read as a call because its beginning did not look like one, so it had already streamed as a message';
    this.addWarning(
      createWarning(
        'tool_call_as_text',
        `the engine left a ${family} call${named === null ? '' : ` of ${named}`} in the assistant text instead of tool_calls; delivered as a message, nothing ran (${why}); ${fix}`,
        { tool: named, raw: text },
      ),
    );
  }

  /** At the finish chunk every open item closes in `output_index` order. */
  private closeOpenItems(): void {
    this.settleHeldCallText();
    // Calls that never got a name are not announced: those with arguments failed the response already
    // (findNamelessCall); those without carried nothing at all (an empty `{}` entry).
    this.activeTextItem = null;
    this.heldWhitespace = { reasoning: '', message: '' };
    for (const item of this.items) {
      if (item.kind === 'tool_call') this.closeCall(item);
      else this.closeTextItem(item);
    }
  }

}

function pickFirstChoice(chunk: ChatCompletionChunk): NonNullable<ChatCompletionChunk['choices']>[number] | null {
  const choices = chunk.choices;
  if (!choices || choices.length === 0) return null;
  // Only choices[0] is used; engines that number choices put it at index 0.
  return choices.find((choice) => (choice.index ?? 0) === 0) ?? null;
}
