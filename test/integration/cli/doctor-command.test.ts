import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { DoctorReport } from '../../../src/core/doctor/diagnose.ts';
import { runDoctorCommand, type DoctorCommandIo } from '../../../src/cli/doctor-command.ts';
import { startMockBackend, type MockBackend, type MockBackendOptions } from '../../../mock-backend/create-mock-backend.ts';
import { isRecord } from '../../../mock-backend/python-text.ts';
import { startScriptedBackend } from '../../../mock-backend/scripted-backend.ts';

/**
 * `freeform-bridge doctor` against the mock backend's engine profiles: each engine's own endpoints as
 * the engines write them, and the probes answered the way each engine answers (a tool call when the
 * request offers a tool, the engine's refusal when it is started without what tools need).
 */

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const PATCH = '*** Begin Patch\n*** Add File: probe.txt\n*** End Patch';

async function startEngine(options: MockBackendOptions): Promise<MockBackend> {
  const backend = await startMockBackend(options);
  closers.push(() => backend.close());
  // A model that calls the tool it is offered, and says OK otherwise.
  backend.setResponder((request) => (isRecord(request.body) && Array.isArray(request.body.tools) ? { toolCalls: [{ name: 'apply_patch', input: PATCH }], finishReason: 'tool_calls' } : { text: 'OK' }));
  return backend;
}

async function runDoctor(args: string[], seams: Partial<DoctorCommandIo> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runDoctorCommand(args, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), env: {}, ...seams });
  return { code, stdout, stderr };
}

async function diagnose(backend: MockBackend, extra: string[] = []): Promise<{ code: number; report: DoctorReport }> {
  const { code, stdout, stderr } = await runDoctor(['--backend', backend.url, '--json', ...extra]);
  assert.equal(stderr, '');
  return { code, report: JSON.parse(stdout) as DoctorReport };
}

function severityOf(report: DoctorReport, check: string): string | undefined {
  return report.findings.find((entry) => entry.check === check)?.severity;
}

describe('freeform-bridge doctor', { timeout: 60_000 }, () => {
  it('vLLM started right: engine, version and context from its own fields, tool calls streamed and not, exit 0', async () => {
    const backend = await startEngine({ profile: 'vllm-qwen3coder' });
    const { code, report } = await diagnose(backend);
    assert.equal(code, 0);
    assert.equal(report.engine, 'vllm');
    assert.equal(report.version, '0.20.0');
    assert.equal(report.model, 'Qwen/Qwen3-Coder-30B-A3B-Instruct');
    assert.equal(report.contextWindow, 32_768);
    assert.equal(report.contextWindowSource, 'max_model_len');
    for (const check of ['Engine', 'Model', 'Context', 'Tool call', 'Tool call, streamed', 'Reasoning effort']) assert.equal(severityOf(report, check), 'ok', check);
    assert.equal(report.codexWouldFail, false);
    // The probes offer the tool as Codex does (tool_choice auto) and stay tiny.
    const probes = backend.requests.filter((request) => request.path === '/v1/chat/completions').map((request) => request.body as Record<string, unknown>);
    // Four probes, and the grammar self-test's two forms (the mock engine enforces no pattern).
    assert.equal(probes.length, 6);
    for (const probe of probes) assert.ok(typeof probe.max_tokens === 'number' && probe.max_tokens <= 96, JSON.stringify(probe));
    assert.deepEqual(probes.filter((probe) => Array.isArray(probe.tools)).map((probe) => probe.tool_choice), ['auto', 'auto', 'auto', 'auto']);
    // vLLM constrains `auto` tool calls only for functions marked strict (docs/features/tool_calling.md).
    const selfTests = probes.filter((probe) => JSON.stringify(probe).includes('"pattern"'));
    assert.deepEqual(selfTests.map((probe) => (probe.tools as Array<{ function: { strict?: boolean } }>)[0]?.function.strict), [true, true]);
    assert.equal(severityOf(report, 'Grammar enforcement'), 'info');
  });

  it('vLLM without --enable-auto-tool-choice: FAIL with the flag to copy, the parser of the model family, exit 1', async () => {
    const backend = await startEngine({ profile: 'vllm-qwen3coder', toolParser: false });
    const { code, stdout } = await runDoctor(['--backend', backend.url]);
    assert.equal(code, 1);
    assert.match(stdout, /FAIL {2}Tool call {12}refused \(HTTP 400: "auto" tool choice requires --enable-auto-tool-choice/);
    assert.match(stdout, /vllm serve Qwen\/Qwen3-Coder-30B-A3B-Instruct --enable-auto-tool-choice --tool-call-parser qwen3_coder/);
    assert.match(stdout, /Codex would fail/);
  });

  it('a model id typed by hand that the engine does not list: FAIL naming the listed id', async () => {
    const backend = await startEngine({ profile: 'vllm-hermes', models: ['Qwen/Qwen2.5-Coder-7B-Instruct'] });
    const { code, report } = await diagnose(backend, ['--model', 'qwen2.5-coder', '--quick']);
    assert.equal(code, 1);
    const model = report.findings.find((entry) => entry.check === 'Model');
    assert.equal(model?.severity, 'error');
    assert.match(model?.fix ?? '', /--model Qwen\/Qwen2\.5-Coder-7B-Instruct/);
    // The quick check generates nothing.
    assert.equal(backend.requests.filter((request) => request.path === '/v1/chat/completions').length, 0);
  });

  it('SGLang without --tool-call-parser: its /server_info says so without a single generation', async () => {
    const backend = await startEngine({ profile: 'sglang', toolParser: false });
    const { code, report } = await diagnose(backend, ['--quick']);
    assert.equal(code, 1);
    assert.equal(report.engine, 'sglang');
    assert.equal(report.version, '0.5.4');
    const template = report.findings.find((entry) => entry.check === 'Tool template');
    assert.equal(template?.severity, 'error');
    assert.match(template?.fix ?? '', /--tool-call-parser qwen3_coder/);
  });

  it('SGLang without --tool-call-parser, fully probed: the call comes back as text, named as unparsed', async () => {
    const backend = await startEngine({ profile: 'sglang', toolParser: false });
    const { code, report } = await diagnose(backend);
    assert.equal(code, 1);
    for (const check of ['Tool call', 'Tool call, streamed']) {
      const found = report.findings.find((entry) => entry.check === check);
      assert.equal(found?.severity, 'error', check);
      assert.match(found?.summary ?? '', /came back as text, not as a tool call \(the model wrote a call, but the engine did not parse it\)/);
      assert.match(found?.fix ?? '', /python -m sglang\.launch_server --model-path Qwen\/Qwen3-Coder-30B-A3B-Instruct --tool-call-parser qwen3_coder/);
    }
  });

  it('gpt-oss on vLLM needs no parser flag (Harmony parses its calls): no failure; a Qwen model without one: FAIL', async () => {
    const gptOss = await diagnose(await startEngine({ profile: 'vllm-gptoss', toolParser: false }));
    assert.equal(gptOss.code, 0, JSON.stringify(gptOss.report.findings));
    assert.equal(gptOss.report.contextWindow, 131_072);
    const hermes = await diagnose(await startEngine({ profile: 'vllm-hermes', toolParser: false, models: ['Qwen/Qwen2.5-Coder-32B-Instruct'] }));
    assert.equal(hermes.code, 1);
    assert.match(hermes.report.worst?.fix ?? '', /vllm serve Qwen\/Qwen2\.5-Coder-32B-Instruct --enable-auto-tool-choice --tool-call-parser hermes/);
  });

  it('a model that does not think on Ollama: reasoning_effort refused is a warning with what the bridge does, exit 0', async () => {
    const backend = await startEngine({ profile: 'ollama', models: ['qwen2.5-coder:32b'], supportsThinking: false, contextWindow: 32_768 });
    const { code, report } = await diagnose(backend);
    assert.equal(code, 0);
    const effort = report.findings.find((entry) => entry.check === 'Reasoning effort');
    assert.equal(effort?.severity, 'warning');
    assert.match(effort?.summary ?? '', /refused \(HTTP 400: .*does not support thinking/);
    assert.match(effort?.bridge ?? '', /offers Codex reasoning levels only for models the engine marks as reasoning models/);
  });

  it('Ollama with a small context: /api/ps reports it once the probes loaded the model; FAIL with OLLAMA_CONTEXT_LENGTH', async () => {
    const backend = await startEngine({ profile: 'ollama', models: ['qwen3-coder:30b'], contextWindow: 4096 });
    const { code, report } = await diagnose(backend);
    assert.equal(code, 1);
    assert.equal(report.engine, 'ollama');
    assert.equal(report.version, '0.12.6');
    assert.equal(report.contextWindow, 4096);
    assert.equal(report.contextWindowSource, 'api/ps context_length');
    const context = report.findings.find((entry) => entry.check === 'Context');
    assert.equal(context?.severity, 'error');
    assert.match(context?.fix ?? '', /OLLAMA_CONTEXT_LENGTH=32768 ollama serve/);
    assert.match(context?.bridge ?? '', /state 4096 tokens/);
  });

  it('Ollama with a model that has no tools capability: FAIL from /api/show before any generation', async () => {
    const backend = await startEngine({ profile: 'ollama', models: ['gemma2:9b'], supportsTools: false });
    const { code, report } = await diagnose(backend, ['--quick']);
    assert.equal(code, 1);
    assert.equal(severityOf(report, 'Tool template'), 'error');
    assert.match(report.worst?.summary ?? '', /does not support tools/);
  });

  it('LM Studio: the loaded context from /api/v1/models; llama.cpp: the running context from /props', async () => {
    const lmStudio = await diagnose(await startEngine({ profile: 'lmstudio', contextWindow: 16_384 }));
    assert.equal(lmStudio.report.engine, 'lmstudio');
    assert.equal(lmStudio.report.contextWindow, 16_384);
    assert.equal(severityOf(lmStudio.report, 'Context'), 'warning');
    assert.equal(lmStudio.code, 0);
    const llamaCpp = await diagnose(await startEngine({ profile: 'llamacpp', contextWindow: 32_768 }));
    assert.equal(llamaCpp.report.engine, 'llamacpp');
    assert.equal(llamaCpp.report.version, 'b1-de3ff81');
    assert.equal(llamaCpp.report.contextWindowSource, 'props default_generation_settings.n_ctx');
    assert.equal(llamaCpp.code, 0);
  });

  it('an unreachable backend: FAIL saying so, exit 1; the built CLI says the same', async () => {
    const backend = await startEngine({ profile: 'vllm-hermes' });
    const url = backend.url;
    await backend.close();
    const { code, report } = await diagnose({ ...backend, url });
    assert.equal(code, 1);
    assert.match(report.worst?.summary ?? '', /nothing answers at .*ECONNREFUSED/);
    const cli = spawnSync(process.execPath, ['dist/cli.js', 'doctor', '--backend', url, '--quick'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(cli.status, 1, cli.stderr);
    assert.match(cli.stdout, /FAIL {2}Backend {2}nothing answers at/);
  });
});

describe('the backend API key, with no backend named', { timeout: 60_000 }, () => {
  const KEY = 'sk-doctor-secret-0123456789';
  const env = { ENGINE_KEY: KEY };

  /** Whatever holds an engine's usual port: one that wants a key (401 to everything), one that is a working engine. */
  async function startPortHolders(): Promise<{ locked: Awaited<ReturnType<typeof startScriptedBackend>>; open: MockBackend; candidatePorts: DoctorCommandIo['candidatePorts'] }> {
    const locked = await startScriptedBackend();
    closers.push(() => locked.close());
    locked.setHandlers((response) => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end('{"error":{"message":"Invalid API key","type":"invalid_request_error"}}');
    });
    const open = await startEngine({ profile: 'vllm-hermes' });
    const portOf = (url: string): number => Number(new URL(url).port);
    return { locked, open, candidatePorts: [{ engine: 'lmstudio', port: portOf(locked.url) }, { engine: 'vllm', port: portOf(open.url) }] };
  }

  it('the engines found on the usual ports are checked without the key; the one that wants a key is named with the command that checks it', async () => {
    const { locked, open, candidatePorts } = await startPortHolders();
    const { stdout, stderr } = await runDoctor(['--backend-api-key-env', 'ENGINE_KEY'], { env, candidatePorts });
    assert.ok(locked.requests.length > 0 && open.requests.length > 0, 'both port holders were asked');
    const keyed = [...locked.requests.map((request) => request.headers), ...open.requests.map((request) => request.headers)].filter((headers) => JSON.stringify(headers).includes(KEY));
    assert.equal(keyed.length, 0, JSON.stringify(keyed));
    assert.match(stdout, /wants an API key/);
    assert.ok(stderr.includes(`${locked.url} needs an API key; run with --backend ${locked.url} --backend-api-key-env ENGINE_KEY to check it with yours`), stderr);
  });

  it('a backend named with --backend is sent the key', async () => {
    const { locked } = await startPortHolders();
    await runDoctor(['--backend', locked.url, '--backend-api-key-env', 'ENGINE_KEY', '--quick'], { env });
    assert.ok(locked.requests.length > 0);
    for (const request of locked.requests) assert.equal(request.headers.authorization, `Bearer ${KEY}`);
  });
});

describe('serve\'s start-up check', () => {
  it('one line: info when the engine looks right, a warning naming the cause when it does not, and no generation', async () => {
    const { reportBackendAtStart } = await import('../../../src/cli/doctor-command.ts');
    const lines: string[] = [];
    const record = (level: string) => (message: string): void => {
      lines.push(`${level}: ${message}`);
    };
    const logger = { error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') };
    const good = await startEngine({ profile: 'vllm-hermes' });
    await reportBackendAtStart({ backendUrl: good.url, apiKey: null, model: null, logger });
    const small = await startEngine({ profile: 'llamacpp', contextWindow: 4096 });
    await reportBackendAtStart({ backendUrl: small.url, apiKey: null, model: null, logger });
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(lines[0] ?? '', /^info: backend vLLM 0\.20\.0 at .*, model 'Qwen\/Qwen3-Coder-30B-A3B-Instruct', context 32768 tokens: looks right$/);
    assert.match(lines[1] ?? '', /^warn: backend llama\.cpp llama-server .*: Context: 4096 tokens .*; fix: restart llama-server with a longer context: .*-c 32768 \(details: freeform-bridge doctor --backend /);
    for (const backend of [good, small]) assert.equal(backend.requests.filter((request) => request.method === 'POST').length, 0);
  });
});
