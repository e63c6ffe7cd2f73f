import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveBridgeOptions, type BridgeOptions } from '../../../../src/core/bridge-options.ts';
import type { ChatRequest } from '../../../../src/core/chat/chat-completions-api.ts';
import { InvalidRequestError, UnsupportedFeatureError } from '../../../../src/core/errors.ts';
import { convertResponsesRequestToChatRequest, type LoweredRequest } from '../../../../src/core/lower/convert-responses-request-to-chat-request.ts';
import { createWarning, createWarningLedger, type WarningLedger } from '../../../../src/core/warnings.ts';
import { validateChatRequestForVllm } from '../../../../mock-backend/vllm-chat-validator.ts';

function lower(body: unknown, options: Partial<BridgeOptions> = {}, ledger: WarningLedger = createWarningLedger()): LoweredRequest {
  return convertResponsesRequestToChatRequest(body, resolveBridgeOptions(options), ledger);
}

function toolNames(request: ChatRequest): string[] {
  return (request.tools ?? []).map((tool) => (tool.type === 'function' ? tool.function.name : `custom:${tool.custom.name}`));
}

const LARK = 'start: begin_patch hunk+ end_patch';
const applyPatch = { type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: LARK } };
const execCommand = { type: 'function', name: 'exec_command', description: 'Run.', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } } } };
const developer = (text: string) => ({ type: 'message', role: 'developer', content: [{ type: 'input_text', text }] });
const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });

describe('convertResponsesRequestToChatRequest: a whole request', () => {
  it('lowers a minimal request, accepts the fields Codex sends and reports what it did', () => {
    const lowered = lower({
      model: 'qwen3-coder',
      input: 'hello',
      tools: [execCommand],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      stream: false,
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'thread-1',
      client_metadata: { session_id: 'thread-1' },
      metadata: { a: 'b' },
      text: { verbosity: 'low' },
      reasoning: { summary: 'auto', context: 'all_turns' },
      truncation: 'auto',
      service_tier: 'default',
      safety_identifier: 'u',
      a_future_codex_field: true,
    });
    assert.deepStrictEqual(lowered, {
      chatRequest: {
        model: 'qwen3-coder',
        messages: [{ role: 'user', content: 'hello' }],
        tools: [{ type: 'function', function: { name: 'exec_command', description: 'Run.', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } } }],
        tool_choice: 'auto',
        parallel_tool_calls: true,
        stream: true,
        stream_options: { include_usage: true },
      },
      toolMap: new Map([['exec_command', { wireName: 'exec_command', name: 'exec_command', namespace: null, kind: 'function', grammar: null }]]),
      warnings: [],
      summary: {
        model: 'qwen3-coder',
        upstreamModel: 'qwen3-coder',
        inputItems: 1,
        promptCacheKey: 'thread-1',
        tools: [{ name: 'exec_command', namespace: null, kind: 'function', source: 'tools', disposition: 'lowered', wireName: 'exec_command', reason: null }],
        toolChoice: { original: 'auto', sent: 'auto' },
      },
      clientStream: false,
    });
    assert.equal(validateChatRequestForVllm(lowered.chatRequest), null);
  });

  it('answers JSON when the request does not ask for a stream (as the Responses API does), and always streams upstream', () => {
    const lowered = lower({ model: 'm', input: 'x' });
    assert.equal(lowered.clientStream, false);
    assert.equal(lower({ model: 'm', input: 'x', stream: true }).clientStream, true);
    assert.equal(lowered.chatRequest.stream, true);
    assert.deepStrictEqual(lowered.chatRequest.stream_options, { include_usage: true });
  });

  it('omits tools, tool_choice and parallel_tool_calls when no tool remains (vLLM rejects "tools": [])', () => {
    const lowered = lower({ model: 'm', input: 'x', tools: [{ type: 'web_search' }], tool_choice: 'auto', parallel_tool_calls: true });
    assert.deepStrictEqual(lowered.chatRequest, {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.deepStrictEqual(lowered.summary.toolChoice, { original: 'auto', sent: null });
    assert.equal(validateChatRequestForVllm(lowered.chatRequest), null);
  });

  it('uses modelOverride upstream and reports both names', () => {
    const lowered = lower({ model: 'gpt-5.5', input: 'x' }, { modelOverride: 'Qwen/Qwen3-Coder-30B' });
    assert.equal(lowered.chatRequest.model, 'Qwen/Qwen3-Coder-30B');
    assert.deepStrictEqual([lowered.summary.model, lowered.summary.upstreamModel], ['gpt-5.5', 'Qwen/Qwen3-Coder-30B']);
  });
});

describe('convertResponsesRequestToChatRequest: the additional_tools carrier', () => {
  const codeModeCarrier = {
    type: 'additional_tools',
    id: 'at_1',
    role: 'developer',
    tools: [
      {
        type: 'namespace',
        name: 'functions',
        description: '',
        tools: [
          { type: 'custom', name: 'exec', description: 'Run JavaScript.', format: { type: 'grammar', syntax: 'lark', definition: 'start: SOURCE' } },
          { type: 'function', name: 'wait', strict: false, parameters: { type: 'object', properties: {} } },
        ],
      },
    ],
  };

  it('hoists a code-mode carrier: functions__exec bridged (kind custom), functions__wait, carrier gone, developer run folded', () => {
    const lowered = lower({
      model: 'gpt-6-sol',
      input: [codeModeCarrier, developer('BASE'), developer('<skills>'), user('list the files')],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    assert.deepStrictEqual(toolNames(lowered.chatRequest), ['functions__exec', 'functions__wait']);
    assert.deepStrictEqual([...lowered.toolMap.entries()], [
      ['functions__exec', { wireName: 'functions__exec', name: 'exec', namespace: 'functions', kind: 'custom', grammar: { syntax: 'lark', definition: 'start: SOURCE' } }],
      ['functions__wait', { wireName: 'functions__wait', name: 'wait', namespace: 'functions', kind: 'function', grammar: null }],
    ]);
    assert.deepStrictEqual(lowered.chatRequest.messages, [
      { role: 'system', content: 'BASE\n\n<skills>' },
      { role: 'user', content: 'list the files' },
    ]);
    assert.equal(lowered.chatRequest.parallel_tool_calls, false);
    assert.deepStrictEqual(
      lowered.summary.tools.map((tool) => [tool.wireName, tool.source, tool.disposition]),
      [
        ['functions__exec', 'additional_tools', 'bridged'],
        ['functions__wait', 'additional_tools', 'lowered'],
      ],
    );
    assert.equal(lowered.summary.inputItems, 4);
    assert.equal(validateChatRequestForVllm(lowered.chatRequest), null);
  });

  it('accepts the older flat carrier shape', () => {
    const lowered = lower({
      model: 'm',
      input: [{ type: 'additional_tools', tools: [{ type: 'custom', name: 'exec', description: 'Run.' }, { type: 'function', name: 'wait' }] }, user('go')],
    });
    assert.deepStrictEqual(toolNames(lowered.chatRequest), ['exec', 'wait']);
    assert.equal(lowered.toolMap.get('exec')?.kind, 'custom');
    assert.deepStrictEqual(lowered.chatRequest.messages, [{ role: 'user', content: 'go' }]);
  });

  it('appends carrier tools after the top-level tools wherever the carrier sits, and de-duplicates identical ones', () => {
    const lowered = lower({
      model: 'm',
      tools: [execCommand, applyPatch],
      input: [user('a'), { type: 'additional_tools', tools: [applyPatch, { type: 'function', name: 'late_tool' }] }, user('b')],
    });
    assert.deepStrictEqual(toolNames(lowered.chatRequest), ['exec_command', 'apply_patch', 'late_tool']);
    assert.deepStrictEqual(lowered.chatRequest.messages, [
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ]);
  });

  it('bridges a custom apply_patch inside namespace functions of a lite-only carrier and drops tool_search', () => {
    const lowered = lower({
      model: 'm',
      parallel_tool_calls: false,
      input: [
        {
          type: 'additional_tools',
          role: 'developer',
          tools: [
            { type: 'namespace', name: 'functions', description: '', tools: [execCommand, applyPatch] },
            { type: 'tool_search', execution: 'client', description: 'Search tools.', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
          ],
        },
        developer('BASE'),
        user('patch it'),
      ],
    });
    assert.deepStrictEqual(toolNames(lowered.chatRequest), ['functions__exec_command', 'functions__apply_patch']);
    assert.deepStrictEqual(lowered.toolMap.get('functions__apply_patch'), {
      wireName: 'functions__apply_patch',
      name: 'apply_patch',
      namespace: 'functions',
      kind: 'custom',
      grammar: { syntax: 'lark', definition: LARK },
    });
    const bridged = lowered.chatRequest.tools?.[1];
    assert.ok(bridged?.type === 'function');
    assert.deepStrictEqual(bridged.function.parameters.required, ['input']);
    assert.deepStrictEqual(lowered.warnings.map((warning) => [warning.kind, warning.tool]), [
      ['grammar_not_enforced', 'apply_patch'],
      ['hosted_tool_dropped', 'tool_search'],
    ]);
    assert.equal(validateChatRequestForVllm(lowered.chatRequest), null);
  });
});

describe('convertResponsesRequestToChatRequest: once-per-process warnings', () => {
  const body = {
    model: 'gpt-5.5',
    input: 'x',
    tools: [execCommand, applyPatch, { type: 'custom', name: 'notes' }, { type: 'tool_search', execution: 'client' }, { type: 'web_search' }],
    tool_choice: 'auto',
  };

  it('warns about grammars, missing descriptions and hosted kinds on the first request only', () => {
    const ledger = createWarningLedger();
    const first = lower(body, {}, ledger);
    assert.deepStrictEqual(first.warnings.map((warning) => [warning.kind, warning.tool]), [
      ['grammar_not_enforced', 'apply_patch'],
      ['custom_description_missing', 'notes'],
      ['hosted_tool_dropped', 'tool_search'],
      ['hosted_tool_dropped', 'web_search'],
    ]);
    assert.deepStrictEqual(lower(body, {}, ledger).warnings, []);
  });

  it('warns about a grammar again when its text changes', () => {
    const ledger = createWarningLedger();
    lower(body, {}, ledger);
    const changed = { ...body, tools: [{ ...applyPatch, format: { ...applyPatch.format, definition: `${LARK}\nhunk: x` } }] };
    assert.deepStrictEqual(lower(changed, {}, ledger).warnings.map((warning) => warning.kind), ['grammar_not_enforced']);
  });

  it('does not use up a once-per-process warning on a request that is rejected', () => {
    const ledger = createWarningLedger();
    assert.throws(() => lower({ ...body, input: [{ type: 'item_reference', id: 'x' }] }, {}, ledger), UnsupportedFeatureError.is);
    assert.equal(lower(body, {}, ledger).warnings.length, 4);
  });
});

describe('convertResponsesRequestToChatRequest: rejections', () => {
  it('answers a function/custom name collision with a 400', () => {
    assert.throws(
      () => lower({ model: 'm', input: 'x', tools: [{ type: 'function', name: 'apply_patch' }, applyPatch] }),
      (error: unknown) =>
        InvalidRequestError.is(error) &&
        error.code === 'tool_name_collision' &&
        error.param === 'tools' &&
        error.message === "tool name 'apply_patch' is declared both as a function tool and as a custom tool; the function bridge cannot tell their calls apart",
    );
  });

  it('rejects "required" without any tool', () => {
    assert.throws(() => lower({ model: 'm', input: 'x', tool_choice: 'required' }), (error: unknown) => InvalidRequestError.is(error) && error.param === 'tool_choice');
  });

  it('rejects previous_response_id and background: true as unsupported', () => {
    assert.throws(
      () => lower({ model: 'm', input: 'x', previous_response_id: 'resp_1' }),
      (error: unknown) => UnsupportedFeatureError.is(error) && error.param === 'previous_response_id',
    );
    assert.throws(() => lower({ model: 'm', input: 'x', background: true }), (error: unknown) => UnsupportedFeatureError.is(error) && error.param === 'background');
    assert.doesNotThrow(() => lower({ model: 'm', input: 'x', previous_response_id: null, background: false }));
  });

  it('rejects defer_loading: true inside a carrier, naming where it sits', () => {
    assert.throws(
      () => lower({ model: 'm', input: [{ type: 'additional_tools', tools: [{ type: 'namespace', name: 'mcp', tools: [{ type: 'function', name: 'f', defer_loading: true }] }] }] }),
      (error: unknown) => InvalidRequestError.is(error) && error.param === 'input[0].tools[0].tools[0].defer_loading',
    );
  });

  it('names the missing field of a malformed item', () => {
    assert.throws(
      () => lower({ model: 'm', input: [user('a'), { type: 'custom_tool_call', call_id: 'c', name: 'apply_patch' }] }),
      (error: unknown) => InvalidRequestError.is(error) && error.param === 'input[1].input' && error.message.includes('`input[1].input` is missing'),
    );
  });
});

describe('convertResponsesRequestToChatRequest: tool_choice against vLLM', () => {
  const tools = [execCommand, applyPatch, { type: 'namespace', name: 'multi_agent_v1', tools: [{ type: 'function', name: 'close_agent' }] }, { type: 'web_search' }];
  const choices: Array<[unknown, unknown, string[]]> = [
    [undefined, null, ['exec_command', 'apply_patch', 'multi_agent_v1__close_agent']],
    ['auto', 'auto', ['exec_command', 'apply_patch', 'multi_agent_v1__close_agent']],
    ['none', 'none', ['exec_command', 'apply_patch', 'multi_agent_v1__close_agent']],
    ['required', 'required', ['exec_command', 'apply_patch', 'multi_agent_v1__close_agent']],
    [{ type: 'function', name: 'close_agent', namespace: 'multi_agent_v1' }, { type: 'function', function: { name: 'multi_agent_v1__close_agent' } }, ['exec_command', 'apply_patch', 'multi_agent_v1__close_agent']],
    [{ type: 'custom', name: 'apply_patch' }, { type: 'function', function: { name: 'apply_patch' } }, ['exec_command', 'apply_patch', 'multi_agent_v1__close_agent']],
    [{ type: 'allowed_tools', mode: 'required', tools: [{ type: 'custom', name: 'apply_patch' }] }, { type: 'function', function: { name: 'apply_patch' } }, ['apply_patch']],
    [{ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'exec_command' }, { type: 'custom', name: 'apply_patch' }] }, 'auto', ['exec_command', 'apply_patch']],
    [{ type: 'namespace', name: 'multi_agent_v1' }, 'auto', ['multi_agent_v1__close_agent']],
    [{ type: 'web_search' }, 'auto', ['exec_command', 'apply_patch', 'multi_agent_v1__close_agent']],
    [{ type: 'function', name: 'gone' }, 'auto', ['exec_command', 'apply_patch', 'multi_agent_v1__close_agent']],
  ];
  for (const [original, sent, names] of choices) {
    it(`${JSON.stringify(original) ?? 'absent'} → ${JSON.stringify(sent)} with ${names.length} tools, accepted by vLLM`, () => {
      const lowered = lower({ model: 'm', input: 'x', tools, ...(original === undefined ? {} : { tool_choice: original }) });
      assert.deepStrictEqual(lowered.summary.toolChoice, { original: original ?? null, sent });
      assert.deepStrictEqual(toolNames(lowered.chatRequest), names);
      assert.deepStrictEqual([...lowered.toolMap.keys()], names);
      assert.equal(validateChatRequestForVllm(lowered.chatRequest), null);
    });
  }

  it('marks tools removed by tool_choice as dropped in the summary', () => {
    const lowered = lower({ model: 'm', input: 'x', tools, tool_choice: { type: 'namespace', name: 'multi_agent_v1' } });
    assert.deepStrictEqual(
      lowered.summary.tools.map((tool) => [tool.name, tool.disposition, tool.reason]),
      [
        ['exec_command', 'dropped', 'not selected by tool_choice'],
        ['apply_patch', 'dropped', 'not selected by tool_choice'],
        ['close_agent', 'lowered', null],
        ['web_search', 'dropped', "hosted tool kind 'web_search' cannot run on a Chat Completions backend"],
      ],
    );
  });
});

describe('convertResponsesRequestToChatRequest: strategies', () => {
  const history = [user('patch'), { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' }, { type: 'custom_tool_call_output', call_id: 'c1', output: 'ok' }];

  it('passthrough forwards custom tools natively but still replays custom calls as bridged function calls', () => {
    const lowered = lower({ model: 'gpt-5.5', input: history, tools: [applyPatch] }, { strategy: 'passthrough' });
    assert.deepStrictEqual(lowered.chatRequest.tools, [{ type: 'custom', custom: { name: 'apply_patch', description: 'Edit files.', format: applyPatch.format } }]);
    assert.deepStrictEqual(lowered.chatRequest.messages[1], {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'apply_patch', arguments: '{"input": "*** Begin Patch\\n*** End Patch"}' } }],
    });
    assert.equal(lowered.toolMap.get('apply_patch')?.kind, 'custom');
    assert.deepStrictEqual(lowered.summary.tools.map((tool) => tool.disposition), ['passthrough']);
  });

  it('dropCustomTools drops custom tools, rewrites a named custom choice to auto and still replays the call', () => {
    const lowered = lower({ model: 'm', input: history, tools: [execCommand, applyPatch], tool_choice: { type: 'custom', name: 'apply_patch' } }, { dropCustomTools: true });
    assert.deepStrictEqual(toolNames(lowered.chatRequest), ['exec_command']);
    assert.equal(lowered.chatRequest.tool_choice, 'auto');
    assert.deepStrictEqual(lowered.warnings.map((warning) => warning.kind), ['custom_tool_dropped', 'tool_choice_rewritten']);
    const assistant = lowered.chatRequest.messages[1];
    assert.ok(assistant?.role === 'assistant');
    assert.equal(assistant.tool_calls?.[0]?.function.arguments, '{"input": "*** Begin Patch\\n*** End Patch"}');
    assert.equal(validateChatRequestForVllm(lowered.chatRequest), null);
  });
});

describe('convertResponsesRequestToChatRequest: scalar fields', () => {
  it('maps max_output_tokens, temperature and top_p', () => {
    const lowered = lower({ model: 'm', input: 'x', max_output_tokens: 512, temperature: 0.2, top_p: 0.9 });
    assert.deepStrictEqual(lowered.chatRequest, {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 512,
      temperature: 0.2,
      top_p: 0.9,
    });
  });

  for (const effort of ['minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'none', 'extreme']) {
    it(`forwards reasoning.effort '${effort}' verbatim by default`, () => {
      const lowered = lower({ model: 'm', input: 'x', reasoning: { effort, summary: 'detailed' } });
      assert.equal(lowered.chatRequest.reasoning_effort, effort);
      assert.deepStrictEqual(lowered.warnings, []);
    });
  }

  const clamped: Array<[string, string | undefined]> = [
    ['minimal', 'low'],
    ['low', 'low'],
    ['medium', 'medium'],
    ['high', 'high'],
    ['xhigh', 'high'],
    ['max', 'high'],
    ['none', 'none'],
    ['extreme', undefined],
  ];
  for (const [effort, expected] of clamped) {
    it(`clamps reasoning.effort '${effort}' to ${String(expected)}`, () => {
      const lowered = lower({ model: 'm', input: 'x', reasoning: { effort } }, { reasoningEffort: 'clamp' });
      assert.equal(lowered.chatRequest.reasoning_effort, expected);
      assert.deepStrictEqual(lowered.warnings.map((warning) => warning.kind), expected === effort ? [] : ['reasoning_effort_changed']);
      assert.equal(validateChatRequestForVllm(lowered.chatRequest, { reasoningEfforts: ['none', 'low', 'medium', 'high'] }), null);
    });
  }

  it('drops reasoning.effort with a warning shown once per value', () => {
    const ledger = createWarningLedger();
    const lowered = lower({ model: 'm', input: 'x', reasoning: { effort: 'high' } }, { reasoningEffort: 'drop' }, ledger);
    assert.equal('reasoning_effort' in lowered.chatRequest, false);
    assert.deepStrictEqual(lowered.warnings, [createWarning('reasoning_effort_changed', "reasoning.effort 'high' was not sent (reasoningEffort: drop)")]);
    assert.deepStrictEqual(lower({ model: 'm', input: 'x', reasoning: { effort: 'high' } }, { reasoningEffort: 'drop' }, ledger).warnings, []);
  });

  it('maps text.format json_schema, json_object and text', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    assert.deepStrictEqual(
      lower({ model: 'm', input: 'x', text: { verbosity: 'low', format: { type: 'json_schema', strict: true, schema, name: 'codex_output_schema' } } }).chatRequest.response_format,
      { type: 'json_schema', json_schema: { name: 'codex_output_schema', schema, strict: true } },
    );
    assert.deepStrictEqual(lower({ model: 'm', input: 'x', text: { format: { type: 'json_object' } } }).chatRequest.response_format, { type: 'json_object' });
    assert.equal('response_format' in lower({ model: 'm', input: 'x', text: { format: { type: 'text' } } }).chatRequest, false);
  });

  it('never sends chat_template_kwargs', () => {
    const lowered = lower({ model: 'm', input: 'x', reasoning: { effort: 'none' }, chat_template_kwargs: { enable_thinking: false } });
    assert.equal('chat_template_kwargs' in lowered.chatRequest, false);
    assert.equal(validateChatRequestForVllm(lowered.chatRequest, { mistralTokenizer: true }), null);
  });
});

describe('convertResponsesRequestToChatRequest: history', () => {
  it('keeps parallel image outputs contiguous and passes vLLM validation', () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const lowered = lower({
      model: 'm',
      input: [
        user('look'),
        { type: 'function_call', call_id: 'a', name: 'view_image', arguments: '{"path":"a.png"}' },
        { type: 'function_call', call_id: 'b', name: 'view_image', arguments: '{"path":"b.png"}' },
        { type: 'function_call_output', call_id: 'a', output: [{ type: 'input_image', image_url: png }] },
        { type: 'function_call_output', call_id: 'b', output: [{ type: 'input_image', image_url: png }] },
      ],
    });
    assert.deepStrictEqual(lowered.chatRequest.messages.map((message) => message.role), ['user', 'assistant', 'tool', 'tool', 'user']);
    assert.equal(validateChatRequestForVllm(lowered.chatRequest), null);
  });

  it('re-wraps malformed replayed arguments so vLLM does not reject the history on every turn', () => {
    const lowered = lower({
      model: 'm',
      input: [user('x'), { type: 'function_call', call_id: 'c', name: 'exec_command', arguments: '{"cmd": "ls", oops' }, { type: 'function_call_output', call_id: 'c', output: 'failed' }],
    });
    assert.equal(validateChatRequestForVllm(lowered.chatRequest), null);
    assert.deepStrictEqual(lowered.warnings.map((warning) => [warning.kind, warning.callId]), [['replay_rewrapped', 'c']]);
  });
});
