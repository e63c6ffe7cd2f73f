import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseLlamaCppProps, parseOllamaShow } from '../../../src/server/backend-models.ts';
import { renderLiveModelCatalog, DEFAULT_CATALOG_CONTEXT_WINDOW } from '../../../src/core/codex-config/render-live-model-catalog.ts';
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
    assert.deepEqual(parseOllamaShow(text), { contextWindow: 16384, contextWindowSource: 'api/show parameters.num_ctx', acceptsImages: true, takesReasoningEffort: false });
  });

  it('falls back to the architecture\'s context_length and names it', () => {
    const text = show({ model_info: { 'general.architecture': 'qwen3', 'qwen3.context_length': 40960 }, capabilities: ['completion', 'tools', 'thinking'] });
    assert.deepEqual(parseOllamaShow(text), { contextWindow: 40960, contextWindowSource: 'api/show model_info.qwen3.context_length', acceptsImages: false, takesReasoningEffort: true });
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
