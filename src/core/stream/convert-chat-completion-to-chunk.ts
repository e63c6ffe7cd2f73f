import type { ChatCompletion, ChatCompletionChunk } from '../chat/chat-completions-api.ts';

/**
 * Some backends answer a `stream: true` request with one JSON completion (proxies that do not
 * stream, engines with streaming disabled). Replaying it as a single chunk through the stream
 * translator keeps one lifting path for both shapes.
 */
export function convertChatCompletionToChunk(completion: ChatCompletion): ChatCompletionChunk {
  const choice = completion.choices?.[0];
  const message = choice?.message;
  return {
    id: completion.id,
    model: completion.model,
    created: completion.created,
    choices: choice
      ? [
          {
            index: 0,
            delta: {
              role: 'assistant',
              content: message?.content ?? null,
              reasoning: message?.reasoning ?? null,
              reasoning_content: message?.reasoning ? null : (message?.reasoning_content ?? null),
              tool_calls: message?.tool_calls?.map((call, index) => ({ ...call, index: call.index ?? index })) ?? null,
            },
            finish_reason: choice.finish_reason ?? null,
          },
        ]
      : [],
    usage: completion.usage ?? null,
  };
}
