import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from '../../../src/core/logger.ts';
import { DEFAULT_CATALOG_CONTEXT_WINDOW } from '../../../src/core/defaults.ts';
import { findFreePort, startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { startMockBackend, type EngineProfile, type MockBackend } from '../../../mock-backend/create-mock-backend.ts';

/**
 * `GET /v1/codex/models`: the catalog Codex fetches through a provider's `model_catalog_url`, built
 * from each engine's own answers (the mock backend serves them in each engine's shape).
 */

type CatalogEntry = Record<string, unknown> & { slug: string };

function createRecordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const record = (level: string) => (message: string) => {
    lines.push(`${level}: ${message}`);
  };
  return { lines, error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') };
}

const TOKEN = 'catalog-test-token';
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function startPair(profile: EngineProfile, options: { models?: string[]; modelOverride?: string; supportsThinking?: boolean; engineEndpoints?: boolean } = {}): Promise<{ backend: MockBackend; bridge: StartedBridge; logger: ReturnType<typeof createRecordingLogger> }> {
  const backend = await startMockBackend({ profile, models: options.models, supportsThinking: options.supportsThinking, engineEndpoints: options.engineEndpoints });
  closers.push(() => backend.close());
  const logger = createRecordingLogger();
  const bridge = await startTestBridge({ backendUrl: backend.url, getToken: () => TOKEN, logger, options: { modelOverride: options.modelOverride ?? null } });
  closers.push(() => bridge.close());
  return { backend, bridge, logger };
}

async function fetchCatalog(bridge: StartedBridge, query = '?tool_surface=freeform&client_version=0.171.0', token: string | null = TOKEN): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${bridge.url}/v1/codex/models${query}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function entries(body: Record<string, unknown>): CatalogEntry[] {
  return body.models as CatalogEntry[];
}

describe('GET /v1/codex/models', () => {
  it('vLLM: one entry per served model, its max_model_len, text only, no effort levels, free-form apply_patch', async () => {
    const { backend, bridge } = await startPair('vllm-hermes', { models: ['Qwen/Qwen3-Coder-30B', 'other-model'] });
    const { status, body } = await fetchCatalog(bridge);
    assert.equal(status, 200);
    assert.deepEqual(entries(body).map((entry) => entry.slug), ['Qwen/Qwen3-Coder-30B', 'other-model']);
    const entry = entries(body)[0]!;
    assert.equal(entry.context_window, 32_768);
    assert.deepEqual(entry.input_modalities, ['text']);
    assert.deepEqual(entry.supported_reasoning_levels, []);
    assert.equal(entry.apply_patch_tool_type, 'freeform');
    assert.equal(entry.tool_mode, undefined);
    assert.match(String(entry.description), /Context window 32768 tokens \(from the backend's max_model_len\)/);
    // /v1/models stays the OpenAI list for other clients.
    const openAiList = (await (await fetch(`${bridge.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { data: unknown[] };
    assert.equal(openAiList.data.length, 2);
    // vLLM's /v1/models names the engine (owned_by "vllm"): only its own /version is asked beside it.
    assert.deepEqual(backend.requests.map((request) => `${request.method} ${request.path}`), ['GET /v1/models', 'GET /version', 'GET /v1/models']);
  });

  it('each tool surface: code mode, functions (no apply_patch), and a clear 400 for an unknown one', async () => {
    const { bridge } = await startPair('vllm-hermes');
    const codeMode = entries((await fetchCatalog(bridge, '?tool_surface=code-mode')).body)[0]!;
    assert.equal(codeMode.tool_mode, 'code_mode_only');
    assert.equal(codeMode.use_responses_lite, true);
    assert.equal(codeMode.apply_patch_tool_type, 'freeform');
    const functions = entries((await fetchCatalog(bridge, '?tool_surface=functions')).body)[0]!;
    assert.equal('apply_patch_tool_type' in functions, false);
    assert.equal(functions.context_window, 32_768);
    const byDefault = entries((await fetchCatalog(bridge, '')).body)[0]!;
    assert.equal(byDefault.apply_patch_tool_type, 'freeform');
    const unknown = await fetchCatalog(bridge, '?tool_surface=lark');
    assert.equal(unknown.status, 400);
    assert.match((unknown.body.error as { message: string }).message, /tool_surface must be one of functions, freeform, code-mode, got "lark"/);
  });

  it('needs the bridge token when one is set', async () => {
    const { bridge } = await startPair('vllm-hermes');
    assert.equal((await fetchCatalog(bridge, '?tool_surface=freeform', null)).status, 401);
    assert.equal((await fetchCatalog(bridge, '?tool_surface=freeform', 'wrong')).status, 401);
    assert.equal((await fetchCatalog(bridge)).status, 200);
  });

  it('llama.cpp: the running context from /props (not n_ctx_train) and its vision and effort flags', async () => {
    const { backend, bridge } = await startPair('llamacpp');
    const entry = entries((await fetchCatalog(bridge)).body)[0]!;
    // /v1/models says n_ctx_train 262144; the server runs with 8192.
    assert.equal(entry.context_window, 8_192);
    assert.match(String(entry.description), /props default_generation_settings\.n_ctx/);
    assert.deepEqual(entry.input_modalities, ['text']);
    assert.deepEqual(entry.supported_reasoning_levels, []);
    assert.ok(backend.requests.some((request) => request.method === 'GET' && request.path === '/props'));
  });

  it('Ollama: num_ctx from /api/show, and effort levels only for a model that thinks', async () => {
    const thinking = await startPair('ollama', { models: ['qwen3:8b'] });
    const entry = entries((await fetchCatalog(thinking.bridge)).body)[0]!;
    // The training context (model_info) is 40960; num_ctx is what the model runs with.
    assert.equal(entry.context_window, 32_768);
    assert.match(String(entry.description), /api\/show parameters\.num_ctx/);
    assert.deepEqual(
      (entry.supported_reasoning_levels as Array<{ effort: string }>).map((level) => level.effort),
      ['low', 'medium', 'high'],
    );
    assert.equal(entry.default_reasoning_level, 'medium');
    const showRequest = thinking.backend.requests.find((request) => request.path === '/api/show');
    assert.deepEqual(showRequest?.body ?? JSON.parse(showRequest?.rawBody ?? 'null'), { model: 'qwen3:8b' });

    const plain = await startPair('ollama', { models: ['llama3.2:3b'], supportsThinking: false });
    assert.deepEqual(entries((await fetchCatalog(plain.bridge)).body)[0]!.supported_reasoning_levels, []);
  });

  it('LM Studio: the context the model was loaded with, from its own /api/v1/models', async () => {
    const { bridge } = await startPair('lmstudio');
    const entry = entries((await fetchCatalog(bridge)).body)[0]!;
    assert.equal(entry.context_window, 32_768);
    assert.match(String(entry.description), /api\/v1\/models loaded_instances\[\]\.config\.context_length/);
  });

  it('a backend that reports no context window gets the stated default, said once in the log', async () => {
    const { bridge, logger } = await startPair('lmstudio', { engineEndpoints: false });
    const entry = entries((await fetchCatalog(bridge)).body)[0]!;
    assert.equal(entry.context_window, DEFAULT_CATALOG_CONTEXT_WINDOW);
    assert.match(String(entry.description), new RegExp(`not reported by the backend; Freeform Bridge assumes ${DEFAULT_CATALOG_CONTEXT_WINDOW}`));
    await fetchCatalog(bridge);
    assert.equal(logger.lines.filter((line) => line.includes('reports no context window')).length, 1, logger.lines.join('\n'));
  });

  it('the configured --model is the only entry, with the facts of that backend model', async () => {
    const { bridge } = await startPair('vllm-hermes', { models: ['served-a', 'served-b'], modelOverride: 'served-b' });
    assert.deepEqual(entries((await fetchCatalog(bridge)).body).map((entry) => [entry.slug, entry.context_window]), [['served-b', 32_768]]);
  });

  it('a backend that goes down: the last good catalog; never up: a 503 that the log and the panel show', async () => {
    const { backend, bridge, logger } = await startPair('vllm-hermes');
    const good = await fetchCatalog(bridge);
    await backend.close();
    const stale = await fetchCatalog(bridge);
    assert.equal(stale.status, 200);
    assert.deepEqual(stale.body, good.body);
    assert.ok(logger.lines.some((line) => /^warn: Codex model catalog: the backend did not answer \(GET .* failed: ECONNREFUSED\); serving the catalog built from its answer at /.test(line)), logger.lines.join('\n'));

    const closedPort = await findFreePort();
    const neverUpLogger = createRecordingLogger();
    const neverUp = await startTestBridge({ backendUrl: `http://127.0.0.1:${closedPort}/v1`, getToken: () => TOKEN, logger: neverUpLogger });
    closers.push(() => neverUp.close());
    const failed = await fetchCatalog(neverUp);
    assert.equal(failed.status, 503);
    const error = failed.body.error as { message: string; code: string };
    assert.equal(error.code, 'model_catalog_unavailable');
    assert.match(error.message, new RegExp(`cannot build Codex's model catalog: GET http://127\\.0\\.0\\.1:${closedPort}/v1/models failed: ECONNREFUSED`));
    assert.ok(neverUpLogger.lines.some((line) => line.startsWith('error: Codex model catalog: ') && line.includes('ECONNREFUSED')));
    const rejected = neverUp.traffic.filter((event) => event.type === 'exchange-rejected');
    assert.equal(rejected.length, 1);
    assert.deepEqual(rejected[0]!.type === 'exchange-rejected' ? [rejected[0]!.httpStatus, rejected[0]!.error.code] : null, [503, 'model_catalog_unavailable']);
  });
});
