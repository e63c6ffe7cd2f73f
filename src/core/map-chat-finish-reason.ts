/**
 * Chat `finish_reason` → Responses status. `unusual` asks the caller to
 * record a `finish_reason_unusual` warning: the response still completes, but the panel should show
 * that the engine stopped for a reason Codex has no word for.
 */
export interface MappedChatFinishReason {
  status: 'completed' | 'incomplete' | 'failed';
  /** `incomplete_details.reason` when status is `incomplete`, otherwise null. */
  incompleteReason: string | null;
  unusual: boolean;
}

const KNOWN_CHAT_FINISH_REASONS = [
  'stop',
  'tool_calls',
  'function_call',
  'length',
  'content_filter',
  'repetition',
  'abort',
  'error',
] as const;

type KnownChatFinishReason = (typeof KNOWN_CHAT_FINISH_REASONS)[number];

function isKnownChatFinishReason(reason: string): reason is KnownChatFinishReason {
  return (KNOWN_CHAT_FINISH_REASONS as readonly string[]).includes(reason);
}

export function mapChatFinishReason(reason: string | null | undefined): MappedChatFinishReason {
  // No finish reason means the engine never said it was done (died, cut, error path): a failure,
  // not a completion.
  if (reason === null || reason === undefined || reason === '') {
    return { status: 'failed', incompleteReason: null, unusual: false };
  }
  if (!isKnownChatFinishReason(reason)) {
    return { status: 'completed', incompleteReason: null, unusual: true };
  }
  switch (reason) {
    case 'stop':
    case 'tool_calls':
    case 'function_call':
      return { status: 'completed', incompleteReason: null, unusual: false };
    case 'length':
      return { status: 'incomplete', incompleteReason: 'max_output_tokens', unusual: false };
    case 'content_filter':
      return { status: 'incomplete', incompleteReason: 'content_filter', unusual: false };
    case 'repetition':
      // vLLM's repetition detector ended the output; what was produced is still delivered.
      return { status: 'completed', incompleteReason: null, unusual: true };
    case 'abort':
    case 'error':
      return { status: 'failed', incompleteReason: null, unusual: false };
    default: {
      const unreachable: never = reason;
      return unreachable;
    }
  }
}
