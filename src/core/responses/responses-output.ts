/*
 * Responses API output shapes the bridge emits toward Codex. Plain types: we
 * build these, we never parse them. Field names keep the wire spelling.
 */

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponsesMessageItem {
  type: 'message';
  id: string;
  role: 'assistant';
  status: 'in_progress' | 'completed' | 'incomplete';
  content: Array<{ type: 'output_text'; text: string; annotations: unknown[] }>;
}

export interface ResponsesReasoningItem {
  type: 'reasoning';
  id: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  content: Array<{ type: 'reasoning_text'; text: string }>;
  status?: 'in_progress' | 'completed';
}

export interface ResponsesFunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  namespace?: string;
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

export interface ResponsesCustomToolCallItem {
  type: 'custom_tool_call';
  id: string;
  call_id: string;
  name: string;
  namespace?: string;
  input: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

export type ResponsesOutputItem =
  | ResponsesMessageItem
  | ResponsesReasoningItem
  | ResponsesFunctionCallItem
  | ResponsesCustomToolCallItem;

export type ResponsesStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface ResponsesResponse {
  id: string;
  object: 'response';
  created_at: number;
  model: string;
  status: ResponsesStatus;
  output: ResponsesOutputItem[];
  usage?: ResponsesUsage;
  incomplete_details?: { reason: string } | null;
  error?: { code: string; message: string } | null;
  parallel_tool_calls?: boolean;
  tool_choice?: unknown;
  tools?: unknown[];
}

/** Every event carries `type` and `sequence_number` (one counter over all events, keepalives included). */
export type ResponsesStreamEvent =
  | { type: 'response.created' | 'response.in_progress'; sequence_number: number; response: ResponsesResponse }
  | { type: 'response.completed' | 'response.incomplete' | 'response.failed'; sequence_number: number; response: ResponsesResponse }
  | { type: 'response.output_item.added' | 'response.output_item.done'; sequence_number: number; output_index: number; item: ResponsesOutputItem }
  | {
      type: 'response.content_part.added' | 'response.content_part.done';
      sequence_number: number;
      item_id: string;
      output_index: number;
      content_index: number;
      part: { type: 'output_text'; text: string; annotations: unknown[] };
    }
  | { type: 'response.output_text.delta'; sequence_number: number; item_id: string; output_index: number; content_index: number; delta: string }
  | { type: 'response.output_text.done'; sequence_number: number; item_id: string; output_index: number; content_index: number; text: string }
  | { type: 'response.reasoning_text.delta'; sequence_number: number; item_id: string; output_index: number; content_index: number; delta: string }
  | { type: 'response.reasoning_text.done'; sequence_number: number; item_id: string; output_index: number; content_index: number; text: string }
  | { type: 'response.function_call_arguments.delta'; sequence_number: number; item_id: string; output_index: number; delta: string }
  | { type: 'response.function_call_arguments.done'; sequence_number: number; item_id: string; output_index: number; arguments: string }
  | { type: 'response.custom_tool_call_input.delta'; sequence_number: number; item_id: string; call_id: string; output_index: number; delta: string }
  | { type: 'response.custom_tool_call_input.done'; sequence_number: number; item_id: string; call_id: string; output_index: number; input: string };

export type ResponsesStreamEventType = ResponsesStreamEvent['type'];
