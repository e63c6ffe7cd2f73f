/**
 * Builders of traffic events for the panel's tests: the shapes the server emits
 * (src/server/exchange-reporter.ts), with only what a test cares about spelled out.
 */
import type { ChatRequest } from '../../src/core/chat/chat-completions-api.ts';
import type { ResponsesOutputItem } from '../../src/core/responses/responses-output.ts';
import type { RoundTripLabel } from '../../src/core/traffic/round-trip-label.ts';
import type { ExchangeDeltaEvent, ExchangeEndEvent, ExchangeStartEvent } from '../../src/core/traffic/traffic-event.ts';
import type { BridgeWarning } from '../../src/core/warnings.ts';
import { encodeStartEvent, type EncodedExchangeStartEvent } from '../../src/server/start-event-encoding.ts';

export const TURN: RoundTripLabel = { kind: 'turn', agentName: '/root', text: 'turn' };

export const HTML_PAYLOAD = '*** Begin Patch\n*** Update File: x.html\n<img src=x onerror=alert(1)><script>alert(2)</script>\n*** End Patch';

export const APPLY_PATCH_TOOL = {
  type: 'function' as const,
  function: { name: 'apply_patch', description: 'Raw free-form input', parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] } },
};

export function createLoweredRequest(messages: ChatRequest['messages'], overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'qwen3-coder', messages, tools: [APPLY_PATCH_TOOL], tool_choice: 'auto', stream: true, stream_options: { include_usage: true }, ...overrides };
}

export function startEvent(exchangeId: string, loweredRequest: ChatRequest = createLoweredRequest([{ role: 'user', content: 'hello' }])): ExchangeStartEvent {
  return {
    type: 'exchange-start',
    exchangeId,
    startedAt: '2026-11-29T12:00:00.000Z',
    model: 'qwen3-coder',
    upstreamModel: 'qwen3-coder',
    clientStream: true,
    promptCacheKey: null,
    tools: [
      { name: 'apply_patch', namespace: null, kind: 'custom', source: 'tools', disposition: 'bridged', wireName: 'apply_patch', reason: null },
      { name: 'close_agent', namespace: 'multi_agent_v1', kind: 'function', source: 'tools', disposition: 'lowered', wireName: 'multi_agent_v1__close_agent', reason: null },
      { name: 'web_search', namespace: null, kind: 'web_search', source: 'tools', disposition: 'dropped', wireName: null, reason: "hosted tool kind 'web_search' cannot run on a Chat Completions backend" },
    ],
    toolChoice: { original: { type: 'custom', name: 'apply_patch' }, sent: { type: 'function', function: { name: 'apply_patch' } } },
    inputItems: 3,
    requestBytes: 2048,
    loweredRequest,
    roundTrip: TURN,
  };
}

/**
 * The start as the extension host receives it from the bridge's worker thread (bridge-worker-entry.ts),
 * the one form the traffic store takes: the lowered request encoded, redacted there with `redactText`.
 */
export function encodedStartEvent(
  exchangeId: string,
  loweredRequest: ChatRequest = createLoweredRequest([{ role: 'user', content: 'hello' }]),
  redactText: (text: string) => string = (text) => text,
): EncodedExchangeStartEvent {
  return encodeStartEvent(startEvent(exchangeId, loweredRequest), redactText);
}

export function customCall(callId: string, input: string): ResponsesOutputItem {
  return { type: 'custom_tool_call', id: `ctc_${callId}`, call_id: callId, name: 'apply_patch', input, status: 'completed' };
}

export function functionCall(callId: string, argumentsText: string): ResponsesOutputItem {
  return { type: 'function_call', id: `fc_${callId}`, call_id: callId, name: 'exec_command', arguments: argumentsText, status: 'completed' };
}

export function grammarWarning(callId: string, raw: string): BridgeWarning {
  return { kind: 'grammar_mismatch', tool: 'apply_patch', callId, detail: 'input does not match the apply_patch grammar at line 3, column 1', raw };
}

export function deltaEvent(exchangeId: string, items: ResponsesOutputItem[], warnings: BridgeWarning[] = []): ExchangeDeltaEvent {
  return { type: 'exchange-delta', exchangeId, items, warnings };
}

export function endEvent(exchangeId: string, output: ResponsesOutputItem[], warnings: BridgeWarning[] = [], overrides: Partial<ExchangeEndEvent> = {}): ExchangeEndEvent {
  return {
    type: 'exchange-end',
    exchangeId,
    roundTrip: TURN,
    outcome: 'completed',
    httpStatus: 200,
    timings: { upstreamHeadersMs: 40, firstDeltaMs: 120, totalMs: 900 },
    usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 120 },
    output,
    warnings,
    error: null,
    ...overrides,
  };
}
