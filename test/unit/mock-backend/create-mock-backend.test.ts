import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockBackend, type EngineProfile, type MockBackend, type MockBackendOptions, type MockTurn } from '../../../mock-backend/create-mock-backend.ts';
import { normalizeVolatileFields, readSseChunks } from '../../../mock-backend/read-sse-frames.ts';
import { fixturePath } from '../../support/fixtures.ts';

const examplesFolder = fixturePath('backend-examples');
const trickyInput = readFileSync(`${examplesFolder}/tricky-input.txt`, 'utf8');
const matrix = JSON.parse(readFileSync(`${examplesFolder}/arguments-matrix.json`, 'utf8')) as Record<string, string>;
const referenceModel = 'Qwen/Qwen3-Coder-30B-A3B-Instruct';
const applyPatchTool = {
  type: 'function',
  function: { name: 'apply_patch', parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] } },
};
const customApplyPatch = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Use the `apply_patch` tool to edit files.',
  format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/s' },
};

function readExampleText(name: string): string {
  return readFileSync(`${examplesFolder}/${name}`, 'utf8');
}

const openBackends: MockBackend[] = [];
after(async () => {
  await Promise.all(openBackends.map((backend) => backend.close()));
});

async function openBackend(options: MockBackendOptions, ...turns: MockTurn[]): Promise<MockBackend> {
  const backend = await startMockBackend(options);
  openBackends.push(backend);
  backend.enqueue(...turns);
  return backend;
}

function postChat(backend: MockBackend, body: Record<string, unknown>, init: { signal?: AbortSignal; contentType?: string } = {}): Promise<Response> {
  return fetch(`${backend.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': init.contentType ?? 'application/json' },
    body: JSON.stringify({ model: referenceModel, messages: [{ role: 'user', content: 'fix greet.py' }], ...body }),
    signal: init.signal,
  });
}

describe('non-stream bodies match the reference files (ids and timestamps aside)', () => {
  const cases: Array<{ file: string; profile: EngineProfile; turn: MockTurn; body?: Record<string, unknown> }> = [
    { file: 'vllm-nonstream-text.json', profile: 'vllm-hermes', turn: { text: 'Hello!', usage: { prompt_tokens: 31, completion_tokens: 3 } } },
    { file: 'vllm-0.10-nonstream-text.json', profile: 'vllm-0.10', turn: { text: 'Hello!', usage: { prompt_tokens: 31, completion_tokens: 3 } } },
    {
      file: 'vllm-nonstream-toolcall-hermes.json',
      profile: 'vllm-hermes',
      turn: { reasoning: 'The user wants a greeting fix.', toolCalls: [{ name: 'apply_patch', input: trickyInput }], usage: { prompt_tokens: 812, completion_tokens: 171 } },
    },
    {
      file: 'vllm-nonstream-toolcall-qwen3coder.json',
      profile: 'vllm-qwen3coder',
      turn: { text: "I'll apply the fix.", toolCalls: [{ name: 'apply_patch', input: trickyInput }], usage: { prompt_tokens: 905, completion_tokens: 188 } },
    },
    {
      file: 'vllm-nonstream-toolcall-gptoss.json',
      profile: 'vllm-gptoss',
      turn: { reasoning: 'Need to edit greet.py.', toolCalls: [{ name: 'apply_patch', input: trickyInput }], usage: { prompt_tokens: 1203, completion_tokens: 96 } },
    },
    {
      file: 'sglang-nonstream-toolcall.json',
      profile: 'sglang',
      turn: { text: "I'll apply the fix.", toolCalls: [{ name: 'apply_patch', input: trickyInput }], usage: { prompt_tokens: 905, completion_tokens: 188 } },
    },
    {
      file: 'ollama-nonstream-toolcall.json',
      profile: 'ollama',
      turn: { toolCalls: [{ name: 'apply_patch', input: trickyInput }], usage: { prompt_tokens: 905, completion_tokens: 188 } },
      body: { model: 'qwen3-coder:30b' },
    },
  ];
  for (const testCase of cases) {
    it(`${testCase.profile}: ${testCase.file}`, async () => {
      const backend = await openBackend({ profile: testCase.profile }, testCase.turn);
      const response = await postChat(backend, { tools: [applyPatchTool], ...testCase.body });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(normalizeVolatileFields(await response.text()), normalizeVolatileFields(readExampleText(testCase.file)));
    });
  }

  it('llama.cpp: compact raw arguments, content "" next to calls, timings', async () => {
    const backend = await openBackend({ profile: 'llamacpp' }, { toolCalls: [{ name: 'apply_patch', input: trickyInput }] });
    const body = (await (await postChat(backend, { tools: [applyPatchTool] })).json()) as {
      id: string;
      choices: Array<{ message: { content: unknown; tool_calls: Array<{ id: string; function: { arguments: string } }> }; finish_reason: string }>;
      timings: unknown;
    };
    assert.match(body.id, /^chatcmpl-[A-Za-z0-9]{32}$/);
    assert.equal(body.choices[0]?.message.content, '');
    assert.equal(body.choices[0]?.message.tool_calls[0]?.function.arguments, matrix.llamacpp_compact);
    assert.match(body.choices[0]?.message.tool_calls[0]?.id ?? '', /^[A-Za-z0-9]{32}$/);
    assert.equal(body.choices[0]?.finish_reason, 'tool_calls');
    assert.ok(body.timings !== undefined);
  });

  it('vLLM hermes: invalid JSON arguments come back as raw content with no call; named choice gives content ""', async () => {
    const backend = await openBackend(
      { profile: 'vllm-hermes' },
      { toolCalls: [{ name: 'apply_patch', arguments: '{"input": "*** Begin Patch\n"}' }] },
      { toolCalls: [{ name: 'apply_patch', input: 'x' }] },
    );
    const broken = (await (await postChat(backend, { tools: [applyPatchTool] })).json()) as {
      choices: Array<{ message: { content: string; tool_calls: unknown[] }; finish_reason: string }>;
    };
    assert.deepEqual(broken.choices[0]?.message.tool_calls, []);
    assert.match(broken.choices[0]?.message.content ?? '', /^<tool_call>\n\{"name": "apply_patch", "arguments": \{"input": "\*\*\* Begin Patch\n"\}\}\n<\/tool_call>$/);
    assert.equal(broken.choices[0]?.finish_reason, 'stop');
    const named = (await (await postChat(backend, { tools: [applyPatchTool], tool_choice: { type: 'function', function: { name: 'apply_patch' } } })).json()) as {
      choices: Array<{ message: { content: string }; finish_reason: string }>;
    };
    assert.equal(named.choices[0]?.message.content, '');
    assert.equal(named.choices[0]?.finish_reason, 'stop');
  });

  it('XML parsers coerce the input text "null" to JSON null', async () => {
    const backend = await openBackend({ profile: 'vllm-qwen3coder' }, { toolCalls: [{ name: 'apply_patch', input: '\nnull\n' }] });
    const body = (await (await postChat(backend, { tools: [applyPatchTool] })).json()) as {
      choices: Array<{ message: { tool_calls: Array<{ function: { arguments: string } }> } }>;
    };
    assert.equal(body.choices[0]?.message.tool_calls[0]?.function.arguments, '{"input": null}');
  });
});

describe('validation over HTTP', () => {
  it('custom tools: vLLM 400, SGLang 400 flat, llama.cpp 500, Ollama accepts', async () => {
    const expectations: Array<[EngineProfile, number, string | null]> = [
      ['vllm-hermes', 400, 'vllm-error-custom-tool.json'],
      ['sglang', 400, 'sglang-error-custom-tool.json'],
      ['llamacpp', 500, 'llamacpp-error-custom-tool.json'],
      ['ollama', 200, null],
    ];
    for (const [profile, status, file] of expectations) {
      const backend = await openBackend({ profile });
      const response = await postChat(backend, { tools: [customApplyPatch] });
      assert.equal(response.status, status, profile);
      const text = await response.text();
      if (file !== null) assert.equal(text, readExampleText(file), profile);
      assert.equal(backend.requests[0]?.validationError?.status ?? 200, status, profile);
    }
  });

  it('records the validation error, and a rejected request consumes no turn', async () => {
    const backend = await openBackend({ profile: 'vllm-hermes', toolParser: false }, { text: 'scripted' });
    const rejected = await postChat(backend, { tools: [applyPatchTool] });
    assert.equal(rejected.status, 400);
    assert.equal(await rejected.text(), readExampleText('vllm-error-auto-tool-choice-disabled.json'));
    assert.deepEqual(backend.requests[0]?.validationError, {
      status: 400,
      message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    });
    const accepted = (await (await postChat(backend, {})).json()) as { choices: Array<{ message: { content: string } }> };
    assert.equal(accepted.choices[0]?.message.content, 'scripted');
  });

  it('vLLM refuses a non-JSON content type', async () => {
    const backend = await openBackend({ profile: 'vllm-qwen3coder' });
    const response = await postChat(backend, {}, { contentType: 'text/plain' });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { message: string; code: number } };
    assert.equal(body.error.message, "Unsupported Media Type: Only 'application/json' is allowed");
  });

  it('unknown model: vLLM 404 with param "model", Ollama 404 with a trailing newline, llama.cpp ignores it', async () => {
    const vllm = await openBackend({ profile: 'vllm-hermes', models: [referenceModel] });
    const vllmResponse = await postChat(vllm, { model: 'gpt-5-codex' });
    assert.equal(vllmResponse.status, 404);
    assert.equal(await vllmResponse.text(), readExampleText('vllm-error-model-not-found.json'));

    const ollama = await openBackend({ profile: 'ollama', models: ['qwen3-coder:30b'] });
    const ollamaResponse = await postChat(ollama, { model: 'gpt-5-codex' });
    assert.equal(ollamaResponse.status, 404);
    assert.equal(await ollamaResponse.text(), readExampleText('ollama-error-model-not-found.json'));

    const llamacpp = await openBackend({ profile: 'llamacpp', models: ['local.gguf'] });
    assert.equal((await postChat(llamacpp, { model: 'gpt-5-codex' })).status, 200);
  });

  it('stream:true still gets a JSON error before any event', async () => {
    const backend = await openBackend({ profile: 'vllm-hermes' });
    const response = await postChat(backend, { stream: true, tools: [] });
    assert.equal(response.status, 400);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  });

  it('validate:false lets anything through', async () => {
    const backend = await openBackend({ profile: 'vllm-hermes', validate: false });
    assert.equal((await postChat(backend, { tools: [customApplyPatch] })).status, 200);
  });
});

describe('failure injection', () => {
  it('context length in each profile wording', async () => {
    const cases: Array<[EngineProfile, MockTurn, string]> = [
      ['vllm-hermes', { failure: 'context-length', usage: { prompt_tokens: 1, completion_tokens: 0 } }, 'vllm-error-context-length.json'],
      ['vllm-0.10', { failure: 'context-length', usage: { prompt_tokens: 39197, completion_tokens: 0 } }, 'vllm-0.10-error-context-length.json'],
      ['llamacpp', { failure: 'context-length', usage: { prompt_tokens: 13392, completion_tokens: 0 } }, 'llamacpp-error-context.json'],
    ];
    for (const [profile, turn, file] of cases) {
      const backend = await openBackend({ profile }, turn);
      const response = await postChat(backend, { max_tokens: 4096, stream: true });
      assert.equal(response.status, 400, profile);
      assert.equal(await response.text(), readExampleText(file), profile);
    }
    const sglang = await openBackend({ profile: 'sglang' }, { failure: 'context-length' });
    const sglangBody = (await (await postChat(sglang, {})).json()) as { object: string; message: string };
    assert.equal(sglangBody.object, 'error');
    assert.match(sglangBody.message, /is longer than the model's context length/);
  });

  it('Ollama never reports context overflow: it answers with fewer prompt tokens', async () => {
    const backend = await openBackend({ profile: 'ollama' }, { failure: 'context-length', text: 'ok' });
    const response = await postChat(backend, { model: 'qwen3-coder:30b', messages: [{ role: 'user', content: 'x'.repeat(4000) }] });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { usage: { prompt_tokens: number } };
    assert.ok(body.usage.prompt_tokens < 1000, String(body.usage.prompt_tokens));
  });

  it('an automatic context check when contextWindow is set', async () => {
    const backend = await openBackend({ profile: 'vllm-hermes', contextWindow: 100 });
    const response = await postChat(backend, { max_tokens: 90 });
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { error: { message: string } }).error.message, /maximum context length is 100 tokens/);
  });

  it('overload: Ollama busy 503, vLLM string error, llama.cpp loading', async () => {
    const ollama = await openBackend({ profile: 'ollama' }, { failure: 'overloaded' });
    const ollamaResponse = await postChat(ollama, { model: 'qwen3-coder:30b' });
    assert.equal(ollamaResponse.status, 503);
    assert.equal(await ollamaResponse.text(), readExampleText('ollama-error-busy.json'));
    const vllm = await openBackend({ profile: 'vllm-hermes' }, { failure: 'overloaded' });
    const vllmResponse = await postChat(vllm, {});
    assert.equal(vllmResponse.status, 503);
    assert.deepEqual(await vllmResponse.json(), { error: 'The model is currently scaling. Please try again later.' });
    const llamacpp = await openBackend({ profile: 'llamacpp' }, { failure: 'overloaded' });
    const llamacppResponse = await postChat(llamacpp, {});
    assert.equal(llamacppResponse.status, 503);
    assert.deepEqual(await llamacppResponse.json(), { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } });
  });

  it('dead vLLM engine: 500, then connection refused', async () => {
    const backend = await openBackend({ profile: 'vllm-hermes' }, { failure: 'engine-dead' });
    const response = await postChat(backend, {});
    assert.equal(response.status, 500);
    assert.equal(await response.text(), readExampleText('vllm-error-engine-dead.json'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await assert.rejects(postChat(backend, {}));
  });

  it('explicit status, errorBody and headers', async () => {
    const backend = await openBackend(
      { profile: 'vllm-hermes' },
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 502, errorBody: 'upstream gone' },
    );
    const first = await postChat(backend, {});
    assert.equal(first.status, 429);
    assert.equal(first.headers.get('retry-after'), '1');
    assert.deepEqual(await first.json(), { error: { message: 'mock failure (HTTP 429)', type: 'BadRequestError', param: null, code: 429 } });
    const second = await postChat(backend, {});
    assert.equal(second.status, 502);
    assert.equal(await second.text(), 'upstream gone');
  });
});

describe('transport behaviour', () => {
  it('records a client disconnect as aborted and stops writing', async () => {
    const backend = await openBackend({ profile: 'vllm-hermes' }, { text: Array.from({ length: 50 }, (_, index) => `w${index} `), delayBetweenChunksMs: 20 });
    const controller = new AbortController();
    const response = await postChat(backend, { stream: true }, { signal: controller.signal });
    const reader = response.body?.getReader();
    await reader?.read();
    controller.abort();
    await reader?.cancel().catch(() => undefined);
    const deadline = Date.now() + 2000;
    while (backend.requests[0]?.aborted !== true && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(backend.requests[0]?.aborted, true);
    // The server survives and answers the next request normally.
    assert.equal((await postChat(backend, {})).status, 200);
    assert.equal(backend.requests[1]?.aborted, false);
  });

  it('sends stream headers at once, then stays silent for delayBeforeFirstByteMs', async () => {
    const backend = await openBackend({ profile: 'vllm-hermes' }, { text: 'hi', delayBeforeFirstByteMs: 400 });
    const startedAt = Date.now();
    const response = await postChat(backend, { stream: true });
    const headersAt = Date.now();
    const reader = response.body?.getReader();
    const first = await reader?.read();
    const firstByteAt = Date.now();
    assert.ok(first !== undefined && first.done === false);
    assert.ok(firstByteAt - startedAt >= 380, `first byte after ${firstByteAt - startedAt} ms`);
    assert.ok(firstByteAt - headersAt >= 200, `headers ${headersAt - startedAt} ms, first byte ${firstByteAt - startedAt} ms`);
    assert.ok(new TextDecoder().decode(first.value).startsWith('data: {'), 'the gap carries no comments or keep-alives');
    await reader?.cancel();
  });

  it('non-stream: nothing, not even headers, before the body is ready', async () => {
    const backend = await openBackend({ profile: 'ollama' }, { text: 'hi', delayBeforeFirstByteMs: 300 });
    const startedAt = Date.now();
    const response = await postChat(backend, { model: 'qwen3-coder:30b' });
    assert.ok(Date.now() - startedAt >= 280);
    assert.equal(response.status, 200);
    assert.ok((await response.text()).endsWith('}\n'));
  });

  it('closes idle keep-alive connections after keepAliveTimeoutMs', async () => {
    const backend = await openBackend({ profile: 'vllm-hermes', keepAliveTimeoutMs: 150 });
    const agent = new Agent({ keepAlive: true });
    const socketClosed = await new Promise<number>((resolve, reject) => {
      const outgoing = httpRequest(`${backend.url}/models`, { agent }, (response) => {
        response.resume();
        response.on('end', () => {
          const idleSince = Date.now();
          outgoing.socket?.once('close', () => resolve(Date.now() - idleSince));
        });
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
    agent.destroy();
    assert.ok(socketClosed >= 100 && socketClosed < 2000, `closed after ${socketClosed} ms`);
  });

  it('plays queued turns in order, then the responder, then the default "mock answer"', async () => {
    const backend = await openBackend({ profile: 'vllm-hermes' }, { text: 'one' }, { text: 'two' });
    const contents: unknown[] = [];
    const ask = async (): Promise<void> => {
      const body = (await (await postChat(backend, {})).json()) as { choices: Array<{ message: { content: unknown } }> };
      contents.push(body.choices[0]?.message.content);
    };
    await ask();
    await ask();
    await ask();
    backend.setResponder((request) => ({ text: `echo ${(request.body as { messages: Array<{ content: string }> }).messages[0]?.content}` }));
    await ask();
    assert.deepEqual(contents, ['one', 'two', 'mock answer', 'echo fix greet.py']);
    assert.deepEqual(backend.requests.map((request) => request.id), [1, 2, 3, 4]);
    assert.equal(backend.requests[0]?.path, '/v1/chat/completions');
    assert.equal(backend.requests[0]?.method, 'POST');
    assert.equal(typeof backend.requests[0]?.rawBody, 'string');
  });

  it('waitForRequests resolves on arrival and rejects on timeout', async () => {
    const backend = await openBackend({ profile: 'sglang' });
    const waiting = backend.waitForRequests(1, 2000);
    await postChat(backend, {});
    await waiting;
    await assert.rejects(backend.waitForRequests(5, 50), /expected 5 request\(s\) within 50 ms, got 1/);
  });

  it('serves /v1/models in each engine shape', async () => {
    const profiles: EngineProfile[] = ['vllm-hermes', 'sglang', 'ollama', 'llamacpp', 'lmstudio'];
    for (const profile of profiles) {
      const backend = await openBackend({ profile, models: ['served-model'] });
      const body = (await (await fetch(`${backend.url}/models`)).json()) as { object: string; data: Array<{ id: string; object: string }> };
      assert.equal(body.object, 'list', profile);
      assert.deepEqual(body.data.map((model) => [model.id, model.object]), [['served-model', 'model']], profile);
    }
  });

  it('stream content type and chunked body for every profile', async () => {
    const profiles: EngineProfile[] = ['vllm-hermes', 'vllm-qwen3coder', 'vllm-gptoss', 'vllm-0.10', 'sglang', 'ollama', 'llamacpp', 'lmstudio'];
    for (const profile of profiles) {
      const backend = await openBackend({ profile });
      const response = await postChat(backend, { stream: true });
      // llama-server alone names no charset (its recorded headers).
      assert.equal(response.headers.get('content-type'), profile === 'llamacpp' ? 'text/event-stream' : 'text/event-stream; charset=utf-8', profile);
      const text = await response.text();
      const content = readSseChunks(text)
        .map((chunk) => ((chunk.choices as Array<{ delta?: { content?: string | null } }>)[0]?.delta?.content ?? ''))
        .join('');
      assert.equal(content, 'mock answer', profile);
    }
  });
});

describe('command line', () => {
  it('prints the URL and plays a script file', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'mock-backend-cli-'));
    const scriptPath = join(folder, 'script.json');
    writeFileSync(scriptPath, JSON.stringify([{ text: 'from the script' }]));
    const child = spawn(process.execPath, ['--import', 'tsx', 'mock-backend/cli.ts', '--profile', 'vllm-qwen3coder', '--port', '0', '--script', scriptPath], {
      cwd: join(__dirname, '..', '..', '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString('utf8');
          const match = /mock backend listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n/.exec(output);
          if (match?.[1] !== undefined) resolve(match[1]);
        });
        child.once('exit', (code) => reject(new Error(`cli exited with ${code}`)));
      });
      const response = await fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
      assert.equal(body.choices[0]?.message.content, 'from the script');
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
