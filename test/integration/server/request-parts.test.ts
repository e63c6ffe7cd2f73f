import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { joinChatRequestParts } from '../../../src/core/chat-request-fragments.ts';
import type { ExchangeStartEvent, TrafficEvent } from '../../../src/core/traffic-event.ts';
import { readCapture, startTestBridge } from '../../support/bridge-harness.ts';
import { startMockBackend } from '../../support/mock-backend/create-mock-backend.ts';

/*
 * A bridge asked to serialise by parts (the extension's, whose panel keeps parts) sends the joined
 * parts upstream: the backend receives exactly the text the start event's parts spell, so the
 * request is serialised once. Without the setting the start event carries no parts.
 */

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function sendOneTurn(serialiseRequestParts: boolean): Promise<{ start: ExchangeStartEvent; upstreamText: string; sharedStart: Record<string, unknown> }> {
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
  const body = { ...readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req2.json'), stream: true };
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
    assert.ok(start.loweredRequestParts, 'the start event carries the parts');
    assert.equal(upstreamText, joinChatRequestParts(start.loweredRequestParts));
    assert.equal(upstreamText, JSON.stringify(start.loweredRequest));
    assert.ok(start.loweredRequestParts.messages.length > 3);
    assert.equal('loweredRequestParts' in sharedStart, false, 'the sharing stream carries the request once');
    assert.deepEqual(sharedStart.loweredRequest, JSON.parse(upstreamText));
  });

  it('carries no parts without the setting, and the backend gets the same text', async () => {
    const { start, upstreamText } = await sendOneTurn(false);
    assert.equal(start.loweredRequestParts, undefined);
    assert.equal(upstreamText, JSON.stringify(start.loweredRequest));
  });
});
