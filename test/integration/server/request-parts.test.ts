import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveBridgeOptions } from '../../../src/core/bridge-options.ts';
import { convertResponsesRequestToChatRequest } from '../../../src/core/lower/convert-responses-request-to-chat-request.ts';
import { createWarningLedger } from '../../../src/core/warnings.ts';
import { joinChatRequestParts } from '../../../src/core/outbound/outbound-encoding.ts';
import { SENT_REQUEST_PARTS, type ExchangeStartEvent, type TrafficEvent } from '../../../src/core/traffic/traffic-event.ts';
import { decodeFragment, encodeStartEvent } from '../../../src/server/start-event-encoding.ts';
import { readCapture, startTestBridge } from '../../support/bridge-harness.ts';
import { startMockBackend } from '../../../mock-backend/create-mock-backend.ts';

/*
 * A bridge asked to serialise by parts (the extension's, whose panel keeps parts) sends the joined
 * parts upstream: the backend receives exactly the text the start event's parts spell, so the
 * request is serialised once. Without the setting the start event carries no parts. The panel reads
 * the start as the bridge's worker encodes it (encodeStartEvent).
 */

/** The lowered request's text as the panel receives it: the encoded start's parts, joined. */
function panelRequestText(start: ExchangeStartEvent): string {
  const { encodedRequest } = encodeStartEvent(start, (text) => text);
  const part = (fragment: Parameters<typeof decodeFragment>[1]): string => decodeFragment(encodedRequest, fragment);
  return joinChatRequestParts({ head: part(encodedRequest.head), messages: encodedRequest.messages.map(part), tools: encodedRequest.tools === null ? null : part(encodedRequest.tools) });
}

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/**
 * A long session: well above the size from which the bridge carries long strings as bytes
 * (outbound-encoding.ts), with text that JSON escaping and joining meet in every item kind.
 */
function createLongSession(): Record<string, unknown> {
  const capture = readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req2.json');
  const file = Array.from({ length: 400 }, (_, line) => `\tconst value${line} = "quoted — café ✓ \\ ${line}";`).join('\n');
  const history: unknown[] = [];
  for (let turn = 0; turn < 24; turn++) {
    history.push(
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: `turn ${turn}: ${file.slice(0, 2_000)}` }, { type: 'input_text', text: file }] },
      { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: `thinking ${turn} ${file.slice(0, 3_000)}` }] },
      { type: 'function_call', call_id: `call_${turn}`, name: 'exec_command', arguments: JSON.stringify({ cmd: `cat ${file.slice(0, 1_500)}` }) },
      { type: 'function_call_output', call_id: `call_${turn}`, output: `Output:\n${file}` },
      { type: 'custom_tool_call', call_id: `patch_${turn}`, name: 'apply_patch', input: `*** Begin Patch\n*** Add File: a${turn}.ts\n+${file.slice(0, 4_000)}\n*** End Patch` },
      { type: 'custom_tool_call_output', call_id: `patch_${turn}`, output: [{ type: 'input_text', text: `Output:\n${file.slice(0, 1_200)}` }, { type: 'input_text', text: file.slice(0, 1_100) }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `done ${turn}\n${file.slice(0, 5_000)}` }] },
    );
  }
  return { ...capture, stream: true, instructions: `${file}\n`, input: [...(capture.input as unknown[]), ...history] };
}

async function sendOneTurn(serialiseRequestParts: boolean, body: Record<string, unknown> = { ...readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req2.json'), stream: true }): Promise<{ start: ExchangeStartEvent; upstreamText: string; sharedStart: Record<string, unknown> }> {
  const backend = await startMockBackend({ profile: 'vllm-hermes' });
  closers.push(() => backend.close());
  const starts: ExchangeStartEvent[] = [];
  const bridge = await startTestBridge({
    backendUrl: backend.url,
    serialiseRequestParts,
    onTraffic: (event: TrafficEvent) => {
      if (event.type === 'exchange-start') starts.push(event);
    },
  });
  closers.push(() => bridge.close());
  // What another window following this bridge reads: the start event as the sharing stream sends it.
  const shared = await fetch(`${bridge.url}/v1/bridge/traffic`);
  const reader = shared.body?.getReader();
  assert.ok(reader);
  const answer = await fetch(`${bridge.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(answer.status, 200);
  assert.match(await answer.text(), /response\.completed/);
  let sharedText = '';
  const decoder = new TextDecoder();
  while (!sharedText.includes('"exchange-start"') || !sharedText.slice(sharedText.indexOf('"exchange-start"')).includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    sharedText += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  const frame = sharedText.split('\n\n').find((part) => part.includes('"exchange-start"')) ?? '';
  const sharedStart = JSON.parse(frame.split('\n').find((line) => line.startsWith('data: '))?.slice(6) ?? 'null') as Record<string, unknown>;
  const upstream = backend.requests.find((request) => request.path === '/v1/chat/completions');
  assert.ok(upstream, 'the backend was called');
  assert.equal(starts.length, 1);
  return { start: starts[0] as ExchangeStartEvent, upstreamText: upstream.rawBody, sharedStart };
}

describe('serialising the lowered request by parts', () => {
  it('sends exactly the joined parts upstream, the same text as one serialisation, and keeps the parts off the sharing stream', async () => {
    const { start, upstreamText, sharedStart } = await sendOneTurn(true);
    const parts = start[SENT_REQUEST_PARTS];
    assert.ok(parts, 'the start event carries the parts');
    assert.equal(upstreamText, joinChatRequestParts(parts));
    assert.equal(upstreamText, JSON.stringify(start.loweredRequest));
    assert.equal(panelRequestText(start), upstreamText, 'the panel receives the bytes sent');
    assert.ok(parts.messages.length > 3);
    assert.deepEqual(Object.keys(sharedStart).filter((key) => key.startsWith('lowered')), ['loweredRequest'], 'the sharing stream carries the request once');
    assert.deepEqual(sharedStart.loweredRequest, JSON.parse(upstreamText));
  });

  it('sends a long session as one full parse would, with the panel and the sharing stream seeing the real text', async () => {
    const body = createLongSession();
    const text = JSON.stringify(body);
    assert.ok(Buffer.byteLength(text) > 1_000_000, `${Buffer.byteLength(text)} bytes`);
    const expected = convertResponsesRequestToChatRequest(JSON.parse(text), resolveBridgeOptions(), createWarningLedger()).chatRequest;
    for (const byParts of [true, false]) {
      const { start, upstreamText, sharedStart } = await sendOneTurn(byParts, body);
      assert.deepEqual(JSON.parse(upstreamText), expected, 'the backend receives the lowered request');
      assert.deepEqual(JSON.parse(panelRequestText(start)), expected, 'the panel reads the real text');
      assert.deepEqual(start.loweredRequest, expected, 'the log file reads the real text');
      assert.deepEqual(sharedStart.loweredRequest, expected, 'other windows read the real text');
      const parts = start[SENT_REQUEST_PARTS];
      assert.equal(parts !== undefined, byParts);
      if (parts) assert.equal(upstreamText, joinChatRequestParts(parts), 'the parts spell the bytes sent');
    }
  });

  it('refuses a long session whose long string is not JSON with the words of JSON.parse', async () => {
    const backend = await startMockBackend({ profile: 'vllm-hermes' });
    closers.push(() => backend.close());
    const bridge = await startTestBridge({ backendUrl: backend.url });
    closers.push(() => bridge.close());
    const text = JSON.stringify(createLongSession());
    // A bad escape deep inside the last long tool output.
    const at = text.lastIndexOf('Output:\\n') + 12;
    const broken = `${text.slice(0, at)}\\x${text.slice(at)}`;
    let parseError = '';
    try {
      JSON.parse(broken);
    } catch (error) {
      parseError = (error as Error).message;
    }
    assert.ok(parseError !== '');
    const answer = await fetch(`${bridge.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: broken });
    assert.equal(answer.status, 400);
    const refusal = (await answer.json()) as { error: { message: string } };
    assert.ok(refusal.error.message.includes(parseError), refusal.error.message);
    assert.equal(backend.requests.filter((request) => request.path === '/v1/chat/completions').length, 0, 'nothing reached the backend');
  });

  it('carries no parts without the setting, and the backend gets the same text', async () => {
    const { start, upstreamText } = await sendOneTurn(false);
    assert.equal(start[SENT_REQUEST_PARTS], undefined);
    assert.equal(panelRequestText(start), upstreamText, 'the panel receives the same text, encoded from the objects');
    assert.equal(upstreamText, JSON.stringify(start.loweredRequest));
  });
});
