import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chatCompletionSchema } from '../../../../src/core/chat/chat-completions-api.ts';
import { ChatStreamTranslator, type StreamTranslatorOptions } from '../../../../src/core/stream/chat-stream-to-responses-events.ts';
import { convertChatCompletionToChunk } from '../../../../src/core/stream/convert-chat-completion-to-chunk.ts';
import { createGrammarCache } from '../../../../src/core/grammar/grammar-cache.ts';
import { parseJson } from '../../../../src/core/parse-json.ts';
import type { ResponsesResponse } from '../../../../src/core/responses/responses-output.ts';
import type { ToolMap, ToolMapEntry } from '../../../../src/core/tool-map.ts';
import type { BridgeWarning } from '../../../../src/core/warnings.ts';
import { fixturePath } from '../../../support/fixtures.ts';

const examplesFolder = fixturePath('backend-examples');
const tricky = readFileSync(path.join(examplesFolder, 'tricky-input.txt'), 'utf8');
const trickyTrimmed = tricky.slice(0, -1);

function entry(fields: Partial<ToolMapEntry> & Pick<ToolMapEntry, 'wireName' | 'name' | 'kind'>): [string, ToolMapEntry] {
  return [fields.wireName, { namespace: null, grammar: null, ...fields }];
}

const toolMap: ToolMap = new Map([
  entry({ wireName: 'apply_patch', name: 'apply_patch', kind: 'custom' }),
  entry({ wireName: 'functions__exec', name: 'exec', namespace: 'functions', kind: 'custom' }),
  entry({ wireName: 'exec_command', name: 'exec_command', kind: 'function' }),
  entry({ wireName: 'multi_agent_v1__close_agent', name: 'close_agent', namespace: 'multi_agent_v1', kind: 'function' }),
]);

type LiftContext = StreamTranslatorOptions;

/**
 * A whole completion lifted as the bridge lifts one (a backend that answers a streaming request with
 * one JSON body): replayed as one chunk through the stream translator; the terminal event's response
 * is what Codex receives.
 */
function liftJsonCompletion(completion: unknown, liftContext: LiftContext): { response: ResponsesResponse; warnings: BridgeWarning[] } {
  const parsed = chatCompletionSchema.safeParse(completion);
  assert.ok(parsed.success, 'the completion is readable');
  const translator = new ChatStreamTranslator(liftContext);
  const events = [...translator.start(), ...translator.push(convertChatCompletionToChunk(parsed.data))];
  if (!translator.terminated) events.push(...translator.finish());
  const terminal = events.at(-1) as { response?: ResponsesResponse };
  assert.ok(terminal.response, 'the stream ends with a terminal event carrying the response');
  return { response: terminal.response, warnings: [...translator.warnings] };
}

const context: LiftContext = { responseId: 'resp_test', model: 'qwen3-coder', createdAt: 1779158289, toolMap };

function readExample(fileName: string): unknown {
  const parsed = parseJson(readFileSync(path.join(examplesFolder, fileName), 'utf8'));
  assert.ok(parsed.success, `${fileName} parses`);
  return parsed.value;
}

/** Replaces random item ids by `<prefix>` after checking their shape. */
function convert(completion: unknown): { response: ResponsesResponse; warnings: BridgeWarning[] } {
  const result = liftJsonCompletion(completion, context);
  const output = result.response.output.map((item) => {
    const match = /^(rs|msg|fc|ctc)_[0-9a-f]{24}$/.exec(item.id);
    assert.ok(match, `item id ${item.id}`);
    return { ...item, id: `<${match[1]}>` };
  });
  return { response: { ...result.response, output }, warnings: result.warnings };
}

function response(fields: Partial<ResponsesResponse>): ResponsesResponse {
  return {
    id: 'resp_test',
    object: 'response',
    created_at: 1779158289,
    model: 'qwen3-coder',
    status: 'completed',
    output: [],
    usage: usage(0, 0, 0),
    ...fields,
  };
}

function usage(input: number, output: number, total: number, reasoning = 0): ResponsesResponse['usage'] {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: total,
  };
}

const patchCall = (callId: string, input: string) =>
  ({ type: 'custom_tool_call', id: '<ctc>', call_id: callId, name: 'apply_patch', input, status: 'completed' }) as const;

describe('a JSON completion, lifted: engine examples', () => {
  it('vLLM hermes: reasoning + custom call, content null', () => {
    assert.deepStrictEqual(convert(readExample('vllm-nonstream-toolcall-hermes.json')), {
      response: response({
        output: [
          { type: 'reasoning', id: '<rs>', summary: [], content: [{ type: 'reasoning_text', text: 'The user wants a greeting fix.' }] },
          patchCall('chatcmpl-tool-9c1e4b7f2a6d8e30', tricky),
        ],
        usage: usage(812, 171, 983),
      }),
      warnings: [],
    });
  });

  it('vLLM qwen3_coder: message text + custom call without the final newline', () => {
    assert.deepStrictEqual(convert(readExample('vllm-nonstream-toolcall-qwen3coder.json')), {
      response: response({
        output: [
          { type: 'message', id: '<msg>', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: "I'll apply the fix.\n\n", annotations: [] }] },
          patchCall('call_5f0c3a9b1d7e4c2a8b6f0e1d', trickyTrimmed),
        ],
        usage: usage(905, 188, 1093),
      }),
      warnings: [],
    });
  });

  it('vLLM gpt-oss: ASCII-escaped arguments lift to the same input', () => {
    assert.deepStrictEqual(convert(readExample('vllm-nonstream-toolcall-gptoss.json')), {
      response: response({
        output: [
          { type: 'reasoning', id: '<rs>', summary: [], content: [{ type: 'reasoning_text', text: 'Need to edit greet.py.' }] },
          patchCall('chatcmpl-tool-0b7d2e4c6a8f1930', tricky),
        ],
        usage: usage(1203, 96, 1299),
      }),
      warnings: [],
    });
  });

  for (const fileName of ['vllm-nonstream-text.json', 'vllm-0.10-nonstream-text.json']) {
    it(`${fileName}: one message, usage with null details as integers`, () => {
      assert.deepStrictEqual(convert(readExample(fileName)), {
        response: response({
          output: [{ type: 'message', id: '<msg>', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello!', annotations: [] }] }],
          usage: usage(31, 3, 34),
        }),
        warnings: [],
      });
    });
  }

  it('SGLang: string content + call with index', () => {
    assert.deepStrictEqual(convert(readExample('sglang-nonstream-toolcall.json')), {
      response: response({
        output: [
          { type: 'message', id: '<msg>', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: "I'll apply the fix.\n\n", annotations: [] }] },
          patchCall('call_361011ce08d84cc6971c6d8a', trickyTrimmed),
        ],
        usage: usage(905, 188, 1093),
      }),
      warnings: [],
    });
  });

  it('Ollama: empty content, HTML-escaped compact arguments', () => {
    assert.deepStrictEqual(convert(readExample('ollama-nonstream-toolcall.json')), {
      response: response({ output: [patchCall('call_k3v9x2ab', trickyTrimmed)], usage: usage(905, 188, 1093) }),
      warnings: [],
    });
  });
});

function completion(message: Record<string, unknown>, finishReason: string | null = 'tool_calls', extra: Record<string, unknown> = {}): unknown {
  return { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }], ...extra };
}

function toolCall(id: string | null, name: string, argumentsValue: unknown): Record<string, unknown> {
  return { id, type: 'function', function: { name, arguments: argumentsValue } };
}

describe('a JSON completion, lifted: items', () => {
  it('drops whitespace-only content next to tool calls and keeps engine order', () => {
    const result = convert(
      completion({
        content: '\n\n',
        tool_calls: [
          toolCall('c1', 'exec_command', '{"cmd":"ls"}'),
          toolCall('c2', 'functions__exec', '{"input": "text(1)"}'),
          toolCall('c3', 'multi_agent_v1__close_agent', { id: 'a' }),
          toolCall('c4', 'invented', '{}'),
        ],
      }),
    );
    assert.deepStrictEqual(result.response.output, [
      { type: 'function_call', id: '<fc>', call_id: 'c1', name: 'exec_command', arguments: '{"cmd":"ls"}', status: 'completed' },
      { type: 'custom_tool_call', id: '<ctc>', call_id: 'c2', namespace: 'functions', name: 'exec', input: 'text(1)', status: 'completed' },
      { type: 'function_call', id: '<fc>', call_id: 'c3', namespace: 'multi_agent_v1', name: 'close_agent', arguments: '{"id":"a"}', status: 'completed' },
      { type: 'function_call', id: '<fc>', call_id: 'c4', name: 'invented', arguments: '{}', status: 'completed' },
    ]);
    assert.equal(result.response.status, 'completed');
  });

  it('takes reasoning over reasoning_content, never both', () => {
    const result = convert(completion({ content: 'Hi', reasoning: 'R', reasoning_content: 'R' }, 'stop'));
    assert.deepStrictEqual(
      result.response.output.map((item) => item.type),
      ['reasoning', 'message'],
    );
    const older = convert(completion({ content: 'Hi', reasoning_content: 'old' }, 'stop')).response.output[0];
    assert.deepStrictEqual(older, { type: 'reasoning', id: '<rs>', summary: [], content: [{ type: 'reasoning_text', text: 'old' }] });
  });

  it('lifts Chat-native custom calls to custom_tool_call', () => {
    const result = convert(completion({ tool_calls: [{ id: 'n1', type: 'custom', custom: { name: 'functions__exec', input: 'text(2)' } }] }));
    assert.deepStrictEqual(result.response.output, [
      { type: 'custom_tool_call', id: '<ctc>', call_id: 'n1', namespace: 'functions', name: 'exec', input: 'text(2)', status: 'completed' },
    ]);
  });

  it('uses only choices[0]', () => {
    const body = {
      choices: [
        { index: 0, message: { content: 'first' }, finish_reason: 'stop' },
        { index: 1, message: { content: 'second' }, finish_reason: 'stop' },
      ],
    };
    assert.deepStrictEqual(
      convert(body).response.output.map((item) => item.type === 'message' && item.content[0]?.text),
      ['first'],
    );
  });
});

describe('a JSON completion, lifted: call ids', () => {
  it('makes repeated ids unique with a warning and synthesises missing ones', () => {
    const result = convert(
      completion({
        tool_calls: [toolCall('call_0', 'exec_command', '{}'), toolCall('call_0', 'exec_command', '{}'), toolCall(null, 'exec_command', '{}'), toolCall('', 'apply_patch', '{"input":"x"}')],
      }),
    );
    const callIds = result.response.output.map((item) => (item.type === 'function_call' || item.type === 'custom_tool_call' ? item.call_id : null));
    assert.equal(callIds[0], 'call_0');
    assert.equal(callIds[1], 'call_0_2');
    assert.match(callIds[2] ?? '', /^call_[0-9a-f]{24}$/);
    assert.match(callIds[3] ?? '', /^call_[0-9a-f]{24}$/);
    assert.deepStrictEqual(
      result.warnings.map((warning) => [warning.kind, warning.callId]),
      [['duplicate_call_id', 'call_0_2']],
    );
  });
});

describe('a JSON completion, lifted: status', () => {
  it('omits a truncated bridged call and ends incomplete even when vLLM says tool_calls', () => {
    const result = convert(
      completion({ content: 'Applying.', reasoning: 'think', tool_calls: [toolCall('c1', 'apply_patch', '{"input": "*** Begin Patch\\n*** Upd')] }, 'tool_calls', {
        usage: { prompt_tokens: 10, completion_tokens: 4096, total_tokens: 4106 },
      }),
    );
    assert.deepStrictEqual(result.response, {
      ...response({
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        usage: usage(10, 4096, 4106),
      }),
      output: [
        { type: 'reasoning', id: '<rs>', summary: [], content: [{ type: 'reasoning_text', text: 'think' }] },
        { type: 'message', id: '<msg>', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Applying.', annotations: [] }] },
      ],
    });
    assert.deepStrictEqual(
      result.warnings.map((warning) => [warning.kind, warning.tool, warning.callId]),
      [['truncated', 'apply_patch', 'c1']],
    );
  });

  it('omits calls cut by length (custom and function) and keeps complete ones', () => {
    const result = convert(
      completion(
        {
          tool_calls: [
            toolCall('c1', 'exec_command', '{"cmd":"ls"}'),
            toolCall('c2', 'functions__exec', '{"input": "const a = 1;\\nrm'),
          ],
        },
        'length',
      ),
    );
    assert.equal(result.response.status, 'incomplete');
    assert.deepStrictEqual(result.response.incomplete_details, { reason: 'max_output_tokens' });
    assert.deepStrictEqual(
      result.response.output.map((item) => item.type === 'function_call' && item.call_id),
      ['c1'],
    );
  });

  it('maps length without calls to incomplete max_output_tokens and content_filter to its reason', () => {
    assert.deepStrictEqual(convert(completion({ content: 'partial' }, 'length')).response.incomplete_details, { reason: 'max_output_tokens' });
    const filtered = convert(completion({ content: 'x' }, 'content_filter')).response;
    assert.deepStrictEqual([filtered.status, filtered.incomplete_details], ['incomplete', { reason: 'content_filter' }]);
  });

  it('completes with a warning on repetition and unknown reasons', () => {
    for (const reason of ['repetition', 'eos']) {
      const result = convert(completion({ content: 'x' }, reason));
      assert.equal(result.response.status, 'completed');
      assert.deepStrictEqual(
        result.warnings.map((warning) => warning.kind),
        ['finish_reason_unusual'],
      );
    }
  });

  it('never sets end_turn and always carries integer usage', () => {
    const result = convert(completion({ content: 'x' }, 'stop'));
    assert.equal('end_turn' in result.response, false);
    assert.deepStrictEqual(result.response.usage, usage(0, 0, 0));
  });
});

describe('a JSON completion, lifted: grammar check', () => {
  const capture = parseJson(readFileSync(fixturePath('captures/b_freeform_apply_patch_gpt-5.5_v0.171.req1.json'), 'utf8'));
  assert.ok(capture.success);
  const tools = (capture.value as { tools: Array<{ name?: string; format?: { syntax: string; definition: string } }> }).tools;
  const format = tools.find((tool) => tool.name === 'apply_patch')?.format;
  assert.ok(format);
  const grammarToolMap: ToolMap = new Map([
    entry({ wireName: 'apply_patch', name: 'apply_patch', kind: 'custom', grammar: { syntax: format.syntax, definition: format.definition } }),
    entry({ wireName: 'broken', name: 'broken', kind: 'custom', grammar: { syntax: 'lark', definition: 'start: "(" start ")"\n' } }),
  ]);
  const fenced = `\`\`\`diff\n${tricky}\`\`\``;
  const lift = (extra: Partial<LiftContext>, ...calls: Array<Record<string, unknown>>) =>
    liftJsonCompletion(completion({ tool_calls: calls }), { ...context, toolMap: grammarToolMap, ...extra });
  const inputs = (result: { response: ResponsesResponse }) => result.response.output.map((item) => (item.type === 'custom_tool_call' ? item.input : null));

  it('accepts every engine example of the tricky patch without a warning', () => {
    for (const fileName of ['vllm-nonstream-toolcall-hermes.json', 'vllm-nonstream-toolcall-qwen3coder.json', 'vllm-nonstream-toolcall-gptoss.json', 'sglang-nonstream-toolcall.json', 'ollama-nonstream-toolcall.json']) {
      assert.deepStrictEqual(liftJsonCompletion(readExample(fileName), { ...context, toolMap: grammarToolMap }).warnings, [], fileName);
    }
  });

  it('rescues a fenced patch by default, with grammar_repaired keeping the original', () => {
    const result = lift({}, toolCall('c1', 'apply_patch', JSON.stringify({ input: fenced })));
    assert.deepStrictEqual(inputs(result), [tricky]);
    assert.deepStrictEqual(result.warnings.map((warning) => [warning.kind, warning.callId, warning.raw]), [['grammar_repaired', 'c1', fenced]]);
  });

  it('delivers a patch with no safe rescue unchanged, with grammar_mismatch', () => {
    const withoutEnd = tricky.replace('*** End Patch\n', '');
    const result = lift({}, toolCall('c1', 'apply_patch', JSON.stringify({ input: withoutEnd })));
    assert.deepStrictEqual(inputs(result), [withoutEnd]);
    assert.deepStrictEqual(result.warnings.map((warning) => [warning.kind, warning.callId]), [['grammar_mismatch', 'c1']]);
  });

  it('delivers the repaired input with grammar_repaired when grammarRepair is on', () => {
    const result = lift({ grammarRepair: true }, toolCall('c1', 'apply_patch', JSON.stringify({ input: fenced })));
    assert.deepStrictEqual(inputs(result), [tricky]);
    assert.deepStrictEqual(result.warnings.map((warning) => [warning.kind, warning.callId, warning.raw]), [['grammar_repaired', 'c1', fenced]]);
  });

  it('reports an uncompilable grammar once per response, or once per shared cache', () => {
    const twice = [toolCall('c1', 'broken', '{"input": "(x)"}'), toolCall('c2', 'broken', '{"input": "(y)"}')];
    assert.deepStrictEqual(lift({}, ...twice).warnings.map((warning) => warning.kind), ['grammar_uncompilable']);
    const grammarCache = createGrammarCache();
    assert.deepStrictEqual(lift({ grammarCache }, ...twice).warnings.map((warning) => warning.kind), ['grammar_uncompilable']);
    assert.deepStrictEqual(lift({ grammarCache }, ...twice).warnings, []);
  });
});
