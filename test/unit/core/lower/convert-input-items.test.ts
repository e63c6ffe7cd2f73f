import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveBridgeOptions, type BridgeOptions } from '../../../../src/core/bridge-options.ts';
import { InvalidRequestError, UnsupportedFeatureError } from '../../../../src/core/errors.ts';
import {
  convertInputItems,
  joinToolOutputText,
  normaliseReplayedArguments,
  serialiseCustomToolInput,
} from '../../../../src/core/lower/convert-input-items.ts';
import { passthroughText } from '../../../../src/core/outbound/passthrough-text.ts';
import { responsesInputItemSchema } from '../../../../src/core/responses/responses-request.ts';
import { createWarning } from '../../../../src/core/warnings.ts';

function convert(items: readonly unknown[], options: Partial<BridgeOptions> = {}, instructions: string | null = null) {
  const indexed = items.map((item, index) => ({ item: responsesInputItemSchema.parse(item), index }));
  return convertInputItems(indexed, instructions === null ? null : passthroughText(instructions), resolveBridgeOptions(options));
}

const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const developer = (...texts: string[]) => ({ type: 'message', role: 'developer', content: texts.map((text) => ({ type: 'input_text', text })) });
const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const JPEG = 'data:image/jpeg;base64,/9j/4AAQ';

describe('convertInputItems: instructions and leading system/developer messages', () => {
  it('folds instructions and the leading run into one system message, instructions first, joined with a blank line', () => {
    const result = convert([developer('<skills>', '<permissions>'), { role: 'system', content: 'sys' }, user('hi')], {}, 'BASE');
    assert.deepStrictEqual(result, {
      value: [
        { role: 'system', content: 'BASE\n\n<skills>\n\n<permissions>\n\nsys' },
        { role: 'user', content: 'hi' },
      ],
      warnings: [],
    });
  });

  it('gives the same system message for ≤0.161 instructions and ≥0.162 developer prompts', () => {
    const old = convert([developer('<skills>', '<permissions>'), user('hi')], {}, 'BASE');
    const current = convert([developer('BASE'), developer('<skills>', '<permissions>'), user('hi')]);
    assert.deepStrictEqual(old, current);
  });

  it('turns later developer messages into system messages in place', () => {
    const result = convert([developer('BASE'), user('hi'), developer('<model_switch>', 'now gpt'), user('go on')]);
    assert.deepStrictEqual(result.value, [
      { role: 'system', content: 'BASE' },
      { role: 'user', content: 'hi' },
      { role: 'system', content: '<model_switch>\nnow gpt' },
      { role: 'user', content: 'go on' },
    ]);
  });

  it('wraps later developer messages as user messages when midConversationDeveloperRole is user', () => {
    const result = convert([developer('BASE'), user('hi'), developer('<model_switch>')], { midConversationDeveloperRole: 'user' });
    assert.deepStrictEqual(result.value, [
      { role: 'system', content: 'BASE' },
      { role: 'user', content: 'hi' },
      { role: 'user', content: '<developer>\n<model_switch>\n</developer>' },
    ]);
  });

  it('sends no system message when there are no instructions and no leading run', () => {
    assert.deepStrictEqual(convert([user('hi')]).value, [{ role: 'user', content: 'hi' }]);
  });

  it('keeps only text parts of leading messages and warns about the others', () => {
    const result = convert([{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'BASE' }, { type: 'input_image', image_url: PNG }] }]);
    assert.deepStrictEqual(result, {
      value: [{ role: 'system', content: 'BASE' }],
      warnings: [
        createWarning(
          'unsupported_content_part',
          "input[0].content[1]: content of type 'input_image' cannot be sent to a Chat Completions backend; omitted from this text-only message",
        ),
      ],
    });
  });
});

describe('convertInputItems: user messages', () => {
  it('passes string content through', () => {
    assert.deepStrictEqual(convert([{ type: 'message', role: 'user', content: 'plain' }]).value, [{ role: 'user', content: 'plain' }]);
  });

  it('joins text-only parts into one string with newlines', () => {
    const result = convert([{ role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'text', text: 'b' }, { type: 'output_text', text: 'c' }] }]);
    assert.deepStrictEqual(result, { value: [{ role: 'user', content: 'a\nb\nc' }], warnings: [] });
  });

  it('turns images into image_url parts with detail defaulting to auto', () => {
    const result = convert([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'what is this?' },
          { type: 'input_image', image_url: PNG },
          { type: 'input_image', image_url: { url: JPEG }, detail: 'high' },
        ],
      },
    ]);
    assert.deepStrictEqual(result, {
      value: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: PNG, detail: 'auto' } },
            { type: 'image_url', image_url: { url: JPEG, detail: 'high' } },
          ],
        },
      ],
      warnings: [],
    });
  });

  it('replaces input_file and unknown parts with a placeholder and a warning', () => {
    const result = convert([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'read this' },
          { type: 'input_file', filename: 'spec.pdf', file_data: 'JVBERi0=' },
          { type: 'input_audio', input_audio: { data: 'AAA' } },
        ],
      },
    ]);
    assert.deepStrictEqual(result, {
      value: [
        {
          role: 'user',
          content: "read this\n[file 'spec.pdf' omitted: the backend cannot receive files]\n[input_audio content omitted: the backend cannot receive it]",
        },
      ],
      warnings: [
        createWarning('unsupported_content_part', "input[0].content[1]: content of type 'input_file' cannot be sent to a Chat Completions backend; a text placeholder was sent instead"),
        createWarning('unsupported_content_part', "input[0].content[2]: content of type 'input_audio' cannot be sent to a Chat Completions backend; a text placeholder was sent instead"),
      ],
    });
  });

  it('rejects an empty image URL with a 400 naming the part', () => {
    assert.throws(
      () => convert([user('x'), { type: 'message', role: 'user', content: [{ type: 'input_image', image_url: '' }] }]),
      (error: unknown) =>
        InvalidRequestError.is(error) &&
        error.message === 'input[1].content[0]: input_image requires a non-empty image_url' &&
        error.param === 'input[1].content[0].image_url',
    );
  });
});

describe('convertInputItems: assistant turns', () => {
  it('merges reasoning, a custom call and text into one assistant message, then the tool output', () => {
    const input = 'const r = await tools.exec_command({cmd: "ls"});\ntext(r);';
    const result = convert([
      user('list the files'),
      { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'Run ls.' }], encrypted_content: null },
      { type: 'custom_tool_call', call_id: 'call_1', namespace: 'functions', name: 'exec', input },
      {
        type: 'custom_tool_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: 'Script completed\nWall time 0.2 seconds\nOutput:\n' },
          { type: 'input_text', text: 'a.py\n' },
        ],
      },
    ]);
    assert.deepStrictEqual(result, {
      value: [
        { role: 'user', content: 'list the files' },
        {
          role: 'assistant',
          content: null,
          reasoning: 'Run ls.',
          reasoning_content: 'Run ls.',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'functions__exec', arguments: '{"input": "const r = await tools.exec_command({cmd: \\"ls\\"});\\ntext(r);"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Script completed\nWall time 0.2 seconds\nOutput:\na.py\n' },
      ],
      warnings: [],
    });
  });

  it('merges text and parallel function calls of one turn; omits tool_calls when there are none', () => {
    const result = convert([
      user('hi'),
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
      { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{"cmd":"ls"}' },
      { type: 'function_call', call_id: 'c2', name: 'exec_command', arguments: '{"cmd":"pwd"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'a.py' },
      { type: 'function_call_output', call_id: 'c2', output: '/ws' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }, { type: 'refusal', refusal: 'no' }] },
    ]);
    assert.deepStrictEqual(result.value, [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } },
          { id: 'c2', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"pwd"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'a.py' },
      { role: 'tool', tool_call_id: 'c2', content: '/ws' },
      { role: 'assistant', content: 'Done.' },
    ]);
  });

  it('yields a content-null message for a reasoning-only turn, reading summary text when content is empty', () => {
    const result = convert([user('hi'), { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think.' }, { type: 'summary_text', text: 'More.' }] }, user('next')], {
      replayReasoningField: 'reasoning',
    });
    assert.deepStrictEqual(result.value, [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, reasoning: 'Think.\n\nMore.' },
      { role: 'user', content: 'next' },
    ]);
  });

  it('puts reasoning in reasoning_content only when asked', () => {
    const result = convert([{ type: 'reasoning', content: [{ type: 'reasoning_text', text: 'R' }] }, { type: 'message', role: 'assistant', content: 'A' }], {
      replayReasoningField: 'reasoning_content',
    });
    assert.deepStrictEqual(result.value, [{ role: 'assistant', content: 'A', reasoning_content: 'R' }]);
  });

  it('drops replayed reasoning when replayReasoning is false', () => {
    const result = convert(
      [{ type: 'reasoning', content: [{ type: 'reasoning_text', text: 'R' }] }, { type: 'function_call', call_id: 'c', name: 'wait', arguments: '{}' }],
      { replayReasoning: false },
    );
    assert.deepStrictEqual(result.value, [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'wait', arguments: '{}' } }] },
    ]);
  });
});

describe('convertInputItems: function_call replay', () => {
  it('forwards valid object arguments byte for byte and joins the namespace', () => {
    const text = '{ "target" : "nobody",\n"x":1 }';
    const result = convert([{ type: 'function_call', call_id: 'c', namespace: 'multi_agent_v1', name: 'close_agent', arguments: text }]);
    assert.deepStrictEqual(result, {
      value: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'multi_agent_v1__close_agent', arguments: text } }] }],
      warnings: [],
    });
  });

  it('re-wraps malformed arguments and warns', () => {
    const result = convert([{ type: 'function_call', call_id: 'c3', name: 'exec_command', arguments: '{"cmd": "ls' }]);
    assert.deepStrictEqual(result, {
      value: [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c3', type: 'function', function: { name: 'exec_command', arguments: '{"_raw_arguments": "{\\"cmd\\": \\"ls"}' } }],
        },
      ],
      warnings: [
        createWarning(
          'replay_rewrapped',
          `input[0]: the replayed arguments of 'exec_command' are not a JSON object; sent as {"_raw_arguments": …} so the backend accepts the history`,
          { tool: 'exec_command', callId: 'c3', raw: '{"cmd": "ls' },
        ),
      ],
    });
  });

  it('normalises each argument form', () => {
    assert.deepStrictEqual(normaliseReplayedArguments(''), { arguments: '{}', rewrapped: false });
    assert.deepStrictEqual(normaliseReplayedArguments('  '), { arguments: '{}', rewrapped: false });
    assert.deepStrictEqual(normaliseReplayedArguments(undefined), { arguments: '{}', rewrapped: false });
    assert.deepStrictEqual(normaliseReplayedArguments('{}'), { arguments: '{}', rewrapped: false });
    assert.deepStrictEqual(normaliseReplayedArguments('[1]'), { arguments: '{"_raw_arguments": "[1]"}', rewrapped: true });
    assert.deepStrictEqual(normaliseReplayedArguments('"s"'), { arguments: '{"_raw_arguments": "\\"s\\""}', rewrapped: true });
    assert.deepStrictEqual(normaliseReplayedArguments('7'), { arguments: '{"_raw_arguments": "7"}', rewrapped: true });
  });

  it('sends {} for empty arguments without a warning', () => {
    const result = convert([{ type: 'function_call', call_id: 'c', name: 'get_goal', arguments: '' }]);
    assert.deepStrictEqual(result, {
      value: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'get_goal', arguments: '{}' } }] }],
      warnings: [],
    });
  });
});

describe('convertInputItems: custom_tool_call replay', () => {
  const trickyInputs = [
    '*** Begin Patch\n*** Add File: a.txt\n+say "hi" \\ back\\n\tnow\n*** End Patch',
    'ünïcödé — 日本語 🎉 \u2028 \u0000 </parameter>',
    'lone surrogate \ud83d end',
    '',
  ];

  for (const input of trickyInputs) {
    it(`serialises ${JSON.stringify(input).slice(0, 40)} so JSON.parse(arguments).input is byte-equal`, () => {
      const result = convert([{ type: 'custom_tool_call', call_id: 'c', name: 'apply_patch', input }]);
      const message = result.value[0];
      assert.ok(message?.role === 'assistant');
      const argumentsText = message.tool_calls?.[0]?.function.arguments ?? '';
      assert.equal(argumentsText, `{"input": ${JSON.stringify(input)}}`);
      assert.equal((JSON.parse(argumentsText) as { input: string }).input, input);
    });
  }

  it('uses the Python json.dumps separator', () => {
    assert.equal(serialiseCustomToolInput('x'), '{"input": "x"}');
  });

  it('lowers a replayed custom call as a bridged function call under every strategy', () => {
    for (const options of [{ strategy: 'passthrough' as const }, { dropCustomTools: true }]) {
      const result = convert([{ type: 'custom_tool_call', call_id: 'c', name: 'apply_patch', input: 'P' }], options);
      assert.deepStrictEqual(result.value, [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'apply_patch', arguments: '{"input": "P"}' } }] },
      ]);
    }
  });
});

describe('convertInputItems: tool outputs', () => {
  it('passes string output through', () => {
    assert.deepStrictEqual(convert([{ type: 'custom_tool_call_output', call_id: 'c', output: 'Exit code: 0\n' }]).value, [
      { role: 'tool', tool_call_id: 'c', content: 'Exit code: 0\n' },
    ]);
  });

  it('joins structured text parts, inserting a newline only where a part does not end with one', () => {
    assert.equal(joinToolOutputText(['a', 'b\n', 'c', '', 'd']), 'a\nb\nc\nd');
    const result = convert([
      { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text', text: 'head' }, { type: 'output_text', text: 'tail\n' }] },
    ]);
    assert.deepStrictEqual(result.value, [{ role: 'tool', tool_call_id: 'c', content: 'head\ntail\n' }]);
  });

  it('sends a list of text parts when toolOutputParts is list', () => {
    const result = convert(
      [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text', text: 'head' }, { type: 'input_text', text: 'tail' }] }],
      { toolOutputParts: 'list' },
    );
    assert.deepStrictEqual(result.value, [
      { role: 'tool', tool_call_id: 'c', content: [{ type: 'text', text: 'head' }, { type: 'text', text: 'tail' }] },
    ]);
  });
});

describe('convertInputItems: images in tool outputs', () => {
  const parallelImageCalls = [
    user('look at both'),
    { type: 'function_call', call_id: 'call_1', name: 'view_image', arguments: '{"path":"a.png"}' },
    { type: 'function_call', call_id: 'call_2', name: 'view_image', arguments: '{"path":"b.png"}' },
    {
      type: 'function_call_output',
      call_id: 'call_1',
      output: [{ type: 'input_text', text: 'Script completed\n' }, { type: 'input_image', image_url: PNG }, { type: 'input_text', text: 'done' }],
    },
    { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_image', image_url: JPEG, detail: 'low' }, { type: 'input_image', image_url: PNG }] },
    user('thanks'),
  ];

  it('keeps the tool messages of parallel calls contiguous, then sends one user message with the images', () => {
    const result = convert(parallelImageCalls);
    assert.deepStrictEqual(result, {
      value: [
        { role: 'user', content: 'look at both' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'view_image', arguments: '{"path":"a.png"}' } },
            { id: 'call_2', type: 'function', function: { name: 'view_image', arguments: '{"path":"b.png"}' } },
          ],
        },
        {
          role: 'tool',
          tool_call_id: 'call_1',
          content: 'Script completed\n[image 1 of this tool result is attached in the next message]\ndone',
        },
        {
          role: 'tool',
          tool_call_id: 'call_2',
          content: '[image 1 of this tool result is attached in the next message]\n[image 2 of this tool result is attached in the next message]',
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Image output of tool call call_1:' },
            { type: 'image_url', image_url: { url: PNG, detail: 'auto' } },
            { type: 'text', text: 'Image output of tool call call_2:' },
            { type: 'image_url', image_url: { url: JPEG, detail: 'low' } },
            { type: 'image_url', image_url: { url: PNG, detail: 'auto' } },
          ],
        },
        { role: 'user', content: 'thanks' },
      ],
      warnings: [],
    });
  });

  it('places the image message at the end of the input when nothing follows the run', () => {
    const result = convert(parallelImageCalls.slice(0, 5));
    assert.deepStrictEqual(result.value.map((message) => message.role), ['user', 'assistant', 'tool', 'tool', 'user']);
  });

  it('sends text markers only with toolOutputImages placeholder', () => {
    const result = convert([{ type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_image', image_url: PNG }] }], {
      toolOutputImages: 'placeholder',
    });
    assert.deepStrictEqual(result, {
      value: [{ role: 'tool', tool_call_id: 'call_1', content: '[image 1 of this tool result omitted: the backend cannot receive images in tool results]' }],
      warnings: [
        createWarning(
          'unsupported_content_part',
          "input[0].output[0]: content of type 'input_image' cannot be sent to a Chat Completions backend; a text placeholder was sent instead (toolOutputImages: placeholder)",
          { callId: 'call_1' },
        ),
      ],
    });
  });

  it('rejects tool output images with a 400 when toolOutputImages is reject', () => {
    assert.throws(
      () => convert(parallelImageCalls, { toolOutputImages: 'reject' }),
      (error: unknown) =>
        InvalidRequestError.is(error) &&
        error.param === 'input[3].output[1]' &&
        error.message ===
          "input[3].output[1]: the output of tool call call_1 contains an image, and the bridge is set to reject tool output images (toolOutputImages: 'reject')",
    );
  });
});

describe('convertInputItems: other items', () => {
  it('drops hosted-call records and unknown item types with one warning each, without splitting the assistant turn', () => {
    const result = convert([
      { type: 'function_call', call_id: 'c1', name: 'a', arguments: '{}' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } },
      { type: 'function_call', call_id: 'c2', name: 'b', arguments: '{}' },
      { type: 'brand_new_kind', call_id: 'c9', payload: 1 },
    ]);
    assert.deepStrictEqual(result, {
      value: [
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'a', arguments: '{}' } },
            { id: 'c2', type: 'function', function: { name: 'b', arguments: '{}' } },
          ],
        },
      ],
      warnings: [
        createWarning('unknown_item_dropped', "input[1]: 'web_search_call' is a hosted-tool record with no Chat Completions representation; dropped", {
          raw: '{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"x"}}',
        }),
        createWarning('unknown_item_dropped', "input[3]: unknown input item type 'brand_new_kind'; dropped", {
          callId: 'c9',
          raw: '{"type":"brand_new_kind","call_id":"c9","payload":1}',
        }),
      ],
    });
  });

  it('refuses item_reference with UnsupportedFeatureError naming the item', () => {
    assert.throws(
      () => convert([user('hi'), { type: 'item_reference', id: 'msg_1' }]),
      (error: unknown) =>
        UnsupportedFeatureError.is(error) &&
        error.param === 'input[1]' &&
        error.message === "input[1]: item_reference 'msg_1' cannot be resolved: the bridge keeps no response store, so send the full item instead",
    );
  });
});
