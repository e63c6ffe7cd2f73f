import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isContextOverflowMessage } from '../../../src/core/map-upstream-error.ts';
import { isPlainObject, parseJson } from '../../../src/core/parse-json.ts';
import { fixturePath } from '../../support/fixtures.ts';

const examplesFolder = fixturePath('backend-examples');

/** The `{message, type}` of a recorded error body, nested or flat. */
function readExample(file: string): { message: string; type: string | null } {
  const parsed = parseJson(readFileSync(path.join(examplesFolder, file), 'utf8'));
  assert.ok(parsed.success && isPlainObject(parsed.value), file);
  const envelope = isPlainObject(parsed.value.error) ? parsed.value.error : parsed.value;
  const message = typeof envelope.message === 'string' ? envelope.message : String(envelope.error);
  return { message, type: typeof envelope.type === 'string' ? envelope.type : null };
}

describe('isContextOverflowMessage', () => {
  it('recognises every vLLM wording', () => {
    for (const text of [
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
      "'max_tokens' or 'max_completion_tokens' is too large: 2000. This model's maximum context length is 4096 tokens and your request has 3000 input tokens (2000 > 4096 - 3000).",
      "You passed 4000 input tokens and requested 1000 output tokens. However, the model's context length is only 4096 tokens, resulting in a maximum input length of 3096 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=4000)",
    ]) {
      assert.equal(isContextOverflowMessage(text, 'BadRequestError'), true, text);
    }
    for (const file of ['vllm-error-context-length.json', 'vllm-0.10-error-context-length.json']) {
      const { message, type } = readExample(file);
      assert.equal(isContextOverflowMessage(message, type), true, file);
    }
  });

  it('recognises both SGLang wordings', () => {
    assert.equal(isContextOverflowMessage("The input (40000 tokens) is longer than the model's context length (32768 tokens).", null), true);
    assert.equal(
      isContextOverflowMessage(
        "Requested token count exceeds the model's maximum context length of 32768 tokens. You requested a total of 40000 tokens: 39000 tokens from the input messages and 1000 tokens for the completion. Please reduce …",
      ),
      true,
    );
  });

  it('recognises llama.cpp by type and by both wordings', () => {
    const { message, type } = readExample('llamacpp-error-context.json');
    assert.equal(isContextOverflowMessage(message, type), true);
    assert.equal(isContextOverflowMessage('context window full', 'exceed_context_size_error'), true);
    assert.equal(
      isContextOverflowMessage(
        'the request exceeds the available context size. try increasing the context size or enable context shift',
        'invalid_request_error',
      ),
      true,
    );
  });

  it('does not flag other errors', () => {
    for (const file of [
      'vllm-error-engine-dead.json',
      'vllm-error-custom-tool.json',
      'vllm-error-model-not-found.json',
      'sglang-error-named-tool-missing.json',
      'llamacpp-error-no-jinja.json',
      'ollama-error-busy.json',
      'lmstudio-error-tool-parameters.json',
    ]) {
      const { message, type } = readExample(file);
      assert.equal(isContextOverflowMessage(message, type), false, file);
    }
    assert.equal(isContextOverflowMessage('Internal server error'), false);
    assert.equal(isContextOverflowMessage('', 'invalid_request_error'), false);
  });
});
