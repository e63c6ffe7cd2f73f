import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readCapture, startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { runExchange } from '../../support/exchange-outcome.ts';
import { answerWithText, startScriptedBackend, type ScriptedBackend, type ScriptedHandler } from '../../../mock-backend/scripted-backend.ts';

/**
 * An engine that refuses the grammar pattern (xgrammar or llguidance failing to build it, an older
 * llama.cpp's "invalid regex") must not cost the turn: the same request goes out once more without
 * the pattern, and the pattern is never sent to that model again. An error about anything else is
 * answered as before, with no retry.
 */

const REQUEST = { ...(readCapture('b_freeform_apply_patch_gpt-5.5_v0.171.req1.json') as Record<string, unknown>), stream: false };

const refuse =
  (status: number, message: string): ScriptedHandler =>
  (response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { message, type: 'BadRequestError', code: status } }));
  };

function applyPatchInput(body: unknown): Record<string, unknown> {
  const tools = (body as { tools: Array<{ function: { name: string; strict?: boolean; parameters: { properties: { input: Record<string, unknown> } } } }> }).tools;
  const tool = tools.find((entry) => entry.function.name === 'apply_patch');
  assert.ok(tool);
  return { ...tool.function.parameters.properties.input, strict: tool.function.strict };
}

describe('grammar enforcement: a refusal turns it off and retries once without the pattern', () => {
  let scripted: ScriptedBackend;
  let bridge: StartedBridge;
  before(async () => {
    scripted = await startScriptedBackend();
    // A forced form: no self-test, the pattern goes out on the first request.
    bridge = await startTestBridge({ backendUrl: scripted.url, grammarEnforcement: 'escaped', keepaliveSeconds: 0 });
  });
  after(async () => {
    await bridge.close();
    await scripted.close();
  });

  it('a 400 naming the pattern: retried without it, answered, and never sent to that model again', async () => {
    scripted.setHandlers(refuse(400, 'Invalid regex pattern in JSON schema: unsupported construct'), answerWithText('done'));
    const first = scripted.requests.length;
    const observed = await runExchange(bridge, REQUEST);
    assert.equal(observed.codex.status, 200);
    assert.equal(observed.end.outcome, 'completed');
    const [refused, retried] = scripted.requests.slice(first).map((request) => applyPatchInput(request.body));
    assert.equal(typeof refused?.pattern, 'string');
    assert.equal(refused?.strict, true);
    assert.equal(retried?.pattern, undefined);
    assert.equal(retried?.strict, undefined);

    scripted.setHandlers(answerWithText('again'));
    const next = scripted.requests.length;
    assert.equal((await runExchange(bridge, REQUEST)).codex.status, 200);
    assert.equal(applyPatchInput(scripted.requests[next]?.body).pattern, undefined);
    const reasons = bridge.traffic.flatMap((event) => ('warnings' in event && Array.isArray(event.warnings) ? event.warnings : [])).map((warning) => String((warning as { detail: string }).detail));
    assert.ok(reasons.some((detail) => /checked after generation, not enforced by the engine \(the engine refused the pattern: .*Invalid regex pattern/.test(detail)), reasons.join('\n'));
  });

  it('an error about anything else is answered as it is, without a retry', async () => {
    const other = await startTestBridge({ backendUrl: scripted.url, grammarEnforcement: 'escaped', keepaliveSeconds: 0 });
    try {
      scripted.setHandlers(refuse(400, 'This model does not exist'), answerWithText('never'));
      const first = scripted.requests.length;
      const observed = await runExchange(other, REQUEST);
      assert.equal(observed.codex.status, 400);
      assert.equal(scripted.requests.length - first, 1);
    } finally {
      await other.close();
    }
  });
});
