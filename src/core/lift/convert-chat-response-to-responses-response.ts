import { chatCompletionSchema, type ChatToolCallWire } from '../chat/chat-completions-api.ts';
import { UpstreamStreamError } from '../errors.ts';
import { createGrammarCache, type GrammarCache } from '../grammar/grammar-cache.ts';
import { createItemId } from '../ids.ts';
import { mapChatFinishReason } from '../map-chat-finish-reason.ts';
import type { ResponsesOutputItem, ResponsesResponse } from '../responses/responses-output.ts';
import type { ToolMap } from '../tool-map.ts';
import { createWarning, type BridgeWarning } from '../warnings.ts';
import { createCallIdDeduplicator, liftNativeCustomToolCall, liftToolCall, readChatToolCallArguments } from './lift-tool-call.ts';
import { mapChatUsageToResponsesUsage } from './map-chat-usage.ts';

export interface LiftContext {
  /** The `resp_…` id Codex will see. */
  responseId: string;
  /** The model name Codex asked for (not the backend's served name). */
  model: string;
  /** Unix seconds. */
  createdAt: number;
  toolMap: ToolMap;
  /** Deliver custom inputs repaired when a repair makes them match their grammar (BridgeOptions.grammarRepair). */
  grammarRepair?: boolean;
  /** Compiled grammars; the server keeps one per process. Without it, one is made for this response. */
  grammarCache?: GrammarCache;
}

/**
 * A whole Chat completion → one Responses object (bridge-rules.md §5), for `stream: false` and for
 * backends that answer a streaming request with one JSON body. Output order: reasoning, message,
 * tool calls in engine order; only `choices[0]` counts.
 */
export function convertChatResponseToResponsesResponse(
  completion: unknown,
  context: LiftContext,
): { response: ResponsesResponse; warnings: BridgeWarning[] } {
  const parsed = chatCompletionSchema.safeParse(completion);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    throw new UpstreamStreamError(`backend returned an unreadable completion: ${issues}`);
  }
  const choice = parsed.data.choices?.[0];
  const message = choice?.message;
  const finishReason = choice?.finish_reason ?? null;
  const warnings: BridgeWarning[] = [];
  const output: ResponsesOutputItem[] = [];

  // vLLM 0.11.1–0.15 sends both fields with the same text: take one (§5.1).
  const reasoning = message?.reasoning ?? message?.reasoning_content;
  if (reasoning) {
    output.push({ type: 'reasoning', id: createItemId('rs'), summary: [], content: [{ type: 'reasoning_text', text: reasoning }] });
  }

  const toolCalls = message?.tool_calls ?? [];
  const content = message?.content;
  // Engines put "", null or "\n\n" next to tool calls (backends.md §8): that is no message.
  if (content && !(toolCalls.length > 0 && content.trim() === '')) {
    output.push({
      type: 'message',
      id: createItemId('msg'),
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: content, annotations: [] }],
    });
  }

  const deduplicateCallId = createCallIdDeduplicator();
  const grammarCache = context.grammarCache ?? createGrammarCache();
  let anyCallTruncated = false;
  for (const toolCall of toolCalls) {
    const { callId, warning } = deduplicateCallId(toolCall.id);
    if (warning) warnings.push(warning);
    const native = readNativeCustomCall(toolCall);
    if (native) {
      output.push(liftNativeCustomToolCall({ ...native, callId, toolMap: context.toolMap }));
      continue;
    }
    const lifted = liftToolCall({
      wireName: toolCall.function?.name ?? '',
      argumentsText: readChatToolCallArguments(toolCall.function?.arguments),
      callId,
      finishReason,
      toolMap: context.toolMap,
      grammarRepair: context.grammarRepair ?? false,
      grammarCache,
    });
    warnings.push(...lifted.warnings);
    if (lifted.item === null) anyCallTruncated = true;
    else output.push(lifted.item);
  }

  const mapped = mapChatFinishReason(finishReason);
  if (mapped.unusual) {
    warnings.push(
      createWarning('finish_reason_unusual', `the backend finished with ${JSON.stringify(finishReason)}; the response was delivered as ${mapped.status}`),
    );
  }

  const response: ResponsesResponse = {
    id: context.responseId,
    object: 'response',
    created_at: context.createdAt,
    model: context.model,
    status: mapped.status,
    output,
    usage: mapChatUsageToResponsesUsage(parsed.data.usage),
    incomplete_details: null,
    error: null,
  };
  const status = mapped.status;
  switch (status) {
    case 'completed':
      // A call cut off is omitted, so the turn must not look finished: Codex then reports
      // max_output_tokens instead of running partial code (§5.4).
      if (anyCallTruncated) {
        response.status = 'incomplete';
        response.incomplete_details = { reason: 'max_output_tokens' };
      }
      break;
    case 'incomplete':
      response.incomplete_details = { reason: mapped.incompleteReason ?? 'max_output_tokens' };
      break;
    case 'failed':
      response.error = { code: 'server_error', message: describeFailure(finishReason, choice === undefined) };
      break;
    default: {
      const unreachable: never = status;
      return unreachable;
    }
  }
  return { response, warnings };
}

function readNativeCustomCall(toolCall: ChatToolCallWire): { name: string; input: string } | null {
  if (!toolCall.custom || (toolCall.type !== 'custom' && toolCall.function)) return null;
  return { name: toolCall.custom.name ?? '', input: toolCall.custom.input ?? '' };
}

function describeFailure(finishReason: string | null, noChoice: boolean): string {
  if (noChoice) return 'backend returned a completion without choices';
  if (finishReason === null || finishReason === '') return 'backend returned a completion without a finish_reason';
  return `backend stopped with finish_reason ${JSON.stringify(finishReason)}`;
}
