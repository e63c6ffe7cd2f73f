/**
 * Non-streaming `chat.completion` bodies per engine, field order and nulls included (vLLM,
 * SGLang, Ollama, llama.cpp, LM Studio).
 */
import { createLlamacppTimings, createLlamacppUsage } from './render-stream.ts';
import type { PreparedTurn, ResponseContext } from './prepare-turn.ts';

type JsonObject = Record<string, unknown>;

function joinText(turn: PreparedTurn): string {
  return turn.textPieces.join('');
}

function joinReasoning(turn: PreparedTurn): string | null {
  return turn.reasoningPieces.length === 0 ? null : turn.reasoningPieces.join('');
}

function renderVllmBody(context: ResponseContext, turn: PreparedTurn): JsonObject {
  const is2026 = context.vllmEra === '2026';
  const fallback = turn.hermesFallbackContent;
  const calls = fallback === null ? turn.calls : [];
  const content = fallback ?? (calls.length > 0 ? turn.contentWithCalls : joinText(turn));
  const reasoning = joinReasoning(turn);
  const reasoningFields: JsonObject =
    context.reasoningKey === 'both'
      ? { reasoning, reasoning_content: reasoning }
      : { [context.reasoningKey]: reasoning };
  return {
    id: context.completionId,
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          // `[]`, not absent, when there are no calls.
          tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
          ...reasoningFields,
        },
        logprobs: null,
        // An unparseable hermes call comes back as plain text, so the engine's own reason stands.
        finish_reason: fallback === null ? turn.finishReason : 'stop',
        stop_reason: null,
        token_ids: null,
      },
    ],
    service_tier: null,
    system_fingerprint: context.systemFingerprint,
    usage: {
      prompt_tokens: turn.usage.prompt_tokens,
      total_tokens: turn.usage.prompt_tokens + turn.usage.completion_tokens,
      completion_tokens: turn.usage.completion_tokens,
      prompt_tokens_details: null,
    },
    prompt_logprobs: null,
    prompt_token_ids: null,
    ...(is2026 ? { prompt_text: null } : {}),
    kv_transfer_params: null,
  };
}

function renderSglangBody(context: ResponseContext, turn: PreparedTurn): JsonObject {
  const hasCalls = turn.calls.length > 0;
  return {
    id: context.completionId,
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          // Never null on SGLang: "" when empty.
          content: hasCalls ? (turn.contentWithCalls ?? '') : joinText(turn),
          reasoning_content: joinReasoning(turn),
          tool_calls: hasCalls
            ? turn.calls.map((call) => ({ id: call.id, index: call.index, type: 'function', function: { name: call.name, arguments: call.arguments } }))
            : null,
        },
        logprobs: null,
        finish_reason: turn.finishReason,
        matched_stop: null,
      },
    ],
    usage: {
      prompt_tokens: turn.usage.prompt_tokens,
      total_tokens: turn.usage.prompt_tokens + turn.usage.completion_tokens,
      completion_tokens: turn.usage.completion_tokens,
      prompt_tokens_details: null,
      reasoning_tokens: turn.reasoningPieces.length,
    },
    metadata: { weight_version: 'default' },
  };
}

function renderOllamaBody(context: ResponseContext, turn: PreparedTurn): JsonObject {
  const reasoning = joinReasoning(turn);
  const message: JsonObject = { role: 'assistant', content: turn.calls.length > 0 ? (turn.contentWithCalls ?? '') : joinText(turn) };
  // Go `omitempty`: reasoning and tool_calls vanish when empty.
  if (reasoning !== null) message.reasoning = reasoning;
  if (turn.calls.length > 0) {
    message.tool_calls = turn.calls.map((call) => ({
      id: call.id,
      index: call.index,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: context.completionId,
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    system_fingerprint: 'fp_ollama',
    choices: [{ index: 0, message, finish_reason: turn.finishReason }],
    usage: {
      prompt_tokens: turn.usage.prompt_tokens,
      completion_tokens: turn.usage.completion_tokens,
      total_tokens: turn.usage.prompt_tokens + turn.usage.completion_tokens,
    },
  };
}

/** llama-server's `to_json_oaicompat_chat` field order; `content: ""` next to tool calls. */
function renderLlamacppBody(context: ResponseContext, turn: PreparedTurn): JsonObject {
  const reasoning = joinReasoning(turn);
  const message: JsonObject = { role: 'assistant' };
  if (reasoning !== null) message.reasoning_content = reasoning;
  message.content = turn.calls.length > 0 ? turn.contentWithCalls : joinText(turn);
  if (turn.calls.length > 0) {
    message.tool_calls = turn.calls.map((call) => ({ type: 'function', function: { name: call.name, arguments: call.arguments }, id: call.id }));
  }
  return {
    choices: [{ finish_reason: turn.finishReason, index: 0, message }],
    created: context.created,
    model: context.model,
    system_fingerprint: context.systemFingerprint,
    object: 'chat.completion',
    usage: createLlamacppUsage(turn),
    id: context.completionId,
    timings: createLlamacppTimings(turn.usage.prompt_tokens, turn.usage.completion_tokens),
  };
}

/** [inf] LM Studio is closed source: an OpenAI-shaped body. */
function renderLmstudioBody(context: ResponseContext, turn: PreparedTurn): JsonObject {
  const reasoning = joinReasoning(turn);
  const message: JsonObject = { role: 'assistant', content: turn.calls.length > 0 ? turn.contentWithCalls : joinText(turn) };
  if (reasoning !== null) message[context.reasoningKey === 'reasoning' ? 'reasoning' : 'reasoning_content'] = reasoning;
  message.tool_calls = turn.calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  return {
    id: context.completionId,
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: [{ index: 0, logprobs: null, finish_reason: turn.finishReason, message }],
    usage: {
      prompt_tokens: turn.usage.prompt_tokens,
      completion_tokens: turn.usage.completion_tokens,
      total_tokens: turn.usage.prompt_tokens + turn.usage.completion_tokens,
    },
    stats: {},
    system_fingerprint: context.model,
  };
}

export function renderChatBody(context: ResponseContext, turn: PreparedTurn): JsonObject {
  const family = context.traits.family;
  switch (family) {
    case 'vllm':
      return renderVllmBody(context, turn);
    case 'sglang':
      return renderSglangBody(context, turn);
    case 'ollama':
      return renderOllamaBody(context, turn);
    case 'llamacpp':
      return renderLlamacppBody(context, turn);
    case 'lmstudio':
      return renderLmstudioBody(context, turn);
    default: {
      const unreachable: never = family;
      throw new Error(`unknown engine family ${String(unreachable)}`);
    }
  }
}
