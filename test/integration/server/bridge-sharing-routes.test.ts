import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { computeIdentityProof } from '../../../src/server/bridge-sharing-routes.ts';
import { checkBridgeIdentity, followBridgeTraffic } from '../../../src/server/bridge-sharing-client.ts';
import type { TrafficEvent } from '../../../src/core/traffic/traffic-event.ts';
import { startTestBridge } from '../../support/bridge-harness.ts';
import { startMockBackend } from '../../../mock-backend/create-mock-backend.ts';
import { startPortSquatter } from '../../support/port-squatter.ts';

/** The two routes a second VS Code window uses to find and follow the bridge another window runs. */

const TOKEN = 'sharing-token';
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function startPair() {
  const backend = await startMockBackend({ profile: 'vllm-hermes' });
  closers.push(() => backend.close());
  const bridge = await startTestBridge({ backendUrl: backend.url, getToken: () => TOKEN });
  closers.push(() => bridge.close());
  return { backend, bridge };
}

describe('GET /v1/bridge/identity and /v1/bridge/traffic', () => {
  it('identity: an HMAC proof of the challenge, and a 400 for a bad challenge', async () => {
    const { backend, bridge } = await startPair();
    const challenge = '00112233445566778899aabbccddeeff';
    const response = await fetch(`${bridge.url}/v1/bridge/identity?challenge=${challenge}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(response.status, 200);
    const identity = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(identity, { name: 'freeform-bridge', version: identity.version, instanceId: bridge.instanceId, pid: process.pid, backend: backend.url, proof: computeIdentityProof(TOKEN, challenge, bridge.port) });
    const bad = await fetch(`${bridge.url}/v1/bridge/identity?challenge=not-hex`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(bad.status, 400);
    const check = await checkBridgeIdentity(bridge.url, TOKEN);
    assert.ok(check.ours, JSON.stringify(check));
    assert.equal(check.identity.instanceId, bridge.instanceId);
    const other = await checkBridgeIdentity(bridge.url, 'other-token');
    assert.equal(other.ours, false);
    assert.match(other.ours ? '' : other.reason, /could not prove it knows the bridge token/);
  });

  it('traffic: every event of a round trip streams to a follower, and the stream ends when the bridge stops', async () => {
    const { bridge } = await startPair();
    const received: TrafficEvent[] = [];
    let endReason: string | null = null;
    assert.equal((await fetch(`${bridge.url}/v1/bridge/traffic`)).status, 401);
    const opened = new Promise<void>((resolve) => {
      const follower = followBridgeTraffic(bridge.url, TOKEN, { onEvent: (event) => received.push(event), onEnd: (reason) => (endReason = reason), onOpen: resolve });
      closers.push(async () => follower.stop());
    });
    // The bridge subscribes before it sends the stream's headers: once open, no event is missed.
    await opened;
    const turn = await fetch(`${bridge.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ model: 'm', input: 'hi', stream: false }) });
    assert.equal(turn.status, 200);
    await turn.text();
    for (let attempt = 0; attempt < 200 && !received.some((event) => event.type === 'exchange-end'); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.equal(received[0]?.type, 'exchange-start');
    assert.equal(received.at(-1)?.type, 'exchange-end');
    assert.equal(new Set(received.map((event) => event.exchangeId)).size, 1);
    await bridge.close();
    for (let attempt = 0; attempt < 200 && endReason === null; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.equal(endReason, 'the bridge ended the stream (it stopped)');
  });

  it('a program holding the port is never sent the token, nor taken for the bridge, whatever it answers', async () => {
    const squatter = await startPortSquatter();
    closers.push(() => squatter.close());
    // Twice: the squatter forges a different proof shape from what it is sent on each call.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const check = await checkBridgeIdentity(squatter.url, TOKEN);
      assert.equal(check.ours, false, JSON.stringify(check));
    }
    assert.equal(squatter.requests.length, 2);
    for (const request of squatter.requests) assert.equal(request.headers.authorization, undefined, 'no Authorization header before the other side proved itself');
    for (const seen of squatter.harvested()) assert.ok(!seen.includes(TOKEN), `the squatter saw the token in ${seen}`);
  });

  it('a real bridge proves itself without being sent the token first, and its proof is bound to its port', async () => {
    const { bridge } = await startPair();
    const challenge = '00112233445566778899aabbccddeeff';
    const response = await fetch(`${bridge.url}/v1/bridge/identity?challenge=${challenge}`);
    assert.equal(response.status, 200);
    const identity = (await response.json()) as { proof: string };
    assert.equal(identity.proof, computeIdentityProof(TOKEN, challenge, bridge.port));
    assert.notEqual(identity.proof, computeIdentityProof(TOKEN, challenge, bridge.port + 1), 'a proof relayed from another port does not pass');
  });
});

