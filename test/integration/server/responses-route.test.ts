import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMockBackend, type MockBackend } from '../../../mock-backend/create-mock-backend.ts';
import { assertCodexAcceptsStream } from '../../support/codex-stream-oracle.ts';
import {
  itemsDone,
  postResponses,
  readCapture,
  readFixtureText,
  readSseEvents,
  startTestBridge,
  terminalEvent,
  type StartedBridge,
  findFreePort,
} from '../../support/bridge-harness.ts';

const TRICKY_INPUT = readFixtureText('backend-examples/tricky-input.txt');
/** XML-style parsers (qwen3_coder, SGLang, Ollama) drop exactly one trailing newline. */
const TRICKY_INPUT_XML_TRIMMED = TRICKY_INPUT.replace(/\n$/, '');

const FREEFORM_REQUEST = readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json');
const CODE_MODE_REQUEST = readCapture('c_code_mode_only_additional_tools_gpt-6-sol_v0.171.req1.json');
const DEFAULT_REQUEST = readCapture('a_default_qwen3-coder_v0.171.req1.json');

describe('POST /v1/responses against a vLLM qwen3_coder backend', () => {
  let backend: MockBackend;
  let bridge: StartedBridge;
  before(async () => {
    backend = await startMockBackend({ profile: 'vllm-qwen3coder' });
    bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 1 });
  });
  after(async () => {
    await bridge.close();
    await backend.close();
  });

  it('streams a text answer that Codex accepts', async () => {
    backend.enqueue({ text: 'Hello from the mock.' });
    const exchange = await readSseEvents(await postResponses(bridge.url, DEFAULT_REQUEST));
    assert.equal(exchange.status, 200);
    assert.match(exchange.headers.get('content-type') ?? '', /^text\/event-stream/);
    assertCodexAcceptsStream(exchange.events);
    const [message] = itemsDone(exchange.events);
    assert.deepEqual((message as { content: unknown[] }).content, [{ type: 'output_text', text: 'Hello from the mock.', annotations: [] }]);
    assert.equal(terminalEvent(exchange.events).type, 'response.completed');

    const sent = backend.requests.at(-1);
    assert.ok(sent);
    assert.equal(sent.validationError, null, 'the lowered request must pass vLLM validation');
    const body = sent.body as { stream: boolean; stream_options: unknown; tools: Array<{ type: string }> };
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.ok(body.tools.every((tool) => tool.type === 'function'));
  });

  it('lifts a bridged apply_patch call back into a custom_tool_call with the payload intact', async () => {
    backend.enqueue({ toolCalls: [{ name: 'apply_patch', input: TRICKY_INPUT }] });
    const exchange = await readSseEvents(await postResponses(bridge.url, FREEFORM_REQUEST));
    assertCodexAcceptsStream(exchange.events);
    const [call] = itemsDone(exchange.events);
    assert.equal(call?.type, 'custom_tool_call');
    assert.equal(call?.name, 'apply_patch');
    assert.equal(call?.input, TRICKY_INPUT_XML_TRIMMED);
    const deltas = exchange.events
      .filter((event) => event.type === 'response.custom_tool_call_input.delta')
      .map((event) => event.delta)
      .join('');
    assert.equal(deltas, TRICKY_INPUT_XML_TRIMMED, 'input deltas concatenate to the delivered input');
    const sentTools = (backend.requests.at(-1)?.body as { tools: Array<{ function: { name: string; parameters: unknown } }> }).tools;
    const applyPatch = sentTools.find((tool) => tool.function.name === 'apply_patch');
    assert.deepEqual(applyPatch?.function.parameters, {
      type: 'object',
      properties: { input: { type: 'string', description: 'Raw free-form input for the `apply_patch` tool.' } },
      required: ['input'],
      additionalProperties: false,
    });
  });

  it('lifts code mode exec with its namespace restored', async () => {
    backend.enqueue({ toolCalls: [{ name: 'functions__exec', input: 'const r = await tools.exec_command({cmd: "ls"});\ntext(r);' }] });
    const exchange = await readSseEvents(await postResponses(bridge.url, CODE_MODE_REQUEST));
    assertCodexAcceptsStream(exchange.events);
    const [call] = itemsDone(exchange.events);
    assert.equal(call?.type, 'custom_tool_call');
    assert.equal(call?.name, 'exec');
    assert.equal(call?.namespace, 'functions');
    assert.equal(call?.input, 'const r = await tools.exec_command({cmd: "ls"});\ntext(r);');
  });

  it('sends response.in_progress keepalives while the backend is silent', async () => {
    backend.enqueue({ text: 'late answer', delayBeforeFirstByteMs: 2600 });
    const exchange = await readSseEvents(await postResponses(bridge.url, DEFAULT_REQUEST));
    assertCodexAcceptsStream(exchange.events);
    const firstItem = exchange.events.findIndex((event) => event.type === 'response.output_item.added');
    const keepalives = exchange.events.slice(0, firstItem).filter((event) => event.type === 'response.in_progress');
    // One in_progress belongs to the start of the stream; at least two more come from the 1 s keepalive.
    assert.ok(keepalives.length >= 3, `expected ≥3 in_progress events before the first item, got ${keepalives.length}`);
  });

  it('answers stream:false with one Response object', async () => {
    backend.enqueue({ toolCalls: [{ name: 'apply_patch', input: '*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n' }] });
    const response = await postResponses(bridge.url, { ...FREEFORM_REQUEST, stream: false });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    const body = (await response.json()) as { id: string; status: string; output: Array<Record<string, unknown>>; usage: Record<string, unknown> };
    assert.equal(body.status, 'completed');
    assert.match(body.id, /^resp_/);
    assert.equal(body.output[0]?.type, 'custom_tool_call');
    assert.equal(body.output[0]?.input, '*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch');
    assert.equal(typeof body.usage.input_tokens, 'number');
  });

  it('aborts the backend request as soon as Codex disconnects', async () => {
    backend.enqueue({ text: 'never read', delayBeforeFirstByteMs: 5000 });
    const before = backend.requests.length;
    const controller = new AbortController();
    const response = await postResponses(bridge.url, DEFAULT_REQUEST, { signal: controller.signal });
    assert.equal(response.status, 200);
    await backend.waitForRequests(before + 1);
    controller.abort();
    const deadline = Date.now() + 3000;
    while (!backend.requests[before]?.aborted && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(backend.requests[before]?.aborted, true, 'the backend saw the abort');
  });

  it('accepts a 20 MB request', async () => {
    backend.enqueue({ text: 'big ok' });
    const filler = 'x'.repeat(1024 * 1024);
    const input = [...(DEFAULT_REQUEST.input as unknown[])];
    for (let index = 0; index < 20; index++) input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: filler }] });
    const exchange = await readSseEvents(await postResponses(bridge.url, { ...DEFAULT_REQUEST, input }));
    assert.equal(exchange.status, 200);
    assert.equal(terminalEvent(exchange.events).type, 'response.completed');
    assert.ok(backend.requests.at(-1)!.rawBody.length > 20 * 1024 * 1024);
  });

  it('refuses a body over 64 MB with 413 and a clear message', async () => {
    const response = await postResponses(bridge.url, `{"model":"m","input":"${'y'.repeat(65 * 1024 * 1024)}"}`);
    assert.equal(response.status, 413);
    const body = (await response.json()) as { error: { message: string } };
    assert.match(body.error.message, /64 MB/);
  });
});

describe('error mapping for Codex', () => {
  let backend: MockBackend;
  let bridge: StartedBridge;
  before(async () => {
    backend = await startMockBackend({ profile: 'vllm-hermes' });
    bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 1 });
  });
  after(async () => {
    await bridge.close();
    await backend.close();
  });

  async function errorOf(response: Response): Promise<{ status: number; retryAfter: string | null; error: { message: string; code: string | null; type: string } }> {
    const body = (await response.json()) as { error: { message: string; code: string | null; type: string } };
    return { status: response.status, retryAfter: response.headers.get('retry-after'), error: body.error };
  }

  it('turns a backend context overflow into context_length_exceeded', async () => {
    backend.enqueue({ status: 400, errorBody: JSON.parse(readFixtureText('backend-examples/vllm-error-context-length.json')) });
    const result = await errorOf(await postResponses(bridge.url, DEFAULT_REQUEST));
    assert.equal(result.status, 400);
    assert.equal(result.error.code, 'context_length_exceeded');
    assert.match(result.error.message, /maximum context length/);
  });

  it('passes a backend 400 through as a readable 400 with a hint', async () => {
    backend.enqueue({ status: 400, errorBody: JSON.parse(readFixtureText('backend-examples/vllm-error-auto-tool-choice-disabled.json')) });
    const result = await errorOf(await postResponses(bridge.url, DEFAULT_REQUEST));
    assert.equal(result.status, 400);
    assert.match(result.error.message, /backend rejected the request \(HTTP 400/);
    assert.match(result.error.message, /--enable-auto-tool-choice/);
  });

  it('answers a backend 429 with 429 and Retry-After', async () => {
    backend.enqueue({ status: 429, errorBody: { error: { message: 'slow down', type: 'rate_limit', param: null, code: 429 } } });
    const result = await errorOf(await postResponses(bridge.url, DEFAULT_REQUEST));
    assert.equal(result.status, 429);
    assert.equal(result.retryAfter, '2');
  });

  it('answers an overloaded backend with 503, never 500', async () => {
    backend.enqueue({ status: 503, errorBody: JSON.parse(readFixtureText('backend-examples/ollama-error-busy.json')) });
    const busy = await errorOf(await postResponses(bridge.url, DEFAULT_REQUEST));
    assert.equal(busy.status, 503);
    assert.match(busy.error.message, /server busy/);
    backend.enqueue({ status: 500, errorBody: JSON.parse(readFixtureText('backend-examples/vllm-error-engine-dead.json')) });
    const dead = await errorOf(await postResponses(bridge.url, DEFAULT_REQUEST));
    assert.equal(dead.status, 503);
    assert.match(dead.error.message, /EngineCore/);
  });

  it('names the model and URL on a backend 404', async () => {
    backend.enqueue({ status: 404, errorBody: JSON.parse(readFixtureText('backend-examples/vllm-error-model-not-found.json')) });
    const result = await errorOf(await postResponses(bridge.url, DEFAULT_REQUEST));
    assert.equal(result.status, 400);
    assert.match(result.error.message, /qwen3-coder/);
    assert.ok(result.error.message.includes(backend.url));
  });

  it('ends a stream that fails mid-way with response.failed', async () => {
    backend.enqueue({ text: 'Partial', midStreamError: 'vllm' });
    const exchange = await readSseEvents(await postResponses(bridge.url, DEFAULT_REQUEST));
    assertCodexAcceptsStream(exchange.events, { expectedTerminal: 'response.failed' });
    const terminal = terminalEvent(exchange.events);
    assert.equal(terminal.type, 'response.failed');
    assert.match(JSON.stringify(terminal), /Internal server error/);
    assert.equal(exchange.events.filter((event) => event.type === 'response.completed').length, 0);
  });

  it('ends a socket cut with response.failed', async () => {
    backend.enqueue({ text: 'cut here', midStreamError: 'socket-cut' });
    const exchange = await readSseEvents(await postResponses(bridge.url, DEFAULT_REQUEST));
    assert.equal(terminalEvent(exchange.events).type, 'response.failed');
  });

  it('answers 400 naming the tool when a function and a custom tool share a name', async () => {
    const before = backend.requests.length;
    const body = {
      model: 'm',
      input: 'hi',
      tools: [
        { type: 'function', name: 'apply_patch', parameters: { type: 'object', properties: {} } },
        { type: 'custom', name: 'apply_patch', description: 'x' },
      ],
    };
    const result = await errorOf(await postResponses(bridge.url, body));
    assert.equal(result.status, 400);
    assert.equal(result.error.code, 'tool_name_collision');
    assert.match(result.error.message, /apply_patch/);
    assert.equal(backend.requests.length, before, 'no backend call');
  });

  it('answers malformed JSON and a wrong content type with specific 4xx errors', async () => {
    const malformed = await errorOf(await postResponses(bridge.url, '{"model": '));
    assert.equal(malformed.status, 400);
    assert.match(malformed.error.message, /not valid JSON/);
    const wrongType = await errorOf(
      await fetch(`${bridge.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' }),
    );
    assert.equal(wrongType.status, 415);
    assert.match(wrongType.error.message, /application\/json/);
  });

  it('reports an unreachable backend as 503 naming the URL', async () => {
    const port = await findFreePort();
    const lonely = await startTestBridge({ backendUrl: `http://127.0.0.1:${port}/v1` });
    try {
      const result = await errorOf(await postResponses(lonely.url, DEFAULT_REQUEST));
      assert.equal(result.status, 503);
      assert.match(result.error.message, new RegExp(`backend unreachable at http://127\\.0\\.0\\.1:${port}/v1/chat/completions: ECONNREFUSED`));
    } finally {
      await lonely.close();
    }
  });
});

describe('access control', () => {
  let backend: MockBackend;
  let bridge: StartedBridge;
  const token = 'test-token-0123456789';
  const apiKey = 'sk-backend-secret-abcdef';
  before(async () => {
    backend = await startMockBackend({ profile: 'vllm-hermes' });
    bridge = await startTestBridge({ backendUrl: backend.url, getToken: () => token, getBackendApiKey: () => apiKey });
  });
  after(async () => {
    await bridge.close();
    await backend.close();
  });

  it('requires the bearer token', async () => {
    assert.equal((await postResponses(bridge.url, DEFAULT_REQUEST)).status, 401);
    assert.equal((await postResponses(bridge.url, DEFAULT_REQUEST, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    backend.enqueue({ text: 'ok' });
    const response = await postResponses(bridge.url, DEFAULT_REQUEST, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.status, 200);
    await readSseEvents(response);
    assert.equal(backend.requests.at(-1)?.headers.authorization, `Bearer ${apiKey}`, 'the backend key is sent upstream');
  });

  it('refuses browser origins, CORS preflights and foreign Host headers', async () => {
    const withOrigin = await postResponses(bridge.url, DEFAULT_REQUEST, { headers: { authorization: `Bearer ${token}`, origin: 'https://evil.example' } });
    assert.equal(withOrigin.status, 403);
    const preflight = await fetch(`${bridge.url}/v1/responses`, { method: 'OPTIONS' });
    assert.equal(preflight.status, 403);
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const outgoing = request(`${bridge.url}/healthz`, { headers: { host: 'attacker.example:80' } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
    assert.equal(status, 403);
  });

  it('serves /healthz and proxies /v1/models', async () => {
    const health = await fetch(`${bridge.url}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { status: string }).status, 'ok');
    const models = await fetch(`${bridge.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(models.status, 200);
    const list = (await models.json()) as { data: Array<{ id: string }> };
    assert.ok(Array.isArray(list.data) && list.data.length > 0);
  });

  it('never echoes the backend key in errors or traffic', async () => {
    backend.enqueue({ status: 400, errorBody: { error: { message: `bad key ${apiKey}`, type: 'BadRequestError', param: null, code: 400 } } });
    const response = await postResponses(bridge.url, DEFAULT_REQUEST, { headers: { authorization: `Bearer ${token}` } });
    const text = await response.text();
    assert.equal(response.status, 400);
    assert.ok(!text.includes(apiKey), text);
    assert.ok(!JSON.stringify(bridge.traffic).includes(apiKey));
  });
});

for (const profile of ['ollama', 'llamacpp', 'sglang', 'vllm-hermes'] as const) {
  describe(`custom and parallel calls through the ${profile} profile`, () => {
    let backend: MockBackend;
    let bridge: StartedBridge;
    before(async () => {
      backend = await startMockBackend({ profile });
      bridge = await startTestBridge({ backendUrl: backend.url });
    });
    after(async () => {
      await bridge.close();
      await backend.close();
    });

    it('delivers a custom call next to a namespaced function call', async () => {
      const request = readCapture('c_enable_code_mode_qwen3-coder_v0.171.req1.json');
      backend.enqueue({
        toolCalls: [
          { name: 'exec', input: 'text("hi — ✓ \\"quoted\\"")\n' },
          { name: 'multi_agent_v1__close_agent', arguments: { target: 'agent-1' } },
        ],
      });
      const exchange = await readSseEvents(await postResponses(bridge.url, request));
      assertCodexAcceptsStream(exchange.events);
      const items = itemsDone(exchange.events);
      const custom = items.find((item) => item.type === 'custom_tool_call');
      const functionCall = items.find((item) => item.type === 'function_call');
      assert.equal(custom?.name, 'exec');
      // The mock plays a Qwen3-Coder model behind these engines: their XML parsers drop one trailing
      // newline; only the JSON-style hermes parser keeps the payload whole.
      const expected = profile === 'vllm-hermes' ? 'text("hi — ✓ \\"quoted\\"")\n' : 'text("hi — ✓ \\"quoted\\"")';
      assert.equal(custom?.input, expected);
      assert.equal(functionCall?.name, 'close_agent');
      assert.equal(functionCall?.namespace, 'multi_agent_v1');
      assert.deepEqual(JSON.parse(String(functionCall?.arguments)), { target: 'agent-1' });
      assert.notEqual(custom?.call_id, functionCall?.call_id);
    });
  });
}
