import type { ChatRequest } from '../chat/chat-completions-api.ts';
import type { ToolSummary } from '../lower/tool-summary.ts';
import type { ResponsesOutputItem, ResponsesUsage } from '../responses/responses-output.ts';
import type { ChatRequestParts } from '../outbound/chat-request-parts.ts';
import type { RoundTripLabel } from './round-trip-label.ts';
import type { BridgeWarning } from '../warnings.ts';

/**
 * Live traffic, one exchange per Codex request. The server emits these to an
 * injected listener (the panel) and appends the finished exchange to the log file.
 */
export interface ExchangeTimings {
  /** Milliseconds since the exchange started. */
  upstreamHeadersMs: number | null;
  firstDeltaMs: number | null;
  totalMs: number | null;
}

export type ExchangeOutcome = 'completed' | 'incomplete' | 'failed' | 'rejected' | 'aborted';

/**
 * The key of a start event's request as the JSON text of its parts, when the bridge serialised it that
 * way (the extension's bridge, in a worker thread): the exchange sent exactly these bytes upstream,
 * so encoding them for the panel costs no second serialisation. A symbol key, not enumerable: no
 * copy, clone or JSON text of the event carries it, so every consumer sees the one form below.
 */
export const SENT_REQUEST_PARTS: unique symbol = Symbol('the lowered request as the JSON text of its parts, as sent');

export interface ExchangeStartEvent {
  type: 'exchange-start';
  exchangeId: string;
  startedAt: string;
  model: string;
  upstreamModel: string;
  clientStream: boolean;
  promptCacheKey: string | null;
  /** Tools by kind and what lowering did with each (lowered, bridged, dropped and why). */
  tools: readonly ToolSummary[];
  toolChoice: { original: unknown; sent: unknown };
  inputItems: number;
  /** Size of Codex's request body as received (decoded when it came compressed). */
  requestBytes: number;
  loweredRequest: ChatRequest;
  /** Set when the bridge serialised the request by parts; never copied with the event (SENT_REQUEST_PARTS). */
  readonly [SENT_REQUEST_PARTS]?: ChatRequestParts;
  /** What the round trip is for Codex (turn, compaction, a sub-agent's), from `x-codex-turn-metadata`. */
  roundTrip: RoundTripLabel;
}

export interface ExchangeDeltaEvent {
  type: 'exchange-delta';
  exchangeId: string;
  /** Items as delivered to Codex (output_item.done). */
  items: ResponsesOutputItem[];
  warnings: BridgeWarning[];
}

export interface ExchangeEndEvent {
  type: 'exchange-end';
  exchangeId: string;
  /** The same label as the start event, so a consumer of ends alone (the log line) can name the round trip. */
  roundTrip: RoundTripLabel;
  outcome: ExchangeOutcome;
  httpStatus: number;
  timings: ExchangeTimings;
  usage: ResponsesUsage | null;
  output: ResponsesOutputItem[];
  warnings: BridgeWarning[];
  error: { code: string; message: string } | null;
}

/** A request refused before lowering finished (bad JSON, collision, auth …). */
export interface ExchangeRejectedEvent {
  type: 'exchange-rejected';
  exchangeId: string;
  startedAt: string;
  /** What the refused request was for Codex; absent when it was refused before its body was read (security checks). */
  roundTrip?: RoundTripLabel;
  httpStatus: number;
  error: { code: string | null; message: string };
  /** Set on a report of repeated refusals: it stands for this many refusals of the same cause since the first was reported (refusal-coalescer.ts). */
  repeated?: number;
}

export type TrafficEvent = ExchangeStartEvent | ExchangeDeltaEvent | ExchangeEndEvent | ExchangeRejectedEvent;

export type TrafficListener = (event: TrafficEvent) => void;
