import { z } from 'zod';

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
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().nullish() }).nullish(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().nullish() }).nullish(),
  /** SGLang reports reasoning tokens at the top level. */
  reasoning_tokens: z.number().nullish(),
  cached_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});
export type ChatUsage = z.infer<typeof chatUsageSchema>;
export { chatUsageSchema };

const chatToolCallSchema = z.looseObject({
  id: z.string().nullish(),
  index: z.number().nullish(),
  type: z.string().nullish(),
  function: z
    .looseObject({
      name: z.string().nullish(),
      /** Engines send a string; a few send an already-parsed object, which we re-serialise at the boundary. */
      arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
    })
    .nullish(),
  /** Chat-native free-form call from backends with custom-tool support. */
  custom: z.looseObject({ name: z.string().nullish(), input: z.string().nullish() }).nullish(),
});
export type ChatToolCallWire = z.infer<typeof chatToolCallSchema>;

/** The fields a full message and a stream delta share; both are parsed with the same tolerance. */
const chatMessageFields = {
  role: z.string().nullish(),
  content: z.string().nullish(),
  reasoning: z.string().nullish(),
  reasoning_content: z.string().nullish(),
  tool_calls: z.array(chatToolCallSchema).nullish(),
};

const chatEnvelopeFields = {
  id: z.string().nullish(),
  model: z.string().nullish(),
  created: z.number().nullish(),
  usage: chatUsageSchema.nullish(),
};

const choiceFields = { index: z.number().nullish(), finish_reason: z.string().nullish() };

export const chatCompletionSchema = z.looseObject({
  ...chatEnvelopeFields,
  choices: z.array(z.looseObject({ ...choiceFields, message: z.looseObject({ ...chatMessageFields, refusal: z.string().nullish() }).nullish() })).nullish(),
});
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

export const chatCompletionChunkSchema = z.looseObject({
  ...chatEnvelopeFields,
  choices: z.array(z.looseObject({ ...choiceFields, delta: z.looseObject(chatMessageFields).nullish() })).nullish(),
  /** Mid-stream error frames: vLLM/llama.cpp nest an object, some builds send a string. */
  error: z.unknown().optional(),
  /** SGLang's flat error frame. */
  object: z.string().nullish(),
  message: z.string().nullish(),
});
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;
