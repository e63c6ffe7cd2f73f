import { chatCompletionSchema } from '../chat/chat-completions-api.ts';
import { readEngineErrorText } from '../engine-error.ts';
import { parseJson } from '../parse-json.ts';
import { parseChatStreamEvent, SseDecoder } from '../sse/sse-decoder.ts';

/**
 * What one of the doctor's small chat requests got back, read the way the bridge reads a real answer
 * (the same schema, the same SSE decoder), so a probe passes only when the bridge could use the answer.
 */
export interface ProbeToolCall {
  name: string;
  arguments: string;
}

export type ChatProbeResult =
  | { outcome: 'answered'; toolCalls: ProbeToolCall[]; text: string; finishReason: string | null }
  /** An HTTP error, or an error event inside a 200 stream. */
  | { outcome: 'refused'; status: number; message: string }
  /** No answer at all: connection refused, reset, or the probe's time limit. */
  | { outcome: 'unreachable'; reason: string };

function argumentText(value: string | Record<string, unknown> | null | undefined): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function readChatProbeAnswer(status: number, body: string, streamed: boolean): ChatProbeResult {
  if (status !== 200) return { outcome: 'refused', status, message: readEngineErrorText(body).message };
  return streamed ? readStream(body) : readCompletion(body);
}

function readCompletion(body: string): ChatProbeResult {
  const json = parseJson(body);
  const parsed = chatCompletionSchema.safeParse(json.success ? json.value : null);
  const choice = parsed.success ? parsed.data.choices?.[0] : undefined;
  if (!parsed.success || choice === undefined) return { outcome: 'refused', status: 200, message: `the answer is not a chat completion: ${body.slice(0, 200)}` };
  const toolCalls = (choice.message?.tool_calls ?? []).map((call) => ({ name: call.function?.name ?? '', arguments: argumentText(call.function?.arguments) }));
  return { outcome: 'answered', toolCalls, text: choice.message?.content ?? '', finishReason: choice.finish_reason ?? null };
}

function readStream(body: string): ChatProbeResult {
  const decoder = new SseDecoder();
  const events = [...decoder.push(body), ...decoder.end()];
  const calls = new Map<number, ProbeToolCall>();
  let text = '';
  let finishReason: string | null = null;
  let chunks = 0;
  for (const event of events) {
    const parsed = parseChatStreamEvent(event);
    if (parsed.kind === 'error') return { outcome: 'refused', status: 200, message: `error event in the stream: ${parsed.message}` };
    if (parsed.kind !== 'chunk') continue;
    chunks += 1;
    for (const choice of parsed.chunk.choices ?? []) {
      text += choice.delta?.content ?? '';
      if (choice.finish_reason) finishReason = choice.finish_reason;
      for (const [position, delta] of (choice.delta?.tool_calls ?? []).entries()) {
        const index = delta.index ?? position;
        const call = calls.get(index) ?? { name: '', arguments: '' };
        call.name += delta.function?.name ?? '';
        call.arguments += argumentText(delta.function?.arguments);
        calls.set(index, call);
      }
    }
  }
  if (chunks === 0) return { outcome: 'refused', status: 200, message: `the stream held no chat chunk: ${body.slice(0, 200)}` };
  return { outcome: 'answered', toolCalls: [...calls.values()], text, finishReason };
}
