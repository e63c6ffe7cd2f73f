import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveBridgeOptions, type BridgeOptions } from '../../../../src/core/bridge-options.ts';
import { UnsupportedFeatureError } from '../../../../src/core/errors.ts';
import { convertInputItems, readPlainEncryptedContent } from '../../../../src/core/lower/convert-input-items.ts';
import { convertResponsesRequestToChatRequest } from '../../../../src/core/lower/convert-responses-request-to-chat-request.ts';
import { responsesInputItemSchema } from '../../../../src/core/responses/responses-request.ts';
import { createWarning, createWarningLedger } from '../../../../src/core/warnings.ts';

/*
 * Input item kinds Codex 0.171 sends that older releases did not: multi-agent messages, sealed
 * content parts, mid-conversation configuration, compaction records, and the metadata fields items
 * carry. The rules are written down in docs/INPUT-ITEMS.md.
 */

function convert(items: readonly unknown[], options: Partial<BridgeOptions> = {}) {
  const indexed = items.map((item, index) => ({ item: responsesInputItemSchema.parse(item), index }));
  return convertInputItems(indexed, null, resolveBridgeOptions(options));
}

const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });

/** A task handed to a multi-agent v2 child, as Codex 0.171 writes it for a custom provider. */
const NEW_TASK = {
  type: 'agent_message',
  author: '/root',
  recipient: '/root/calc',
  content: [
    { type: 'input_text', text: 'Message Type: NEW_TASK\nTask name: /root/calc\nSender: /root\nPayload:\n' },
    { type: 'encrypted_content', encrypted_content: 'Compute 6 times 7 and answer with the number.' },
  ],
};

/** A sealed payload as OpenAI's service returns it (a Fernet token). */
const SEALED = `gAAAAABo${'x9_Qz-3kL'.repeat(12)}==`;

describe('convertInputItems: agent_message (multi-agent v2)', () => {
  it('is a user turn with its parts in order, joined as written (no extra line break after "Payload:\\n")', () => {
    assert.deepStrictEqual(convert([user('hi'), NEW_TASK]), {
      value: [
        { role: 'user', content: 'hi' },
        { role: 'user', content: 'Message Type: NEW_TASK\nTask name: /root/calc\nSender: /root\nPayload:\nCompute 6 times 7 and answer with the number.' },
      ],
      warnings: [],
    });
  });

  it("carries a child's final answer back to the parent, after the parent's pending tool call", () => {
    const answer = {
      type: 'agent_message',
      author: '/root/calc',
      recipient: '/root',
      content: [
        { type: 'input_text', text: 'Message Type: FINAL_ANSWER\nTask name: /root\nSender: /root/calc\nPayload:\n' },
        { type: 'encrypted_content', encrypted_content: '42' },
      ],
    };
    const result = convert([
      user('delegate'),
      { type: 'function_call', call_id: 'call_wait', name: 'wait_agent', namespace: 'collaboration', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_wait', output: '{"message":"Wait completed.","timed_out":false}' },
      answer,
    ]);
    assert.deepStrictEqual(result.value.slice(1), [
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_wait', type: 'function', function: { name: 'collaboration__wait_agent', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_wait', content: '{"message":"Wait completed.","timed_out":false}' },
      { role: 'user', content: 'Message Type: FINAL_ANSWER\nTask name: /root\nSender: /root/calc\nPayload:\n42' },
    ]);
    assert.deepStrictEqual(result.warnings, []);
  });

  it('sends a placeholder and a warning for a part that is not plain text, keeping the other parts', () => {
    const sealed = { ...NEW_TASK, content: [NEW_TASK.content[0], { type: 'encrypted_content', encrypted_content: SEALED }] };
    assert.deepStrictEqual(convert([sealed]), {
      value: [
        {
          role: 'user',
          content:
            'Message Type: NEW_TASK\nTask name: /root/calc\nSender: /root\nPayload:\n[encrypted content omitted: it is not plain text, and only the service that sealed it can read it]',
        },
      ],
      warnings: [
        createWarning(
          'unsupported_content_part',
          "input[0].content[1]: content of type 'encrypted_content' cannot be sent to a Chat Completions backend; it is not plain text; a text placeholder was sent instead",
        ),
      ],
    });
  });

  it('keeps an image part of an agent message as an image', () => {
    const result = convert([{ type: 'agent_message', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' }] }]);
    assert.deepStrictEqual(result.value, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'see' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' } },
        ],
      },
    ]);
  });
});

describe('readPlainEncryptedContent: what counts as plain text', () => {
  const read = (value: unknown): string | null => readPlainEncryptedContent({ type: 'encrypted_content', encrypted_content: value });

  it('passes text a model or a user wrote, short or long, with line breaks and tabs', () => {
    assert.equal(read('42'), '42');
    assert.equal(read('Refactor\tthe parser.\nThen run the tests.'), 'Refactor\tthe parser.\nThen run the tests.');
    assert.equal(read('a'.repeat(79)), 'a'.repeat(79));
    assert.equal(read(''), '');
  });

  it('refuses a Fernet token, a long base64 run, binary control characters and non-strings', () => {
    assert.equal(read(SEALED), null);
    assert.equal(read('gAAAAABabc'), null);
    assert.equal(read('QUJD'.repeat(20)), null);
    assert.equal(read('text with a NUL \u0000 byte'), null);
    assert.equal(read({ ciphertext: 'x' }), null);
    assert.equal(read(undefined), null);
  });
});

describe('convertInputItems: encrypted_content in messages and tool outputs', () => {
  it('reads a plain-text part of a user message and of a tool output', () => {
    const result = convert([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'task:' }, { type: 'encrypted_content', encrypted_content: 'list files' }] },
      { type: 'function_call', call_id: 'c1', name: 'spawn_agent', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'Result:\n' }, { type: 'encrypted_content', encrypted_content: 'done' }] },
    ]);
    assert.deepStrictEqual(result, {
      value: [
        { role: 'user', content: 'task:\nlist files' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'spawn_agent', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'Result:\ndone' },
      ],
      warnings: [],
    });
  });

  it('puts a placeholder in a tool output for a sealed part, with a warning naming the call', () => {
    const result = convert([
      { type: 'function_call', call_id: 'c1', name: 'x', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: [{ type: 'encrypted_content', encrypted_content: SEALED }] },
    ]);
    assert.deepStrictEqual(result.value[1], { role: 'tool', tool_call_id: 'c1', content: '[encrypted content omitted: it is not plain text, and only the service that sealed it can read it]' });
    assert.deepStrictEqual(result.warnings, [
      createWarning(
        'unsupported_content_part',
        "input[1].output[0]: content of type 'encrypted_content' cannot be sent to a Chat Completions backend; it is not plain text; a text placeholder was sent instead",
        { callId: 'c1' },
      ),
    ]);
  });
});

describe('convertInputItems: metadata Codex attaches to items', () => {
  it('ignores phase, provenance and internal_chat_message_metadata_passthrough without a warning', () => {
    const result = convert([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go', provenance: { type: 'user' } }], provenance: { type: 'developer_instructions', source: 'x' } },
      { type: 'message', role: 'assistant', phase: 'commentary', content: [{ type: 'output_text', text: 'Looking.', annotations: [] }], internal_chat_message_metadata_passthrough: { a: 1 } },
      { type: 'function_call', call_id: 'c1', name: 'ls', arguments: '{}', provenance: { type: 'model' } },
      { type: 'function_call_output', call_id: 'c1', output: 'a.txt', internal_chat_message_metadata_passthrough: { b: 2 } },
      { type: 'message', role: 'assistant', phase: 'final_answer', content: [{ type: 'output_text', text: 'One file.' }] },
      { type: 'message', role: 'assistant', phase: 'partial_answer', content: [{ type: 'output_text', text: 'More soon.' }] },
    ]);
    assert.deepStrictEqual(result, {
      value: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'Looking.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
        { role: 'assistant', content: 'One file.\n\nMore soon.' },
      ],
      warnings: [],
    });
  });
});

describe('convertInputItems: compaction records and unknown kinds', () => {
  it('drops context_compaction and compaction with a warning that says what they are', () => {
    const result = convert([user('hi'), { type: 'context_compaction', id: 'cc_1' }, { type: 'compaction', encrypted_content: SEALED }]);
    assert.deepStrictEqual(result, {
      value: [{ role: 'user', content: 'hi' }],
      warnings: [
        createWarning(
          'unknown_item_dropped',
          "input[1]: 'context_compaction' is a record of a remote compaction, readable only by OpenAI's service; dropped (with local compaction the summary arrives as a user message)",
          { raw: '{"type":"context_compaction","id":"cc_1"}' },
        ),
        createWarning(
          'unknown_item_dropped',
          "input[2]: 'compaction' is a record of a remote compaction, readable only by OpenAI's service; dropped (with local compaction the summary arrives as a user message)",
          { raw: JSON.stringify({ type: 'compaction', encrypted_content: SEALED }) },
        ),
      ],
    });
  });

  it("drops Codex's own catch-all kind 'other' with a warning", () => {
    assert.deepStrictEqual(convert([{ type: 'other' }]).warnings, [
      createWarning('unknown_item_dropped', "input[0]: an item Codex itself did not recognise (type 'other'); dropped", { raw: '{"type":"other"}' }),
    ]);
  });

  it('refuses compaction_trigger with an error that says how to get local compaction', () => {
    assert.throws(
      () => convert([user('hi'), { type: 'compaction_trigger' }]),
      (error: unknown) =>
        UnsupportedFeatureError.is(error) &&
        error.param === 'input[1]' &&
        error.message.startsWith('input[1]: compaction_trigger asks for remote compaction') &&
        error.message.includes("provider's id or name is 'openai' or 'azure' (any case)") &&
        error.message.includes('Codex compacts locally'),
    );
  });
});

describe('convertInputItems: image detail', () => {
  it("sends detail 'original' as 'high' with a warning, and passes auto, low and high as they are", () => {
    const result = convert([
      { type: 'function_call', call_id: 'c1', name: 'view_image', arguments: '{"path":"a.png"}' },
      { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_image', image_url: 'data:image/png;base64,AA==', detail: 'original' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,BB==', detail: 'low' }] },
    ]);
    assert.deepStrictEqual(result.value.slice(1), [
      { role: 'tool', tool_call_id: 'c1', content: '[image 1 of this tool result is attached in the next message]' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Image output of tool call c1:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==', detail: 'high' } },
        ],
      },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,BB==', detail: 'low' } }] },
    ]);
    assert.deepStrictEqual(result.warnings, [
      createWarning('image_detail_changed', "input[1].output[0].detail: image detail 'original' was sent as 'high' (Chat Completions accepts auto, low and high; shown once per process)"),
    ]);
  });

  it('shows that warning once per process, however many requests replay the image', () => {
    const ledger = createWarningLedger();
    const body = {
      model: 'm',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AA==', detail: 'original' }] }],
    };
    const first = convertResponsesRequestToChatRequest(body, resolveBridgeOptions(), ledger);
    const second = convertResponsesRequestToChatRequest(body, resolveBridgeOptions(), ledger);
    assert.deepStrictEqual(first.warnings.map((warning) => warning.kind), ['image_detail_changed']);
    assert.deepStrictEqual(second.warnings, []);
    assert.deepStrictEqual(second.chatRequest.messages, [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA==', detail: 'high' } }] }]);
  });
});

describe('lowering: configuration_update', () => {
  const update = (effort: string | null, extra: Record<string, unknown> = {}) => ({ type: 'configuration_update', ...(effort === null ? {} : { reasoning: { effort } }), ...extra });
  const lower = (input: unknown[], options: Partial<BridgeOptions> = {}, ledger = createWarningLedger()) =>
    convertResponsesRequestToChatRequest({ model: 'm', input, reasoning: { effort: 'medium' }, prompt_cache_key: 'thread-1' }, resolveBridgeOptions(options), ledger);

  it('applies the reasoning effort of the last update that sets one, says so, and adds no message', () => {
    const lowered = lower([user('a'), update('low'), user('b'), update('high'), update(null, { id: 'cu_3' })]);
    assert.equal(lowered.chatRequest.reasoning_effort, 'high');
    assert.deepStrictEqual(lowered.chatRequest.messages, [
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ]);
    assert.deepStrictEqual(lowered.warnings, [
      createWarning('configuration_update_applied', 'input[4]: configuration_update: it sets no reasoning effort; nothing was applied', { raw: '{"type":"configuration_update","id":"cu_3"}' }),
      createWarning('configuration_update_applied', "input[3]: configuration_update sets reasoning effort 'high' (the last of 2 updates wins); applied instead of reasoning.effort 'medium'"),
    ]);
  });

  it('names settings it cannot apply, and warns again only when the applied effort changes', () => {
    const ledger = createWarningLedger();
    const first = lower([user('a'), update('high', { model: 'other-model' })], {}, ledger);
    assert.deepStrictEqual(first.warnings.map((warning) => warning.detail), [
      "input[1]: configuration_update: its setting 'model' has no Chat Completions equivalent and was ignored",
      "input[1]: configuration_update sets reasoning effort 'high'; applied instead of reasoning.effort 'medium'",
    ]);
    const again = lower([user('a'), update('high', { model: 'other-model' }), user('b')], {}, ledger);
    assert.equal(again.chatRequest.reasoning_effort, 'high');
    assert.deepStrictEqual(again.warnings, []);
    const changed = lower([user('a'), update('high', { model: 'other-model' }), user('b'), update('low')], {}, ledger);
    assert.equal(changed.chatRequest.reasoning_effort, 'low');
    assert.deepStrictEqual(changed.warnings.map((warning) => warning.detail), [
      "input[3]: configuration_update sets reasoning effort 'low' (the last of 2 updates wins); applied instead of reasoning.effort 'medium'",
    ]);
  });

  it('goes through the reasoningEffort setting like reasoning.effort does', () => {
    const clamped = lower([user('a'), update('xhigh')], { reasoningEffort: 'clamp' });
    assert.equal(clamped.chatRequest.reasoning_effort, 'high');
    assert.deepStrictEqual(clamped.warnings.map((warning) => warning.kind), ['configuration_update_applied', 'reasoning_effort_changed']);
    assert.equal(clamped.warnings[1]?.detail, "the reasoning effort of configuration_update 'xhigh' was sent as 'high' (reasoningEffort: clamp)");
    const dropped = lower([user('a'), update('high')], { reasoningEffort: 'drop' });
    assert.equal(dropped.chatRequest.reasoning_effort, undefined);
  });

  it('leaves reasoning.effort alone without an update', () => {
    const lowered = lower([user('a')]);
    assert.equal(lowered.chatRequest.reasoning_effort, 'medium');
    assert.deepStrictEqual(lowered.warnings, []);
  });
});
