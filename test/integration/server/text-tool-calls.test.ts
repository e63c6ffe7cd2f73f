import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itemsDone, postResponses, readCapture, readSseEvents, startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { assertCodexAcceptsStream } from '../../support/codex-stream-oracle.ts';
import { renderChunkFrame, startScriptedBackend, startSseResponse, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';

/*
 * A call the engine left in the assistant text, through the whole bridge: by default Codex gets the
 * call; with recoverTextToolCalls off (serve --no-recover-text-calls, the extension's setting) it gets
 * the text; both times the round trip's end event carries the tool_call_as_text warning.
 */

const FREEFORM_REQUEST = readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json');
const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch\n';
const TEXT = `<tool_call>\n${JSON.stringify({ name: 'apply_patch', arguments: { input: PATCH } })}\n</tool_call>`;

for (const recoverTextToolCalls of [true, false]) {
  describe(`a tool call left as text, recovery ${recoverTextToolCalls ? 'on (default)' : 'off'}`, () => {
    let backend: ScriptedBackend;
    let bridge: StartedBridge;
    before(async () => {
      backend = await startScriptedBackend();
      bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 1, options: recoverTextToolCalls ? {} : { recoverTextToolCalls } });
      backend.setHandlers((response) => {
        startSseResponse(response);
        response.write(renderChunkFrame({ role: 'assistant', content: TEXT.slice(0, 20) }));
        response.write(renderChunkFrame({ content: TEXT.slice(20) }));
        response.write(renderChunkFrame({}, 'stop'));
        response.end('data: [DONE]\n\n');
      });
    });
    after(async () => {
      await bridge.close();
      await backend.close();
    });

    it(recoverTextToolCalls ? 'delivers the apply_patch call, warned' : 'delivers the text as a message, warned', async () => {
      const exchange = await readSseEvents(await postResponses(bridge.url, FREEFORM_REQUEST));
      assert.equal(exchange.status, 200);
      assertCodexAcceptsStream(exchange.events);
      const items = itemsDone(exchange.events);
      assert.deepEqual(
        items.map((item) => item.type),
        [recoverTextToolCalls ? 'custom_tool_call' : 'message'],
      );
      if (recoverTextToolCalls) assert.equal(items[0]?.input, PATCH);
      const end = bridge.traffic.find((event) => event.type === 'exchange-end');
      assert.ok(end?.type === 'exchange-end');
      const warning = end.warnings.find((entry) => entry.kind === 'tool_call_as_text');
      assert.ok(warning, 'the end event carries the warning the panel, the terminal and the log show');
      assert.match(warning.detail, recoverTextToolCalls ? /delivered it as a custom_tool_call/ : /recovering text calls is off/);
    });
  });
}
