import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { diagnoseEngine, type DoctorInput, type DoctorProbes } from '../../../../src/core/doctor/diagnose.ts';
import { identifyEngine, type EngineAnswers, type EngineIdentity } from '../../../../src/core/doctor/engine-identity.ts';
import { readChatProbeAnswer, type ChatProbeResult } from '../../../../src/core/doctor/read-probe-answer.ts';
import { renderDoctorTable, summariseDoctorReport } from '../../../../src/core/doctor/render-doctor-report.ts';
import { fixturePath } from '../../../support/fixtures.ts';

const wire = (name: string): string => readFileSync(fixturePath('llama-server', 'wire', 'hermes', name), 'utf8');

function answers(fields: Partial<EngineAnswers> & { modelList: string }): EngineAnswers {
  return { modelListUrl: 'http://127.0.0.1:8000/v1/models', llamaCppProps: null, vllmVersion: null, sglangServerInfo: null, ollamaVersion: null, ollamaShow: new Map(), ollamaRunning: null, lmStudioModels: null, ...fields };
}

const toolCall: ChatProbeResult = { outcome: 'answered', toolCalls: [{ name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n*** End Patch"}' }], text: '', finishReason: 'tool_calls' };
const said: ChatProbeResult = { outcome: 'answered', toolCalls: [], text: 'OK', finishReason: 'stop' };

function input(identity: EngineIdentity, probes: Partial<DoctorProbes> | null, configuredModel: string | null = null): DoctorInput {
  const model = identity.models[0]?.id ?? '';
  return {
    backendUrl: 'http://127.0.0.1:8000/v1',
    configuredModel,
    connection: { reachable: true },
    identity,
    listProblem: null,
    probes: probes === null ? null : { model, toolCall, toolCallStream: toolCall, reasoningEffort: said, image: said, ...probes },
  };
}

describe('identifyEngine', () => {
  it('llama-server from its real /v1/models and /props: build, running context, template format and tool support', () => {
    const identity = identifyEngine(answers({ modelList: wire('GET_v1_models.body'), llamaCppProps: wire('GET_props.body') }));
    assert.equal(identity.engine, 'llamacpp');
    assert.equal(identity.version, 'b1-de3ff81');
    assert.match(identity.toolCallFormat ?? '', /^hermes/);
    assert.deepEqual(identity.models.map((model) => [model.id, model.contextWindow, model.contextWindowSource, model.supportsTools]), [['models/tiny-hermes.gguf', 4096, 'props default_generation_settings.n_ctx', true]]);
  });

  it('Ollama: the training context is a ceiling until /api/ps says what the loaded model runs with', () => {
    const show = JSON.stringify({ parameters: 'stop "<|im_end|>"', model_info: { 'general.architecture': 'qwen3', 'qwen3.context_length': 40960 }, capabilities: ['completion', 'tools'] });
    const base = { modelList: '{"object":"list","data":[{"id":"qwen3:8b","object":"model","owned_by":"library"}]}', ollamaVersion: '{"version":"0.12.6"}', ollamaShow: new Map([['qwen3:8b', show]]) };
    const cold = identifyEngine(answers(base)).models[0];
    assert.deepEqual([cold?.contextWindow, cold?.contextWindowIsCeiling, cold?.supportsTools], [40960, true, true]);
    const loaded = identifyEngine(answers({ ...base, ollamaRunning: '{"models":[{"name":"qwen3:8b","model":"qwen3:8b","context_length":4096}]}' })).models[0];
    assert.deepEqual([loaded?.contextWindow, loaded?.contextWindowSource, loaded?.contextWindowIsCeiling], [4096, 'api/ps context_length', false]);
  });

  it('an OpenAI-compatible server it does not know: the model list alone, no engine named', () => {
    const identity = identifyEngine(answers({ modelList: '{"data":[{"id":"m"}]}' }));
    assert.equal(identity.engine, null);
    assert.deepEqual(identity.models.map((model) => model.id), ['m']);
  });
});

describe('readChatProbeAnswer', () => {
  it('reads a real llama-server tool call, streamed and not', () => {
    for (const [name, streamed] of [['auto-nonstream.body', false], ['auto-stream.body', true]] as const) {
      const result = readChatProbeAnswer(200, wire(name), streamed);
      assert.equal(result.outcome, 'answered', name);
      if (result.outcome !== 'answered') continue;
      assert.deepEqual(result.toolCalls.map((call) => call.name), ['apply_patch'], name);
      assert.match(JSON.parse(result.toolCalls[0]?.arguments ?? '{}').input as string, /^\*\*\* Begin Patch/);
    }
  });

  it('an error status is a refusal with the engine\'s message', () => {
    assert.deepEqual(readChatProbeAnswer(500, '{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}', false), { outcome: 'refused', status: 500, message: 'tools param requires --jinja flag' });
  });
});

describe('diagnoseEngine', () => {
  const vllm = (contextWindow: number): EngineIdentity => identifyEngine(answers({ modelList: JSON.stringify({ data: [{ id: 'Qwen/Qwen3-Coder-30B-A3B-Instruct', owned_by: 'vllm', max_model_len: contextWindow }] }), vllmVersion: '{"version":"0.20.0"}' }));

  it('the context against what Codex needs: FAIL below 8192, WARN below 32768, ok from there', () => {
    const severity = (window: number): string | undefined => diagnoseEngine(input(vllm(window), null)).findings.find((entry) => entry.check === 'Context')?.severity;
    assert.deepEqual([4096, 8191, 8192, 32767, 32768, 131072].map(severity), ['error', 'error', 'warning', 'warning', 'ok', 'ok']);
    assert.match(diagnoseEngine(input(vllm(4096), null)).worst?.fix ?? '', /vllm serve Qwen\/Qwen3-Coder-30B-A3B-Instruct --max-model-len 32768/);
  });

  it('a tool answered as text: FAIL, and a call written but not parsed is said so', () => {
    const report = diagnoseEngine(input(vllm(32768), { toolCall: { outcome: 'answered', toolCalls: [], text: '<tool_call>{"name": "apply_patch"}', finishReason: 'stop' } }));
    assert.equal(report.codexWouldFail, true);
    assert.match(report.worst?.summary ?? '', /came back as text.*the model wrote a call, but the engine did not parse it/);
    assert.match(report.worst?.fix ?? '', /--tool-call-parser qwen3_coder/);
  });

  it('streamed calls that fail where plain ones work are named as a streaming problem', () => {
    const report = diagnoseEngine(input(vllm(32768), { toolCallStream: said }));
    assert.match(report.findings.find((entry) => entry.check === 'Tool call, streamed')?.summary ?? '', /^works without streaming, but streamed:/);
  });

  it('a refused reasoning_effort is a warning with what the bridge does, not a failure', () => {
    const report = diagnoseEngine(input(vllm(32768), { reasoningEffort: { outcome: 'refused', status: 400, message: "Harmony does not support reasoning_effort='none'" } }));
    assert.equal(report.codexWouldFail, false);
    const effort = report.findings.find((entry) => entry.check === 'Reasoning effort');
    assert.equal(effort?.severity, 'warning');
    assert.match(effort?.bridge ?? '', /catalog offers Codex reasoning levels only/);
    assert.match(renderDoctorTable(report), /Ready for Codex, with 1 warning\./);
  });

  it('an unreachable backend is one FAIL with the way to point at it, and the one-line summary carries it', () => {
    const report = diagnoseEngine({ backendUrl: 'http://127.0.0.1:8000/v1', configuredModel: null, connection: { reachable: false, reason: 'ECONNREFUSED', status: null }, identity: null, listProblem: null, probes: null });
    assert.deepEqual(report.findings.map((entry) => entry.severity), ['error']);
    assert.match(summariseDoctorReport(report), /nothing answers at http:\/\/127\.0\.0\.1:8000\/v1 \(ECONNREFUSED\); fix: start the engine/);
  });
});

describe('diagnoseEngine: a --chat-template override on llama-server', () => {
  const overridden = (folder: string): EngineIdentity => {
    const read = (name: string): string => readFileSync(fixturePath('llama-server', 'wire', folder, name), 'utf8');
    return identifyEngine(answers({ modelList: read('GET_v1_models.body'), llamaCppProps: read('GET_props.body') }));
  };

  it('reads the override from the real /props: the built-in chatml source, or a bare template name', () => {
    assert.equal(overridden('hermes-chatml-override').chatTemplateOverride, 'chatml');
    assert.equal(overridden('hermes-llama3-override').chatTemplateOverride, 'llama3');
    assert.equal(identifyEngine(answers({ modelList: wire('GET_v1_models.body'), llamaCppProps: wire('GET_props.body') })).chatTemplateOverride, null);
  });

  it('names the override in the quick check and says to drop it, not to add a template file', () => {
    const report = diagnoseEngine(input(overridden('hermes-chatml-override'), null));
    const template = report.findings.find((entry) => entry.check === 'Tool template');
    assert.equal(template?.severity, 'error');
    assert.match(template?.summary ?? '', /--chat-template chatml/);
    assert.match(template?.fix ?? '', /without --chat-template chatml/);
    assert.doesNotMatch(template?.fix ?? '', /--chat-template-file/);
    // The probes' advice for a call that came back as text says the same.
    const probed = diagnoseEngine(input(overridden('hermes-chatml-override'), { toolCall: said, toolCallStream: said }));
    assert.match(probed.findings.find((entry) => entry.check === 'Tool call')?.fix ?? '', /without --chat-template chatml/);
  });

  it("serve's one line carries every problem the quick check finds, each with its fix", () => {
    const line = summariseDoctorReport(diagnoseEngine(input(overridden('hermes-chatml-override'), null)));
    assert.match(line, /Context: 8192 tokens[^|]*; fix: restart llama-server with a longer context/);
    assert.match(line, /Tool template: [^|]*--chat-template chatml[^|]*; fix: restart llama-server without --chat-template chatml/);
    assert.ok(line.indexOf('Tool template') < line.indexOf('Context'), 'the error comes before the warning');
  });
});
