import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchBackendModels } from '../../../src/server/backend-models.ts';
import { parseLlamaCppProps, parseOllamaShow } from '../../../src/core/doctor/model-list.ts';
import { DEFAULT_CATALOG_CONTEXT_WINDOW } from '../../../src/core/defaults.ts';
import { InvalidRequestError, UpstreamConnectionError, UpstreamHttpError } from '../../../src/core/errors.ts';
import { renderLiveModelCatalog } from '../../../src/core/model-catalog/render-live-model-catalog.ts';
import { fixturePath } from '../../support/fixtures.ts';

describe('parseLlamaCppProps', () => {
  it('reads the running context, vision and the effort flag from a real llama-server /props answer', () => {
    const body = readFileSync(fixturePath('llama-server', 'wire', 'hermes', 'GET_props.body'), 'utf8');
    assert.deepEqual(parseLlamaCppProps(body), { contextWindow: 4096, acceptsImages: false, takesReasoningEffort: false });
  });

  it('says nothing it was not told', () => {
    assert.deepEqual(parseLlamaCppProps('{"default_generation_settings":{"n_ctx":0}}'), { contextWindow: null, acceptsImages: null, takesReasoningEffort: null });
    assert.deepEqual(parseLlamaCppProps('<html>'), { contextWindow: null, acceptsImages: null, takesReasoningEffort: null });
  });
});

describe('parseOllamaShow', () => {
  const show = (fields: Record<string, unknown>): string => JSON.stringify({ modelfile: '#', template: '{{ .Prompt }}', ...fields });

  it('prefers num_ctx from parameters over the training context, and reads vision and thinking', () => {
    const text = show({
      parameters: 'stop                           "<|im_end|>"\nnum_ctx                        16384',
      model_info: { 'general.architecture': 'qwen2.5vl', 'qwen2.5vl.context_length': 128000 },
      capabilities: ['completion', 'vision', 'tools'],
    });
    assert.deepEqual(parseOllamaShow(text), { contextWindow: 16384, contextWindowSource: 'api/show parameters.num_ctx', acceptsImages: true, takesReasoningEffort: false, supportsTools: true });
  });

  it('falls back to the architecture\'s context_length and names it', () => {
    const text = show({ model_info: { 'general.architecture': 'qwen3', 'qwen3.context_length': 40960 }, capabilities: ['completion', 'tools', 'thinking'] });
    assert.deepEqual(parseOllamaShow(text), { contextWindow: 40960, contextWindowSource: 'api/show model_info.qwen3.context_length', acceptsImages: false, takesReasoningEffort: true, supportsTools: true });
  });

  it('is null for an answer that is not Ollama\'s', () => {
    assert.equal(parseOllamaShow('{"error":"not found"}'), null);
    assert.equal(parseOllamaShow('not json'), null);
  });
});

describe('renderLiveModelCatalog', () => {
  const facts = { id: 'm', contextWindow: null, contextWindowSource: null, acceptsImages: true, takesReasoningEffort: true };

  it('image input and effort levels only when the backend said so, and none when the bridge drops the effort', () => {
    const entry = (JSON.parse(renderLiveModelCatalog({ models: [facts], toolSurface: 'freeform', modelOverride: null, dropsReasoningEffort: false }).text) as { models: Array<Record<string, unknown>> }).models[0]!;
    assert.deepEqual(entry.input_modalities, ['text', 'image']);
    assert.deepEqual((entry.supported_reasoning_levels as Array<{ effort: string }>).map((level) => level.effort), ['low', 'medium', 'high']);
    assert.equal(entry.context_window, DEFAULT_CATALOG_CONTEXT_WINDOW);
    const dropped = (JSON.parse(renderLiveModelCatalog({ models: [facts], toolSurface: 'freeform', modelOverride: null, dropsReasoningEffort: true }).text) as { models: Array<Record<string, unknown>> }).models[0]!;
    assert.deepEqual(dropped.supported_reasoning_levels, []);
    assert.equal('default_reasoning_level' in dropped, false);
  });

  it('an override names a model the backend does not list: the first model\'s facts, and a note for the guessed window', () => {
    const catalog = renderLiveModelCatalog({ models: [{ ...facts, acceptsImages: false }], toolSurface: 'code-mode', modelOverride: 'alias', dropsReasoningEffort: false });
    const entries = (JSON.parse(catalog.text) as { models: Array<Record<string, unknown>> }).models;
    assert.deepEqual(entries.map((entry) => [entry.slug, entry.tool_mode, entry.input_modalities]), [['alias', 'code_mode_only', ['text']]]);
    assert.deepEqual(catalog.notes, [`the backend reports no context window for 'alias'; the catalog says ${DEFAULT_CATALOG_CONTEXT_WINDOW} tokens`]);
  });

  it('an empty backend list is an empty catalog', () => {
    assert.deepEqual(JSON.parse(renderLiveModelCatalog({ models: [], toolSurface: 'freeform', modelOverride: null, dropsReasoningEffort: false }).text), { models: [] });
  });
});

describe('fetchBackendModels', () => {
  let server: Server;
  let baseUrl: string;
  const seenAuthorization: Array<string | undefined> = [];
  const bodies: Record<string, { status: number; body: string }> = {
    '/vllm/v1/models': { status: 200, body: JSON.stringify({ object: 'list', data: [{ id: 'Qwen/Qwen3-Coder', object: 'model', owned_by: 'vllm', max_model_len: 32768 }] }) },
    '/llamacpp/v1/models': {
      status: 200,
      body: JSON.stringify({ models: [{ name: 'x' }], object: 'list', data: [{ id: 'qwen.gguf', object: 'model', meta: { n_ctx_train: 262144, n_vocab: 151936 } }] }),
    },
    '/lmstudio/v1/models': { status: 200, body: JSON.stringify({ data: [{ id: 'qwen3', max_context_length: 131072, loaded_context_length: 8192 }] }) },
    '/ollama/v1/models': { status: 200, body: JSON.stringify({ object: 'list', data: [{ id: 'qwen3:8b', object: 'model', created: 1, owned_by: 'library' }] }) },
    '/denied/v1/models': { status: 401, body: JSON.stringify({ error: { message: 'bad token' } }) },
    '/html/v1/models': { status: 200, body: '<html>hello</html>' },
    // Past the cap on a model list: the check must not hold it whole.
    '/huge/v1/models': { status: 200, body: `{"data":[{"id":"${'x'.repeat(9 * 1024 * 1024)}"}]}` },
  };
  before(async () => {
    server = createServer((request, response) => {
      seenAuthorization.push(request.headers.authorization);
      const answer = bodies[request.url ?? ''] ?? { status: 404, body: '{}' };
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads the context window each engine reports', async () => {
    assert.deepEqual(await fetchBackendModels(`${baseUrl}/vllm/v1`, 'k'), [{ id: 'Qwen/Qwen3-Coder', contextWindow: 32768, contextWindowSource: 'max_model_len' }]);
    assert.equal(seenAuthorization.at(-1), 'Bearer k');
    assert.deepEqual(await fetchBackendModels(`${baseUrl}/llamacpp/v1/`), [{ id: 'qwen.gguf', contextWindow: 262144, contextWindowSource: 'meta.n_ctx_train' }]);
    assert.equal(seenAuthorization.at(-1), undefined);
    assert.deepEqual(await fetchBackendModels(`${baseUrl}/lmstudio/v1`), [{ id: 'qwen3', contextWindow: 8192, contextWindowSource: 'loaded_context_length' }]);
    assert.deepEqual(await fetchBackendModels(`${baseUrl}/ollama/v1`), [{ id: 'qwen3:8b', contextWindow: null, contextWindowSource: null }]);
  });

  it('refuses a model list past its cap, naming it, without reading the rest', async () => {
    await assert.rejects(fetchBackendModels(`${baseUrl}/huge/v1`), (error: unknown) => UpstreamConnectionError.is(error) && /answer is larger than 8388608 bytes/.test(error.code));
  });

  it('throws typed errors for HTTP errors, non-lists and unreachable servers', async () => {
    await assert.rejects(fetchBackendModels(`${baseUrl}/denied/v1`), (error: unknown) => UpstreamHttpError.is(error) && error.status === 401);
    await assert.rejects(fetchBackendModels(`${baseUrl}/html/v1`), (error: unknown) => InvalidRequestError.is(error) && /not return an OpenAI model list/.test(error.message));
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await assert.rejects(fetchBackendModels(`http://127.0.0.1:${closedPort}/v1`), (error: unknown) => UpstreamConnectionError.is(error) && error.code === 'ECONNREFUSED');
  });
});
