import * as z from '../core/schema/zod.ts';
import type { RoundTripKind, RoundTripLabel } from '../core/traffic/round-trip-label.ts';

/** Re-exported for the webview, which may import only this protocol (and only its types). */
export type { RoundTripKind, RoundTripLabel };
import type { ExchangeOutcome } from '../core/traffic/traffic-event.ts';
import type { WarningKind } from '../core/warnings.ts';

/*
 * The live traffic panel's message protocol, imported by the extension host
 * (src/extension/traffic-panel.ts) and by the webview (media/traffic-panel.ts). No `vscode` import
 * here: the webview bundle sees this file. The webview renders model output, which is
 * attacker-controlled, so the host validates every inbound message with the zod schemas below.
 *
 * Flow: the webview posts `webview/ready`; the host answers with a complete `traffic/snapshot` and
 * then appends (`traffic/exchange/upsert`, `traffic/exchange/remove`). Large bodies stay in the
 * host and are sent only when asked for (`traffic/body/request` → `traffic/body/show`).
 *
 * The webview imports this file with `import type` only, so the zod schemas (host side) never
 * reach the browser bundle.
 */

// ---------- shared value types ----------

/** Where a round trip stands: still running, or how it ended. */
export type ExchangeStatus = 'running' | ExchangeOutcome;

/** One round trip as the list shows it; small and complete, so snapshots stay cheap. */
export interface ExchangeSummary {
  /** The exchange id (also the Responses id Codex sees). */
  id: string;
  /** Arrival order within the session; the stable sort key. */
  sequence: number;
  /** ISO time the request arrived. */
  startedAt: string;
  /** What the round trip is for Codex: a turn, a compaction, or a sub-agent's turn (with its agent name). */
  roundTrip: RoundTripLabel;
  /** Model name Codex asked for. */
  model: string;
  /** Model name sent to the backend (differs when the model setting overrides it). */
  upstreamModel: string;
  /** Codex asked for a stream (SSE) rather than one JSON body. */
  stream: boolean;
  /** Running, or the outcome once the exchange ended. */
  status: ExchangeStatus;
  /** HTTP status answered to Codex; null while running. */
  httpStatus: number | null;
  /** Whole round trip in milliseconds; null while running. */
  durationMs: number | null;
  /** Milliseconds until the first output event (time to first token); null if none came. */
  firstTokenMs: number | null;
  /** Milliseconds until the backend's response headers arrived. */
  upstreamHeadersMs: number | null;
  /** Prompt tokens the backend reported. */
  inputTokens: number | null;
  /** Completion tokens the backend reported. */
  outputTokens: number | null;
  /** Lifted `custom_tool_call` items delivered to Codex. */
  liftedCallCount: number;
  /** `function_call` items delivered to Codex. */
  functionCallCount: number;
  /** Warnings raised by lowering, lifting or the stream. */
  warningCount: number;
  /** Distinct warning kinds, for the list and the warnings filter. */
  warningKinds: WarningKind[];
  /** Tool names that appear in calls or warnings, for the tool filter. */
  toolNames: string[];
  /** How this round trip's tool calls arrived: valid as written, repaired, delivered with a warning, refused. */
  callOutcomes: { valid: number; repaired: number; warned: number; refused: number; leftAsText: number };
  /** Why the exchange failed or was rejected (message capped in length). */
  error: { code: string | null; message: string } | null;
  /** Size of Codex's request body in bytes. */
  requestBytes: number;
  /** Size of the lowered Chat request as JSON text in bytes; null for a rejected request. */
  loweredRequestBytes: number | null;
  /** The lowered request and payloads are still held by the host (false once evicted to bound memory). */
  bodyRetained: boolean;
}

/** Host-side memory accounting, shown in the panel's header. */
export interface TrafficStats {
  /** Round trips in the ring buffer. */
  exchangeCount: number;
  /** Ring buffer size (setting `freeformBridge.trafficBufferSize`). */
  capacity: number;
  /** Bytes of request bodies and payloads currently retained (UTF-16 upper bound). */
  retainedBodyBytes: number;
  /** Budget for retained bodies; the oldest are evicted beyond it. */
  maxBodyBytes: number;
  /** Round trips whose bodies were evicted (summary kept). */
  evictedBodyCount: number;
}

/** A long string cut for display; the full text stays reachable through open/copy. */
export interface TextView {
  /** The text, verbatim (possibly cut at `TEXT_VIEW_LIMIT` characters). */
  text: string;
  /** Length of the full text in UTF-16 code units. */
  totalLength: number;
  /** True when `text` is a prefix of the full text. */
  truncated: boolean;
}

/** Longest text sent to the panel inline; longer payloads are cut and offered as a document. */
export const TEXT_VIEW_LIMIT = 200_000;

/** One output item as delivered to Codex. */
export type OutputItemView =
  | {
      kind: 'custom_tool_call';
      /** Position in the exchange's output. */
      index: number;
      /** Tool name as Codex knows it. */
      name: string;
      /** Namespace of the tool, when it has one. */
      namespace: string | null;
      /** The call id Codex answers with. */
      callId: string;
      /** The lifted free-form input, verbatim. */
      input: TextView;
      /** Item status as sent. */
      status: string;
    }
  | {
      kind: 'function_call';
      /** Position in the exchange's output. */
      index: number;
      /** Tool name as Codex knows it. */
      name: string;
      /** Namespace of the tool, when it has one. */
      namespace: string | null;
      /** The call id Codex answers with. */
      callId: string;
      /** The JSON arguments text, verbatim. */
      arguments: TextView;
      /** Item status as sent. */
      status: string;
    }
  | {
      kind: 'message';
      /** Position in the exchange's output. */
      index: number;
      /** The assistant's text. */
      text: TextView;
      /** Item status as sent. */
      status: string;
    }
  | {
      kind: 'reasoning';
      /** Position in the exchange's output. */
      index: number;
      /** The reasoning text. */
      text: TextView;
    };

/** One warning with what was delivered instead. */
export interface WarningView {
  /** Position in the exchange's warnings. */
  index: number;
  /** Warning kind (`grammar_mismatch`, `truncated`, `hosted_tool_dropped` …). */
  kind: WarningKind;
  /** Tool concerned, when any. */
  tool: string | null;
  /** Call concerned, when any. */
  callId: string | null;
  /** One sentence: what happened and what was delivered instead. */
  detail: string;
  /** The raw payload (arguments text, dropped item, grammar), verbatim. */
  raw: TextView | null;
  /** Output index of the item delivered for `callId`; null when nothing was delivered for it. */
  deliveredIndex: number | null;
}

/** One declared tool and what lowering did with it. */
export interface ToolView {
  /** Tool name as Codex declared it. */
  name: string;
  /** Namespace it was declared in; such tools are flattened to `namespace__name`. */
  namespace: string | null;
  /** `function`, `custom`, or a hosted kind (`web_search` …). */
  kind: string;
  /** `tools`, or `additional_tools` for tools hoisted from an input item. */
  source: string | null;
  /** `lowered`, `bridged`, `passthrough` or `dropped`. */
  disposition: string;
  /** Name sent upstream; null when dropped. */
  wireName: string | null;
  /** Why it was dropped or changed. */
  reason: string | null;
}

/** Everything about one round trip except the lowered request body. */
export interface ExchangeDetail {
  /** The same summary the list shows. */
  summary: ExchangeSummary;
  /** Declared tools by what lowering did with them; empty for a rejected request. */
  tools: ToolView[];
  /** `tool_choice` as Codex sent it and as sent upstream (JSON text). */
  toolChoice: { original: string; sent: string; rewritten: boolean } | null;
  /** Number of Codex input items. */
  inputItems: number | null;
  /** Items delivered to Codex (lifted calls, function calls, text). */
  items: OutputItemView[];
  /** Every warning with its raw payload. */
  warnings: WarningView[];
  /** Usage as reported to Codex, as JSON text. */
  usage: string | null;
  /** The backend URL the request went to, when known. */
  backendUrl: string | null;
}

/** A body the host holds and serves on demand. */
export type BodyReference =
  | {
      kind: 'exchange';
      /** The round trip. */
      exchangeId: string;
    }
  | {
      kind: 'loweredRequest';
      /** The round trip. */
      exchangeId: string;
    }
  | {
      kind: 'item';
      /** The round trip. */
      exchangeId: string;
      /** Output index of the item. */
      index: number;
    }
  | {
      kind: 'warningRaw';
      /** The round trip. */
      exchangeId: string;
      /** Index of the warning. */
      index: number;
    };

/** A lowered tool as sent upstream, with what it was in Codex's request. */
export interface LoweredToolMark {
  /** Name sent upstream. */
  wireName: string;
  /** Tool name in Codex's request. */
  name: string;
  /** Namespace it was flattened from. */
  namespace: string | null;
  /** Kind in Codex's request (`custom` for a bridged free-form tool). */
  kind: string;
  /** What lowering did (`lowered`, `bridged`, `passthrough`). */
  disposition: string;
  /** The tool's JSON as sent, formatted. */
  json: string;
}

/** A body's content for the panel. */
export interface BodyContent {
  /** Formatted JSON (or the verbatim text), possibly cut. */
  text: TextView;
  /** For a lowered request: its tools, each marked with what it was. */
  loweredTools: LoweredToolMark[] | null;
  /** For a lowered request: `tool_choice` as Codex sent it and as rewritten (JSON text). */
  toolChoice: { original: string; sent: string; rewritten: boolean } | null;
}

// ---------- host → webview ----------

export type HostToWebviewMessage =
  | {
      type: 'traffic/snapshot';
      /** Every round trip in the ring buffer, oldest first. */
      exchanges: ExchangeSummary[];
      /** Memory accounting. */
      stats: TrafficStats;
    }
  | {
      type: 'traffic/exchange/upsert';
      /** A new or updated round trip. */
      exchange: ExchangeSummary;
      /** Memory accounting after the change. */
      stats: TrafficStats;
    }
  | {
      type: 'traffic/exchange/remove';
      /** Round trips that left the ring buffer. */
      exchangeIds: string[];
      /** Memory accounting after the change. */
      stats: TrafficStats;
    }
  | {
      type: 'traffic/exchange/detail';
      /** The round trip asked for. */
      exchangeId: string;
      /** Its detail; null when it is no longer in the buffer. */
      detail: ExchangeDetail | null;
    }
  | {
      type: 'traffic/body/show';
      /** The body asked for. */
      body: BodyReference;
      /** Its content; null when evicted or unknown. */
      content: BodyContent | null;
    }
  | {
      type: 'traffic/search/result';
      /** The query this answers (the panel ignores stale answers). */
      query: string;
      /** Round trips whose payloads contain the query. */
      exchangeIds: string[];
    }
  | {
      type: 'traffic/notice/show';
      /** `error` for a failed action. */
      level: 'info' | 'error';
      /** Short text for the status line. */
      message: string;
    };

/**
 * Fields whose values are identifiers, enum values or the webview's own query, never payload text:
 * the host's last redaction pass before posting leaves them alone, so a short secret cannot garble
 * what the two sides switch on or match.
 */
export const WEBVIEW_IDENTIFIER_FIELDS: ReadonlySet<string> = new Set(['type', 'kind', 'status', 'level', 'disposition', 'id', 'exchangeId', 'exchangeIds', 'warningKinds', 'query']);

// ---------- webview → host ----------

export type WebviewToHostMessage =
  | {
      /** The script runs and listens: answer with a snapshot. */
      type: 'webview/ready';
    }
  | {
      type: 'traffic/exchange/select';
      /** The round trip opened; null closes the detail. */
      exchangeId: string | null;
    }
  | {
      type: 'traffic/body/request';
      /** Send this body to the panel. */
      body: BodyReference;
    }
  | {
      type: 'traffic/body/open';
      /** Open this body as a JSON document in an editor. */
      body: BodyReference;
    }
  | {
      type: 'traffic/body/copy';
      /** Copy this body to the clipboard (verbatim text for inputs and raw payloads). */
      body: BodyReference;
    }
  | {
      type: 'traffic/curl/copy';
      /** Copy the lowered request of this round trip as a curl command, secrets redacted. */
      exchangeId: string;
    }
  | {
      type: 'traffic/search/run';
      /** Text to find in payloads (case-insensitive); empty clears the search. */
      query: string;
    }
  | {
      /** Forget every round trip. */
      type: 'traffic/session/clear';
    }
  | {
      /** Save the session as JSON Lines through a save dialog. */
      type: 'traffic/session/export';
    };

export type WebviewToHostMessageType = WebviewToHostMessage['type'];

// ---------- validation of inbound webview messages (host side) ----------

const exchangeIdSchema = z.string().check(z.minLength(1), z.maxLength(200));
const indexSchema = z.number().check(z.int(), z.nonnegative(), z.lte(1_000_000));

export const bodyReferenceSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('exchange'), exchangeId: exchangeIdSchema }),
  z.strictObject({ kind: z.literal('loweredRequest'), exchangeId: exchangeIdSchema }),
  z.strictObject({ kind: z.literal('item'), exchangeId: exchangeIdSchema, index: indexSchema }),
  z.strictObject({ kind: z.literal('warningRaw'), exchangeId: exchangeIdSchema, index: indexSchema }),
]);

/** Strict: a message with unknown fields or types is dropped, never half-understood. */
export const webviewToHostMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('webview/ready') }),
  z.strictObject({ type: z.literal('traffic/exchange/select'), exchangeId: z.nullable(exchangeIdSchema) }),
  z.strictObject({ type: z.literal('traffic/body/request'), body: bodyReferenceSchema }),
  z.strictObject({ type: z.literal('traffic/body/open'), body: bodyReferenceSchema }),
  z.strictObject({ type: z.literal('traffic/body/copy'), body: bodyReferenceSchema }),
  z.strictObject({ type: z.literal('traffic/curl/copy'), exchangeId: exchangeIdSchema }),
  z.strictObject({ type: z.literal('traffic/search/run'), query: z.string().check(z.maxLength(1000)) }),
  z.strictObject({ type: z.literal('traffic/session/clear') }),
  z.strictObject({ type: z.literal('traffic/session/export') }),
]);

// The schema and the hand-written union (which carries the JSDoc) must describe the same messages.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const schemaMatchesUnion: Equal<z.infer<typeof webviewToHostMessageSchema>, WebviewToHostMessage> = true;
const referenceSchemaMatches: Equal<z.infer<typeof bodyReferenceSchema>, BodyReference> = true;
void schemaMatchesUnion;
void referenceSchemaMatches;

/** Validates a message from the webview; null for anything that is not exactly a known message. */
export function parseWebviewToHostMessage(value: unknown): WebviewToHostMessage | null {
  const parsed = webviewToHostMessageSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}
