import type { ChatUsage } from '../chat/chat-completions-api.ts';
import type { ResponsesUsage } from '../responses/responses-output.ts';

/**
 * Chat `usage` → Responses `usage`. Codex declares the two detail counts as
 * integers, so every field is a non-negative integer and never null (vLLM sends
 * `prompt_tokens_details: null` by default); no usage at all gives zeros.
 */
export function mapChatUsageToResponsesUsage(usage: ChatUsage | null | undefined): ResponsesUsage {
  const inputTokens = toTokenCount(usage?.prompt_tokens);
  const outputTokens = toTokenCount(usage?.completion_tokens);
  const totalTokens = isPresent(usage?.total_tokens) ? toTokenCount(usage?.total_tokens) : inputTokens + outputTokens;
  // Engines name cache hits differently; the first one present in this list wins.
  const cachedTokens = toTokenCount(
    usage?.prompt_tokens_details?.cached_tokens ?? usage?.cached_input_tokens ?? usage?.cache_read_input_tokens,
  );
  // SGLang reports reasoning tokens at the top level instead of in completion_tokens_details.
  const reasoningTokens = toTokenCount(usage?.completion_tokens_details?.reasoning_tokens ?? usage?.reasoning_tokens);
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: cachedTokens },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: totalTokens,
  };
}

function isPresent(value: number | null | undefined): value is number {
  return value !== null && value !== undefined;
}

function toTokenCount(value: number | null | undefined): number {
  if (!isPresent(value) || !Number.isFinite(value) || value <= 0) return 0;
  return Math.min(Math.round(value), Number.MAX_SAFE_INTEGER);
}
