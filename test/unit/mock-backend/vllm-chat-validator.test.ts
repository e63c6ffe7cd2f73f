import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  checkChatTransportForProfile,
  validateChatRequestForProfile,
  validateChatRequestForVllm,
} from '../../../mock-backend/vllm-chat-validator.ts';
import { fixturePath } from '../../support/fixtures.ts';

const examplesFolder = fixturePath('backend-examples');

function readExample(name: string): unknown {
  return JSON.parse(readFileSync(`${examplesFolder}/${name}`, 'utf8')) as unknown;
}

function readExampleMessage(name: string): string {
  const example = readExample(name) as { error: { message: string } };
  return example.error.message;
}

/** The custom tool exactly as in the reference error bodies. */
const customApplyPatch = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Use the `apply_patch` tool to edit files.',
  format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/s' },
};
const functionTool = {
  type: 'function',
  function: { name: 'apply_patch', parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] } },
};
const baseRequest = { model: 'Qwen/Qwen3-Coder-30B-A3B-Instruct', messages: [{ role: 'user', content: 'hi' }] };
const namedChoice = { type: 'function', function: { name: 'apply_patch' } };

describe('validateChatRequestForVllm: tools', () => {
  it('rejects a custom tool with the two pydantic errors of vllm-error-custom-tool.json', () => {
    assert.deepEqual(validateChatRequestForVllm({ ...baseRequest, tools: [customApplyPatch] }), {
      status: 400,
      message: readExampleMessage('vllm-error-custom-tool.json'),
    });
  });

  it('answers 500 with the bare KeyError when a named choice meets a tool without `function`', () => {
    assert.deepEqual(validateChatRequestForVllm({ ...baseRequest, tools: [customApplyPatch], tool_choice: namedChoice }), {
      status: 500,
      message: readExampleMessage('vllm-error-named-choice-with-custom-tool.json'),
    });
  });

  it('rejects an empty tools array', () => {
    const failure = validateChatRequestForVllm({ ...baseRequest, tools: [] });
    assert.equal(failure?.status, 400);
    assert.match(failure?.message ?? '', /`tools` must not be an empty array\. Either provide at least one tool or omit the field entirely\./);
  });

  it('accepts function tools with type or parameters omitted, and unknown fields', () => {
    const request = {
      ...baseRequest,
      tools: [functionTool, { function: { name: 'exec_command' } }],
      parallel_tool_calls: true,
      prompt_cache_key: 'anything',
      store: false,
    };
    assert.equal(validateChatRequestForVllm(request), null);
  });

  it('reports a missing function name', () => {
    const failure = validateChatRequestForVllm({ ...baseRequest, tools: [{ type: 'function', function: { description: 'x' } }] });
    assert.equal(failure?.status, 400);
    assert.match(failure?.message ?? '', /'loc': \('body', 'tools', 0, 'function', 'name'\), 'msg': 'Field required'/);
  });
});

describe('validateChatRequestForVllm: tool_choice', () => {
  const withTools = { ...baseRequest, tools: [functionTool] };

  it('accepts none, auto, required and a named function', () => {
    for (const toolChoice of ['none', 'auto', 'required', namedChoice]) {
      assert.equal(validateChatRequestForVllm({ ...withTools, tool_choice: toolChoice }), null, JSON.stringify(toolChoice));
    }
  });

  it('rejects an object without a function object (allowed_tools) with the "Invalid value for `function`" text', () => {
    const failure = validateChatRequestForVllm({ ...withTools, tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] } });
    assert.equal(failure?.status, 400);
    assert.ok(
      failure?.message.includes(
        'Value error, Invalid value for `function`: `None` in `tool_choice`! Correct usage: `{"type": "function", "function": {"name": "my_function"}}`',
      ),
      failure?.message,
    );
  });

  it('rejects an unknown name, an unknown string and a choice without tools', () => {
    const unknownName = validateChatRequestForVllm({ ...withTools, tool_choice: { type: 'function', function: { name: 'shell' } } });
    assert.equal(unknownName?.status, 400);
    assert.match(unknownName?.message ?? '', /The tool specified in `tool_choice` does not match any of the specified `tools`/);

    const unknownString = validateChatRequestForVllm({ ...withTools, tool_choice: 'any' });
    assert.match(unknownString?.message ?? '', /Invalid value for `tool_choice`: any! Only named tools, "none", "auto" or "required" are supported\./);

    const withoutTools = validateChatRequestForVllm({ ...baseRequest, tool_choice: 'auto' });
    assert.equal(withoutTools?.status, 400);
    assert.match(withoutTools?.message ?? '', /When using `tool_choice`, `tools` must be set\./);
  });

  it('rejects a named choice whose type is not "function"', () => {
    const failure = validateChatRequestForVllm({ ...withTools, tool_choice: { type: 'custom', function: { name: 'apply_patch' } } });
    assert.equal(failure?.status, 400);
    assert.match(failure?.message ?? '', /'type': 'literal_error', 'loc': \('body', 'tool_choice', 'ChatCompletionNamedToolChoiceParam', 'type'\)/);
  });

  it('needs a tool parser for auto (also the implicit default) but never for none', () => {
    const expected = { status: 400, message: readExampleMessage('vllm-error-auto-tool-choice-disabled.json') };
    assert.deepEqual(validateChatRequestForVllm(withTools, { toolParser: false }), expected);
    assert.deepEqual(validateChatRequestForVllm({ ...withTools, tool_choice: 'auto' }, { toolParser: false }), expected);
    assert.equal(validateChatRequestForVllm({ ...withTools, tool_choice: 'none' }, { toolParser: false }), null);
    assert.deepEqual(validateChatRequestForVllm({ ...withTools, tool_choice: 'required' }, { toolParser: false }), {
      status: 400,
      message: 'tool_choice="required" requires --tool-call-parser to be set',
    });
  });
});

describe('validateChatRequestForVllm: other fields', () => {
  it('refuses stream_options without stream:true with the exact text of vllm-error-stream-options.json', () => {
    const request = { ...baseRequest, stream: false, stream_options: { include_usage: true } };
    assert.deepEqual(validateChatRequestForVllm(request), { status: 400, message: readExampleMessage('vllm-error-stream-options.json') });
    assert.equal(validateChatRequestForVllm({ ...request, stream: true }), null);
  });

  it('checks reasoning_effort against the allowed set (default: none … max)', () => {
    for (const effort of ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']) {
      assert.equal(validateChatRequestForVllm({ ...baseRequest, reasoning_effort: effort }), null, effort);
    }
    assert.deepEqual(validateChatRequestForVllm({ ...baseRequest, reasoning_effort: 'minimal' }, { reasoningEfforts: ['low', 'medium', 'high'] }), {
      status: 400,
      message: readExampleMessage('vllm-error-reasoning-effort-literal.json'),
    });
    assert.equal(validateChatRequestForVllm({ ...baseRequest, reasoning_effort: 'ultra' })?.status, 400);
  });

  it('refuses chat_template_kwargs for a Mistral tokenizer, including {}', () => {
    const expected = { status: 400, message: readExampleMessage('vllm-error-mistral-chat-template-kwargs.json') };
    assert.deepEqual(validateChatRequestForVllm({ ...baseRequest, chat_template_kwargs: {} }, { mistralTokenizer: true }), expected);
    assert.equal(validateChatRequestForVllm({ ...baseRequest, chat_template_kwargs: null }, { mistralTokenizer: true }), null);
    assert.equal(validateChatRequestForVllm({ ...baseRequest, chat_template_kwargs: { enable_thinking: false } }), null);
  });

  it('requires messages as a list with valid roles', () => {
    assert.match(validateChatRequestForVllm({ model: 'm' })?.message ?? '', /'loc': \('body', 'messages'\), 'msg': 'Field required'/);
    assert.match(validateChatRequestForVllm({ messages: 'hi' })?.message ?? '', /'type': 'list_type'/);
    const badRole = validateChatRequestForVllm({ messages: [{ role: 'robot', content: 'x' }] });
    assert.equal(badRole?.status, 400);
    assert.match(badRole?.message ?? '', /'loc': \('body', 'messages', 0, 'role'\)/);
  });
});

describe('validateChatRequestForVllm: assistant history', () => {
  const historyWith = (toolCall: unknown): unknown => ({
    ...baseRequest,
    messages: [
      { role: 'user', content: 'fix it' },
      { role: 'assistant', content: null, tool_calls: [toolCall] },
      { role: 'tool', tool_call_id: 'call_1', content: 'done' },
    ],
  });

  it('answers a JSONDecodeError text for arguments that are not JSON', () => {
    const failure = validateChatRequestForVllm(historyWith({ id: 'call_1', type: 'function', function: { name: 'apply_patch', arguments: '{"input": "abc' } }));
    assert.deepEqual(failure, { status: 400, message: 'Unterminated string starting at: line 1 column 11 (char 10)' });
    const rawNewline = validateChatRequestForVllm(historyWith({ id: 'call_1', type: 'function', function: { name: 'x', arguments: '{"input": "a\nb"}' } }));
    assert.deepEqual(rawNewline, { status: 400, message: 'Invalid control character at: line 1 column 13 (char 12)' });
    const bareText = validateChatRequestForVllm(historyWith({ id: 'call_1', type: 'function', function: { name: 'x', arguments: '*** Begin Patch' } }));
    assert.deepEqual(bareText, { status: 400, message: 'Expecting value: line 1 column 1 (char 0)' });
  });

  it('accepts JSON, empty and absent arguments', () => {
    for (const argumentsText of ['{"input": "*** Begin Patch\\n"}', '', undefined, '[]']) {
      const toolFunction = argumentsText === undefined ? { name: 'x' } : { name: 'x', arguments: argumentsText };
      assert.equal(validateChatRequestForVllm(historyWith({ id: 'call_1', type: 'function', function: toolFunction })), null, String(argumentsText));
    }
  });

  it('rejects a history tool call whose type is not function', () => {
    const failure = validateChatRequestForVllm(historyWith({ id: 'call_1', type: 'custom', custom: { name: 'apply_patch', input: 'x' } }));
    assert.deepEqual(failure, { status: 400, message: "chat completions only support assistant tool_calls of type 'function'." });
  });
});

describe('validateChatRequestForProfile', () => {
  it('renders the vLLM envelope, the 404 for an unknown model and the harmony effort rules', () => {
    assert.deepEqual(validateChatRequestForProfile('vllm-hermes', { ...baseRequest, tools: [customApplyPatch] })?.body, readExample('vllm-error-custom-tool.json'));
    const notFound = validateChatRequestForProfile('vllm-qwen3coder', { ...baseRequest, model: 'gpt-5-codex' }, { models: ['Qwen/Qwen3-Coder-30B-A3B-Instruct'] });
    assert.equal(notFound?.status, 404);
    assert.deepEqual(notFound?.body, readExample('vllm-error-model-not-found.json'));
    assert.equal(validateChatRequestForProfile('vllm-qwen3coder', { ...baseRequest, model: '' }, { models: ['x'] }), null);
    assert.equal(validateChatRequestForProfile('vllm-gptoss', { ...baseRequest, reasoning_effort: 'none' })?.message, "Harmony does not support reasoning_effort='none'");
    assert.equal(
      validateChatRequestForProfile('vllm-gptoss', { ...baseRequest, reasoning_effort: 'minimal' })?.message,
      "reasoning_effort='minimal' is not supported by Harmony. Supported values are: high, medium, low.",
    );
    // gpt-oss needs no parser flag for auto.
    assert.equal(validateChatRequestForProfile('vllm-gptoss', { ...baseRequest, tools: [functionTool] }, { toolParser: false }), null);
  });

  it('vllm-0.10 allows only low/medium/high and lets required work without a parser', () => {
    assert.deepEqual(validateChatRequestForProfile('vllm-0.10', { ...baseRequest, reasoning_effort: 'minimal' })?.body, readExample('vllm-error-reasoning-effort-literal.json'));
    assert.equal(validateChatRequestForProfile('vllm-0.10', { ...baseRequest, tools: [functionTool], tool_choice: 'required' }, { toolParser: false }), null);
  });

  it('SGLang: flat envelope for a custom tool and an unknown named tool', () => {
    const custom = validateChatRequestForProfile('sglang', { ...baseRequest, tools: [customApplyPatch] });
    assert.equal(custom?.status, 400);
    assert.deepEqual(custom?.body, readExample('sglang-error-custom-tool.json'));
    const named = validateChatRequestForProfile('sglang', { ...baseRequest, tools: [{ type: 'function', function: { name: 'shell' } }], tool_choice: namedChoice });
    assert.deepEqual(named?.body, readExample('sglang-error-named-tool-missing.json'));
    // No parser configured is not an error on SGLang, and unknown model names are not checked.
    assert.equal(validateChatRequestForProfile('sglang', { ...baseRequest, model: 'whatever', tools: [functionTool] }, { toolParser: false }), null);
  });

  it('llama.cpp: 500 for a custom tool, named choice accepted as auto, enable_thinking must be boolean', () => {
    const custom = validateChatRequestForProfile('llamacpp', { ...baseRequest, tools: [customApplyPatch] });
    assert.equal(custom?.status, 500);
    assert.deepEqual(custom?.body, readExample('llamacpp-error-custom-tool.json'));
    assert.equal(validateChatRequestForProfile('llamacpp', { ...baseRequest, tools: [functionTool], tool_choice: { type: 'allowed_tools' } }), null);
    const thinking = validateChatRequestForProfile('llamacpp', { ...baseRequest, chat_template_kwargs: { enable_thinking: 'false' } });
    assert.deepEqual(thinking?.body, {
      error: { code: 400, message: 'invalid type for "enable_thinking" (expected boolean, got string)', type: 'invalid_request_error' },
    });
  });

  it('Ollama: accepts a custom tool silently, 404 for an unknown model, capability and history errors', () => {
    const ollamaRequest = { ...baseRequest, model: 'qwen3-coder:30b' };
    assert.equal(validateChatRequestForProfile('ollama', { ...ollamaRequest, tools: [customApplyPatch], tool_choice: 'bogus' }), null);
    const notFound = validateChatRequestForProfile('ollama', { ...ollamaRequest, model: 'gpt-5-codex' }, { models: ['qwen3-coder:30b'] });
    assert.equal(notFound?.status, 404);
    assert.deepEqual(notFound?.body, readExample('ollama-error-model-not-found.json'));
    const thinking = validateChatRequestForProfile('ollama', { ...ollamaRequest, model: 'llama3.2', reasoning_effort: 'high' }, { supportsThinking: false });
    assert.deepEqual(thinking?.body, readExample('ollama-error-thinking-unsupported.json'));
    const tools = validateChatRequestForProfile('ollama', { ...ollamaRequest, model: 'gemma3:270m', tools: [functionTool] }, { supportsTools: false });
    assert.deepEqual(tools?.body, readExample('ollama-error-tools-unsupported.json'));
    const history = validateChatRequestForProfile('ollama', {
      ...ollamaRequest,
      messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'x', arguments: '*** Begin Patch' } }] }],
    });
    assert.deepEqual(history?.body, readExample('ollama-error-invalid-tool-arguments.json'));
    assert.match(validateChatRequestForProfile('ollama', { ...ollamaRequest, reasoning_effort: 'extreme' })?.message ?? '', /^invalid reasoning value: "extreme"/);
  });

  it('LM Studio: a string error holding pretty-printed zod issues', () => {
    const rejection = validateChatRequestForProfile('lmstudio', {
      ...baseRequest,
      tools: [{ type: 'function', function: { name: 'x', parameters: {} } }],
    });
    assert.deepEqual(rejection?.body, readExample('lmstudio-error-tool-parameters.json'));
  });
});

describe('checkChatTransportForProfile', () => {
  it('vLLM refuses a non-JSON content type; Ollama and llama.cpp parse whatever arrives', () => {
    const raw = JSON.stringify(baseRequest);
    const vllm = checkChatTransportForProfile('vllm-hermes', 'text/plain', raw);
    assert.equal(vllm.rejection?.status, 400);
    assert.equal(vllm.rejection?.message, "Unsupported Media Type: Only 'application/json' is allowed");
    assert.equal(checkChatTransportForProfile('vllm-hermes', 'application/json; charset=utf-8', raw).rejection, null);
    assert.deepEqual(checkChatTransportForProfile('ollama', 'text/plain', raw).body, baseRequest);
    assert.deepEqual(checkChatTransportForProfile('llamacpp', undefined, raw).body, baseRequest);
  });

  it('reports invalid JSON in the profile envelope', () => {
    const vllm = checkChatTransportForProfile('vllm-hermes', 'application/json', '{"model": ');
    assert.equal(vllm.rejection?.status, 400);
    assert.match(vllm.rejection?.message ?? '', /'type': 'json_invalid', 'loc': \('body', 10\)/);
    const sglang = checkChatTransportForProfile('sglang', 'application/json', 'nope');
    assert.equal((sglang.rejection?.body as { object: string }).object, 'error');
  });
});
