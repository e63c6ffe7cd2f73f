import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnoseEngine, type DoctorInput } from '../../../src/core/doctor/diagnose.ts';
import { identifyEngine } from '../../../src/core/doctor/engine-identity.ts';
import { describeBackendCheck } from '../../../src/extension/describe-backend-check.ts';

const backendUrl = 'http://127.0.0.1:8000/v1';

function unreachable(reason: string, status: number | null): DoctorInput {
  return { backendUrl, configuredModel: null, connection: { reachable: false, reason, status }, identity: null, listProblem: null, probes: null };
}

function listing(contextWindow: number): DoctorInput {
  const identity = identifyEngine({ modelListUrl: `${backendUrl}/models`, modelList: JSON.stringify({ data: [{ id: 'qwen3-coder', owned_by: 'vllm', max_model_len: contextWindow }] }), llamaCppProps: null, vllmVersion: '{"version":"0.20.0"}', sglangServerInfo: null, ollamaVersion: null, ollamaShow: new Map(), ollamaRunning: null, lmStudioModels: null });
  return { backendUrl, configuredModel: null, connection: { reachable: true }, identity, listProblem: null, probes: null };
}

describe('describeBackendCheck', () => {
  it('a backend without problems: engine, model and context in one line, and the outcome lists its models', () => {
    const described = describeBackendCheck(diagnoseEngine(listing(32_768)), false);
    assert.equal(described.message, `Freeform Bridge: vLLM 0.20.0 at ${backendUrl} is ready for Codex (model 'qwen3-coder', context 32768 tokens).`);
    assert.deepEqual([described.result.reachable, described.result.models, described.suggestApiKey], [true, ['qwen3-coder'], false]);
  });

  it('the worst problem first, with its fix to copy', () => {
    const described = describeBackendCheck(diagnoseEngine(listing(4096)), false);
    assert.match(described.message, /^Freeform Bridge: Context: 4096 tokens .* Fix: restart vLLM with a longer context: vllm serve qwen3-coder --max-model-len 32768\.$/);
  });

  it('an unreachable backend, and one that wants a key', () => {
    const refused = describeBackendCheck(diagnoseEngine(unreachable('ECONNREFUSED', null)), false);
    assert.equal(refused.result.reachable, false);
    assert.match(refused.message, /nothing answers at http:\/\/127\.0\.0\.1:8000\/v1 \(ECONNREFUSED\)/);
    const missing = describeBackendCheck(diagnoseEngine(unreachable('HTTP 401', 401)), false);
    assert.equal(missing.suggestApiKey, true);
    assert.match(missing.message, /Set the API key\.$/);
    assert.match(describeBackendCheck(diagnoseEngine(unreachable('HTTP 403', 403)), true).message, /The stored API key was refused/);
  });
});
