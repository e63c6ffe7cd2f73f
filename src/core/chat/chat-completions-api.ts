import * as z from '../schema/zod.ts';

/*
 * Chat Completions wire shapes. The request is what the bridge builds (plain types, no parsing);
 * responses and stream chunks come from engines and are parsed leniently: every field nullish,
 * unknown fields kept, every engine variant the bridge supports accepted (see docs/WIRE.md).
 */

// ---------- request (outbound) ----------

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean };
}

/** Chat-native free-form tool; only for the `passthrough` strategy (OpenAI accepts it, engines do not). */
export interface ChatCustomTool {
  type: 'custom';
  custom: { name: string; description?: string; format?: Record<string, unknown> };
}

export type ChatTool = ChatFunctionTool | ChatCustomTool;

export type ChatToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; function: { name: string } }
  | { type: 'custom'; custom: { name: string } };

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'video_url'; video_url: { url: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'developer'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | {
      role: 'assistant';
      content: string | null;
      reasoning?: string;
      reasoning_content?: string;
      tool_calls?: ChatToolCall[];
    }
  | { role: 'tool'; tool_call_id: string; content: string | ChatContentPart[] };

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
  stream: boolean;
  stream_options?: { include_usage: boolean };
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  reasoning_effort?: string;
  response_format?: Record<string, unknown>;
}

// ---------- responses and chunks (inbound, lenient) ----------

const chatUsageSchema = z.looseObject({
  prompt_tokens: z.nullish(z.number()),
  completion_tokens: z.nullish(z.number()),
  total_tokens: z.nullish(z.number()),
  prompt_tokens_details: z.nullish(z.looseObject({ cached_tokens: z.nullish(z.number()) })),
  completion_tokens_details: z.nullish(z.looseObject({ reasoning_tokens: z.nullish(z.number()) })),
  /** SGLang reports reasoning tokens at the top level. */
  reasoning_tokens: z.nullish(z.number()),
  cached_input_tokens: z.nullish(z.number()),
  cache_read_input_tokens: z.nullish(z.number()),
});
export type ChatUsage = z.infer<typeof chatUsageSchema>;
export { chatUsageSchema };

const chatToolCallSchema = z.looseObject({
  id: z.nullish(z.string()),
  index: z.nullish(z.number()),
  type: z.nullish(z.string()),
  function: z.nullish(
    z.looseObject({
      name: z.nullish(z.string()),
      /** Engines send a string; a few send an already-parsed object, which we re-serialise at the boundary. */
      arguments: z.nullish(z.union([z.string(), z.record(z.string(), z.unknown())])),
    }),
  ),
  /** Chat-native free-form call from backends with custom-tool support. */
  custom: z.nullish(z.looseObject({ name: z.nullish(z.string()), input: z.nullish(z.string()) })),
});
export type ChatToolCallWire = z.infer<typeof chatToolCallSchema>;

/** The fields a full message and a stream delta share; both are parsed with the same tolerance. */
const chatMessageFields = {
  role: z.nullish(z.string()),
  content: z.nullish(z.string()),
  reasoning: z.nullish(z.string()),
  reasoning_content: z.nullish(z.string()),
  tool_calls: z.nullish(z.array(chatToolCallSchema)),
};

const chatEnvelopeFields = {
  id: z.nullish(z.string()),
  model: z.nullish(z.string()),
  created: z.nullish(z.number()),
  usage: z.nullish(chatUsageSchema),
};

const choiceFields = { index: z.nullish(z.number()), finish_reason: z.nullish(z.string()) };

/** Compiled (`z.compile`), as each answer and each streamed chunk is checked; responses/responses-request.ts says why. */
export const chatCompletionSchema = z.compile(z.looseObject({
  ...chatEnvelopeFields,
  choices: z.nullish(z.array(z.looseObject({ ...choiceFields, message: z.nullish(z.looseObject({ ...chatMessageFields, refusal: z.nullish(z.string()) })) }))),
}));
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

export const chatCompletionChunkSchema = z.compile(z.looseObject({
  ...chatEnvelopeFields,
  choices: z.nullish(z.array(z.looseObject({ ...choiceFields, delta: z.nullish(z.looseObject(chatMessageFields)) }))),
  /** Mid-stream error frames: vLLM/llama.cpp nest an object, some builds send a string. */
  error: z.optional(z.unknown()),
  /** SGLang's flat error frame. */
  object: z.nullish(z.string()),
  message: z.nullish(z.string()),
}));
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;
