import type { BridgeOptions } from '../bridge-options.ts';
import type { ChatRequest } from '../chat/chat-completions-api.ts';
import { UnsupportedFeatureError } from '../errors.ts';
import { createGrammarCache, type GrammarCache } from '../grammar/grammar-cache.ts';
import { renderGrammarExample } from '../grammar/render-grammar-example.ts';
import { parseResponsesRequest } from '../responses/responses-request.ts';
import type { ToolMap } from '../tool-map.ts';
import type { BridgeWarning, WarningLedger } from '../warnings.ts';
import { applyConfigurationUpdates } from './apply-configuration-updates.ts';
import { convertInputItems } from './convert-input-items.ts';
import { convertRequestFields } from './convert-request-fields.ts';
import { hoistAdditionalTools, type IndexedInputItem } from './hoist-additional-tools.ts';
import { collectChatTools, createToolMap, lowerTools, type LoweredToolRecord, type ToolDeclaration } from './lower-tools.ts';
import type { ToolSummary } from './tool-summary.ts';
import { createPendingWarning, resolvePendingWarnings } from './pending-warning.ts';
import { rewriteToolChoice } from './rewrite-tool-choice.ts';

/** What the traffic panel shows about one request before the backend answers. */
export interface RequestSummary {
  /** The model Codex asked for. */
  model: string;
  /** The model sent upstream (`modelOverride` wins). */
  upstreamModel: string;
  inputItems: number;
  /** Codex's thread id: stable across the requests of one session. */
  promptCacheKey: string | null;
  tools: ToolSummary[];
  toolChoice: { original: unknown; sent: unknown };
}

export interface LoweredRequest {
  /** Always `stream: true` with `stream_options.include_usage`, whatever Codex asked for. */
  chatRequest: ChatRequest;
  /** Wire name → tool, for lifting the backend's calls back. */
  toolMap: ToolMap;
  warnings: BridgeWarning[];
  summary: RequestSummary;
  /** What Codex asked for (`stream`, default true): SSE or one JSON body. */
  clientStream: boolean;
}

function listInputItems(input: ReturnType<typeof parseResponsesRequest>['input']): IndexedInputItem[] {
  // A string input is one user message (the Responses API's shorthand).
  if (!Array.isArray(input)) return [{ item: { type: 'message', role: 'user', content: input }, index: 0 }];
  return input.map((item, index) => ({ item, index }));
}

/**
 * Input warnings that would repeat on every later request of a session (the history replays the
 * same item), and whose outcome never varies: shown once per process.
 */
const ONCE_PER_PROCESS_INPUT_WARNINGS: ReadonlySet<BridgeWarning['kind']> = new Set(['image_detail_changed']);

function deselect(record: LoweredToolRecord): LoweredToolRecord {
  return { ...record, disposition: 'dropped', wireName: null, reason: 'not selected by tool_choice', chatTool: null, mapEntry: null };
}

export interface LoweringContext {
  /** Compiled grammars, shared per process so examples are not recompiled on every request. */
  grammarCache?: GrammarCache;
}

/**
 * Lowers a Codex Responses request into a Chat Completions request for a function-only backend.
 * Pure: the only state is the caller's: its once-per-process warning ledger and the grammar cache of
 * the context, which changes how fast, never what, it lowers.
 *
 * Throws `InvalidRequestError` (400: malformed body, tool-name collision, `required` without tools,
 * `defer_loading: true`, empty image URL, rejected tool-output images) or `UnsupportedFeatureError`
 * (`item_reference`, `previous_response_id`, `background: true`).
 */
export function convertResponsesRequestToChatRequest(
  body: unknown,
  options: BridgeOptions,
  ledger: WarningLedger,
  context: LoweringContext = {},
): LoweredRequest {
  const request = parseResponsesRequest(body);
  if (request.previous_response_id) {
    throw new UnsupportedFeatureError(
      'previous_response_id is not supported: the bridge keeps no response store, so send the full history (store: false)',
      'previous_response_id',
    );
  }
  if (request.background === true) {
    throw new UnsupportedFeatureError('background: true is not supported: the bridge answers every request in the foreground', 'background');
  }

  const inputItems = listInputItems(request.input);
  const hoisted = hoistAdditionalTools(inputItems).value;
  const declarations: ToolDeclaration[] = [
    ...(request.tools ?? []).map((tool, index): ToolDeclaration => ({ tool, source: 'tools', path: `tools[${index}]` })),
    ...hoisted.declarations,
  ];
  const grammarCache = context.grammarCache ?? (options.grammarExamples ? createGrammarCache({ maxEntries: 4 }) : null);
  const renderExample = options.grammarExamples && grammarCache ? (name: string, grammar: { syntax: string; definition: string }) => renderGrammarExample(name, grammar, grammarCache) : null;
  const loweredTools = lowerTools(declarations, options, renderExample);
  const toolChoice = rewriteToolChoice(request.tool_choice, loweredTools.value, {
    clientDeclaredTools: declarations.length > 0,
    options,
  });
  const messages = convertInputItems(hoisted.items, request.instructions, options);
  const configuration = applyConfigurationUpdates(hoisted.items, request.reasoning?.effort ?? null, request.prompt_cache_key ?? null);
  const fields = convertRequestFields(request, options, configuration.reasoningEffort);

  const selected = toolChoice.value.selectedWireNames;
  const isDeselected = (record: LoweredToolRecord): boolean => record.chatTool !== null && record.wireName !== null && !selected.has(record.wireName);
  const records = loweredTools.value.map((record) => (isDeselected(record) ? deselect(record) : record));
  const chatTools = collectChatTools(records);
  const toolMap = createToolMap(records);

  const upstreamModel = options.modelOverride || request.model;
  // vLLM rejects `"tools": []` and any tool_choice without tools, and parallel_tool_calls only
  // means something with tools: all three go together or not at all.
  const toolFields: Pick<ChatRequest, 'tools' | 'tool_choice' | 'parallel_tool_calls'> = {};
  if (chatTools.length > 0) {
    toolFields.tools = chatTools;
    if (toolChoice.value.toolChoice !== undefined) toolFields.tool_choice = toolChoice.value.toolChoice;
    if (typeof request.parallel_tool_calls === 'boolean') toolFields.parallel_tool_calls = request.parallel_tool_calls;
  }
  const chatRequest: ChatRequest = {
    model: upstreamModel,
    messages: messages.value,
    ...toolFields,
    stream: true,
    stream_options: { include_usage: true },
    ...fields.value,
  };

  const warnings = resolvePendingWarnings(
    [
      ...loweredTools.warnings,
      ...toolChoice.warnings.map((warning) => createPendingWarning(warning)),
      ...messages.warnings.map((warning) => createPendingWarning(warning, ONCE_PER_PROCESS_INPUT_WARNINGS.has(warning.kind) ? { key: warning.kind, fingerprint: '' } : null)),
      ...configuration.warnings,
      ...fields.warnings,
    ],
    ledger,
  );

  return {
    chatRequest,
    toolMap,
    warnings,
    summary: {
      model: request.model,
      upstreamModel,
      inputItems: inputItems.length,
      promptCacheKey: request.prompt_cache_key ?? null,
      tools: records.map(({ name, namespace, kind, source, disposition, wireName, reason }) => ({
        name,
        namespace,
        kind,
        source,
        disposition,
        wireName,
        reason,
      })),
      toolChoice: { original: request.tool_choice ?? null, sent: chatRequest.tool_choice ?? null },
    },
    // As in the Responses API: a request that does not ask for a stream gets one JSON response.
    clientStream: request.stream === true,
  };
}
