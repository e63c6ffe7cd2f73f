import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertCodexAcceptsStream } from '../../support/codex-stream-oracle.ts';
import { applyPatchWithCodex } from '../../support/codex-apply-patch.ts';
import { itemsDone, postResponses, readCapture, readSseEvents, startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { readPatchCorpus, runCorpusCase, type CorpusCase } from '../../support/patch-corpus.ts';
import { renderChunkFrame, startScriptedBackend, startSseResponse, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';

/*
 * The corpus through the whole bridge over HTTP: Codex's captured freeform request goes in, a scripted
 * engine streams the case's arguments in two fragments with its finish reason, and what comes out of the
 * SSE stream is what the stream translator alone delivers (the tier the other corpus tests measure),
 * a stream Codex accepts, and, applied by the real codex binary, the intended change or none.
 */

const FREEFORM_REQUEST = readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json');
const corpus = readPatchCorpus();

function streamCase(backend: ScriptedBackend, corpusCase: CorpusCase): void {
  const half = Math.floor(corpusCase.arguments.length / 2);
  backend.setHandlers((response) => {
    startSseResponse(response);
    response.write(renderChunkFrame({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_http', type: 'function', function: { name: 'apply_patch', arguments: corpusCase.arguments.slice(0, half) } }] }));
    response.write(renderChunkFrame({ tool_calls: [{ index: 0, function: { arguments: corpusCase.arguments.slice(half) } }] }));
    response.write(renderChunkFrame({}, corpusCase.finish_reason));
    response.end('data: [DONE]\n\n');
  });
}

for (const grammarRepair of [false, true]) {
  describe(`patch corpus over HTTP, grammar repair ${grammarRepair ? 'on' : 'off'}`, () => {
    let backend: ScriptedBackend;
    let bridge: StartedBridge;
    before(async () => {
      backend = await startScriptedBackend();
      bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 1, options: { grammarRepair } });
    });
    after(async () => {
      await bridge.close();
      await backend.close();
    });

    it('delivers what the translator delivers, in a stream Codex accepts, and Codex applies only intended changes', async () => {
      // The captured request declares apply_patch, not code mode's exec: exec bodies are run through the translator alone.
      for (const corpusCase of corpus.filter((candidate) => candidate.tool === undefined)) {
        streamCase(backend, corpusCase);
        const exchange = await readSseEvents(await postResponses(bridge.url, FREEFORM_REQUEST));
        assert.equal(exchange.status, 200, corpusCase.id);
        const expected = runCorpusCase(corpusCase, grammarRepair);
        // A repaired input went out as deltas before the check: the done event carries the repair.
        assertCodexAcceptsStream(exchange.events, {
          inputDeltaMismatchCallIds: expected.delivered !== null && expected.delivered !== expected.streamed ? ['call_http'] : [],
          expectedTerminal: expected.delivered === null ? 'response.incomplete' : 'response.completed',
        });
        const call = itemsDone(exchange.events).find((item) => item.type === 'custom_tool_call');
        const delivered = typeof call?.input === 'string' ? call.input : null;
        assert.equal(delivered, expected.delivered, corpusCase.id);
        if (delivered === null) continue;
        const result = applyPatchWithCodex(delivered, corpusCase.files);
        assert.deepEqual(result.files, result.applied ? corpusCase.expected_files : corpusCase.files, `${corpusCase.id}: ${result.output}`);
      }
    });
  });
}
