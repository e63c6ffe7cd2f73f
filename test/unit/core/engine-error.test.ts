import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { classifyEngineRefusal, isContextOverflow, readEngineErrorEnvelope, readEngineErrorText, type EngineError } from '../../../src/core/engine-error.ts';
import { fixturePath } from '../../support/fixtures.ts';

const examplesFolder = fixturePath('backend-examples');

/** A recorded error body, read as the bridge reads every engine's error body. */
function readExample(file: string): EngineError {
  return readEngineErrorText(readFileSync(path.join(examplesFolder, file), 'utf8'));
}

describe('readEngineErrorText and readEngineErrorEnvelope', () => {
  it('reads every engine envelope, a flat message or detail, a JSON string and plain text', () => {
    assert.deepEqual(readEngineErrorText('{"error":{"message":"bad tool","type":"BadRequestError","code":400}}'), { message: 'bad tool', type: 'BadRequestError' });
    assert.deepEqual(readEngineErrorText('{"error":"model is loading"}'), { message: 'model is loading', type: null });
    assert.deepEqual(readEngineErrorText('{"object":"error","message":"named tool missing","type":"BadRequestError"}'), { message: 'named tool missing', type: 'BadRequestError' });
    assert.deepEqual(readEngineErrorText('{"message":"old vLLM"}'), { message: 'old vLLM', type: null });
    assert.deepEqual(readEngineErrorText('{"detail":"Not Found"}'), { message: 'Not Found', type: null });
    assert.deepEqual(readEngineErrorText('"quoted"'), { message: 'quoted', type: null });
    assert.deepEqual(readEngineErrorText('  Bad Gateway\n'), { message: 'Bad Gateway', type: null });
    assert.deepEqual(readEngineErrorText(''), { message: '(empty body)', type: null });
    const long = readEngineErrorText('x'.repeat(5000)).message;
    assert.match(long, /^x{2000}… \(3000 more characters\)$/);
  });

  it('takes a stream frame for an error only when it carries an error envelope', () => {
    assert.deepEqual(readEngineErrorEnvelope({ error: { message: 'engine died', type: 'InternalServerError' } }), { message: 'engine died', type: 'InternalServerError' });
    assert.deepEqual(readEngineErrorEnvelope({ error: { code: 500 } }), { message: '{"code":500}', type: null });
    assert.deepEqual(readEngineErrorEnvelope({ object: 'error', message: 'flat' }), { message: 'flat', type: null });
    assert.equal(readEngineErrorEnvelope({ object: 'chat.completion.chunk', message: 'not an error', choices: [] }), null);
    assert.equal(readEngineErrorEnvelope({ error: null, choices: [] }), null);
    assert.equal(readEngineErrorEnvelope('text'), null);
  });
});

describe('classifyEngineRefusal', () => {
  const context = { backendUrl: 'http://127.0.0.1:8000/v1', model: 'qwen', retryAfter: null };

  it('names each kind of refusal, with what the user should change, and no HTTP status of its own', () => {
    const overflow = classifyEngineRefusal(400, readFileSync(path.join(examplesFolder, 'vllm-error-context-length.json'), 'utf8'), context);
    assert.equal(overflow.kind, 'context_overflow');
    assert.match(overflow.message, /context window is exceeded \(backend at http:\/\/127\.0\.0\.1:8000\/v1\)/);
    assert.equal(classifyEngineRefusal(401, '{"error":"bad key"}', context).kind, 'unauthorized');
    assert.match(classifyEngineRefusal(403, 'nope', context).message, /Set Backend API Key/);
    const withoutV1 = classifyEngineRefusal(404, '{"detail":"Not Found"}', { ...context, backendUrl: 'http://127.0.0.1:8000' });
    assert.equal(withoutV1.kind, 'url_without_v1');
    assert.match(withoutV1.message, /e\.g\. http:\/\/127\.0\.0\.1:8000\/v1/);
    assert.equal(classifyEngineRefusal(404, '{"detail":"Not Found"}', context).kind, 'model_not_found');
    assert.deepEqual(classifyEngineRefusal(429, 'slow down', { ...context, retryAfter: '7' }), { kind: 'rate_limited', message: 'backend at http://127.0.0.1:8000/v1 is rate limiting (HTTP 429): slow down', retryAfter: '7' });
    assert.equal(classifyEngineRefusal(422, '{"detail":"bad field"}', context).kind, 'rejected');
    assert.deepEqual(classifyEngineRefusal(502, 'Bad Gateway', context), { kind: 'unavailable', message: 'backend unavailable (HTTP 502 from http://127.0.0.1:8000/v1): Bad Gateway', retryAfter: null });
  });

  it('takes an engine failure whose cause is permanent for a rejection, with the hint', () => {
    const noJinja = classifyEngineRefusal(500, readFileSync(path.join(examplesFolder, 'llamacpp-error-no-jinja.json'), 'utf8'), context);
    assert.equal(noJinja.kind, 'rejected');
    assert.match(noJinja.message, /hint: start llama-server with --jinja/);
  });
});

describe('isContextOverflow', () => {
  it('recognises every vLLM wording', () => {
    for (const text of [
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
      "'max_tokens' or 'max_completion_tokens' is too large: 2000. This model's maximum context length is 4096 tokens and your request has 3000 input tokens (2000 > 4096 - 3000).",
      "You passed 4000 input tokens and requested 1000 output tokens. However, the model's context length is only 4096 tokens, resulting in a maximum input length of 3096 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=4000)",
    ]) {
      assert.equal(isContextOverflow({ message: text, type: 'BadRequestError' }), true, text);
    }
    for (const file of ['vllm-error-context-length.json', 'vllm-0.10-error-context-length.json']) {
      const { message, type } = readExample(file);
      assert.equal(isContextOverflow({ message, type }), true, file);
    }
  });

  it('recognises both SGLang wordings', () => {
    assert.equal(isContextOverflow({ message: "The input (40000 tokens) is longer than the model's context length (32768 tokens).", type: null }), true);
    assert.equal(
      isContextOverflow({
        message:
          "Requested token count exceeds the model's maximum context length of 32768 tokens. You requested a total of 40000 tokens: 39000 tokens from the input messages and 1000 tokens for the completion. Please reduce …",
        type: null,
      }),
      true,
    );
  });

  it('recognises llama.cpp by type and by both wordings', () => {
    const { message, type } = readExample('llamacpp-error-context.json');
    assert.equal(isContextOverflow({ message, type }), true);
    assert.equal(isContextOverflow({ message: 'context window full', type: 'exceed_context_size_error' }), true);
    assert.equal(
      isContextOverflow({ message: 'the request exceeds the available context size. try increasing the context size or enable context shift', type: 'invalid_request_error' }),
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
      assert.equal(isContextOverflow({ message, type }), false, file);
    }
    assert.equal(isContextOverflow({ message: 'Internal server error', type: null }), false);
    assert.equal(isContextOverflow({ message: '', type: 'invalid_request_error' }), false);
  });
});
