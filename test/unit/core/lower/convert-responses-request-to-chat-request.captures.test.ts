import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { resolveBridgeOptions } from '../../../../src/core/bridge-options.ts';
import type { ChatMessage, ChatRequest, ChatToolCall } from '../../../../src/core/chat/chat-completions-api.ts';
import { liftToolCall } from '../../../../src/core/lift/lift-tool-call.ts';
import { convertResponsesRequestToChatRequest, type LoweredRequest } from '../../../../src/core/lower/convert-responses-request-to-chat-request.ts';
import { isPlainObject, parseJson } from '../../../../src/core/parse-json.ts';
import { toWireName } from '../../../../src/core/tool-map.ts';
import { createWarningLedger } from '../../../../src/core/warnings.ts';
import { validateChatRequestForVllm } from '../../../../mock-backend/vllm-chat-validator.ts';
import { fixturePath } from '../../../support/fixtures.ts';

/*
 * Every request body Codex 0.154–0.171 POSTed in the reference pack lowers into a request vLLM
 * accepts, with explicit assertions per capture. CI runs with `shared/`
 * next to the repository.
 */
const CAPTURES_DIRECTORY = fixturePath('captures');

/** Only what these tests read from a capture; everything else passes untouched. */
const captureSchema = z.looseObject({
  instructions: z.string().optional(),
  tools: z.array(z.looseObject({ type: z.string(), name: z.string().optional() })).optional(),
  input: z.array(
    z.looseObject({
      type: z.string().optional(),
      role: z.string().optional(),
      call_id: z.string().optional(),
      name: z.string().optional(),
      namespace: z.string().optional(),
      input: z.string().optional(),
      arguments: z.string().optional(),
      content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).optional(),
      tools: z.array(z.unknown()).optional(),
    }),
  ),
});
type Capture = z.infer<typeof captureSchema>;

function readCapture(fileName: string): { raw: unknown; capture: Capture } {
  const parsed = parseJson(readFileSync(path.join(CAPTURES_DIRECTORY, fileName), 'utf8'));
  assert.ok(parsed.success, `${fileName} is not JSON`);
  return { raw: parsed.value, capture: captureSchema.parse(parsed.value) };
}

function lowerCapture(fileName: string): { capture: Capture; lowered: LoweredRequest } {
  const { raw, capture } = readCapture(fileName);
  return { capture, lowered: convertResponsesRequestToChatRequest(raw, resolveBridgeOptions(), createWarningLedger()) };
}

// The headers example is not a body, and the compaction capture is a list of whole exchanges (headers
// and body each) with its own assertions in compaction.test.ts; every other file is one request body.
const captureFiles = readdirSync(CAPTURES_DIRECTORY)
  .filter((fileName) => fileName.endsWith('.json') && fileName !== 'headers_example_v0.171.json' && !fileName.startsWith('f_local_compaction_'))
  .sort();

function toolNames(request: ChatRequest): string[] {
  return (request.tools ?? []).map((tool) => (tool.type === 'function' ? tool.function.name : `custom:${tool.custom.name}`));
}

function allToolCalls(messages: readonly ChatMessage[]): ChatToolCall[] {
  return messages.flatMap((message) => (message.role === 'assistant' ? (message.tool_calls ?? []) : []));
}

function findToolCall(lowered: LoweredRequest, callId: string): ChatToolCall {
  const call = allToolCalls(lowered.chatRequest.messages).find((candidate) => candidate.id === callId);
  assert.ok(call, `no lowered tool call ${callId}`);
  return call;
}

function textOf(item: Capture['input'][number]): string[] {
  return (item.content ?? []).map((part) => part.text ?? '');
}

function warningKinds(lowered: LoweredRequest): Array<[string, string | null]> {
  return lowered.warnings.map((warning) => [warning.kind, warning.tool]);
}

const DEFAULT_TOOL_NAMES = [
  'exec_command',
  'write_stdin',
  'request_user_input',
  'view_image',
  'multi_agent_v1__close_agent',
  'multi_agent_v1__resume_agent',
  'multi_agent_v1__send_input',
  'multi_agent_v1__spawn_agent',
  'multi_agent_v1__wait_agent',
  'get_goal',
  'create_goal',
  'update_goal',
];
const GPT_5_5_TOOL_NAMES = ['exec_command', 'write_stdin', 'request_user_input', 'apply_patch', 'view_image', 'get_goal', 'create_goal', 'update_goal'];
const CODE_MODE_ONLY_CARRIER_TOOL_NAMES = [
  'functions__exec',
  'functions__wait',
  'functions__request_user_input',
  'functions__request_user_input_async',
  'clock__sleep',
  'collaboration__followup_task',
  'collaboration__interrupt_agent',
  'collaboration__list_agents',
  'collaboration__send_message',
  'collaboration__spawn_agent',
  'collaboration__wait_agent',
];

describe('captures: every request lowers into a request vLLM accepts', () => {
  it('finds the capture files', () => {
    assert.equal(captureFiles.length, 32);
  });

  for (const fileName of captureFiles) {
    it(fileName, () => {
      const { capture, lowered } = lowerCapture(fileName);
      const { chatRequest } = lowered;

      assert.equal(validateChatRequestForVllm(chatRequest), null);
      assert.ok(chatRequest.tools && chatRequest.tools.length > 0);
      assert.ok(chatRequest.tools.every((tool) => tool.type === 'function'), 'only function tools');
      assert.equal(chatRequest.tool_choice, 'auto');
      assert.deepStrictEqual([...lowered.toolMap.keys()], toolNames(chatRequest));
      assert.deepStrictEqual([chatRequest.stream, chatRequest.stream_options], [true, { include_usage: true }]);
      assert.equal('chat_template_kwargs' in chatRequest, false);

      // One system message first; no developer role and no carrier left anywhere.
      const roles = chatRequest.messages.map((message) => message.role);
      assert.equal(roles[0], 'system');
      assert.equal(roles.filter((role) => role === 'system').length, 1);
      assert.ok(roles.every((role) => role === 'system' || role === 'user' || role === 'assistant' || role === 'tool'));
      assert.equal(JSON.stringify(chatRequest).includes('additional_tools'), false);

      // Every replayed call is present under its wire name with object JSON arguments.
      for (const call of allToolCalls(chatRequest.messages)) {
        const parsed = parseJson(call.function.arguments);
        assert.ok(parsed.success && isPlainObject(parsed.value), `arguments of ${call.id} are a JSON object`);
      }
      for (const item of capture.input) {
        if (item.type === 'custom_tool_call') {
          const call = findToolCall(lowered, item.call_id ?? '');
          assert.equal(call.function.name, toWireName(item.namespace ?? null, item.name ?? ''));
          const parsed = parseJson(call.function.arguments);
          assert.ok(parsed.success && isPlainObject(parsed.value));
          assert.deepStrictEqual(Object.keys(parsed.value), ['input']);
          assert.equal(parsed.value['input'], item.input, 'replayed custom input survives byte for byte');
        }
        if (item.type === 'function_call') {
          const call = findToolCall(lowered, item.call_id ?? '');
          assert.equal(call.function.name, toWireName(item.namespace ?? null, item.name ?? ''));
        }
      }
      const outputs = capture.input.filter((item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output');
      assert.equal(roles.filter((role) => role === 'tool').length, outputs.length);

      // Hosted tools never reach the backend, and each dropped kind is reported once.
      const hostedKinds = (capture.tools ?? []).map((tool) => tool.type).filter((type) => type !== 'function' && type !== 'custom' && type !== 'namespace');
      assert.deepStrictEqual(
        lowered.warnings.filter((warning) => warning.kind === 'hosted_tool_dropped').map((warning) => warning.tool),
        hostedKinds,
      );
      assert.equal(lowered.summary.inputItems, capture.input.length);
    });
  }
});

describe('captures: default mode (a)', () => {
  for (const fileName of captureFiles.filter((name) => name.startsWith('a_default_'))) {
    it(`${fileName}: twelve function tools, namespace flattened, web_search dropped with a warning`, () => {
      const { lowered } = lowerCapture(fileName);
      assert.deepStrictEqual(toolNames(lowered.chatRequest), DEFAULT_TOOL_NAMES);
      assert.ok([...lowered.toolMap.values()].every((entry) => entry.kind === 'function'));
      assert.deepStrictEqual(lowered.toolMap.get('multi_agent_v1__close_agent'), {
        wireName: 'multi_agent_v1__close_agent',
        name: 'close_agent',
        namespace: 'multi_agent_v1',
        kind: 'function',
        grammar: null,
      });
      assert.deepStrictEqual(warningKinds(lowered), [['hosted_tool_dropped', 'web_search']]);
      assert.equal(lowered.chatRequest.parallel_tool_calls, true);
      assert.ok(lowered.chatRequest.tools?.every((tool) => tool.type === 'function' && !('strict' in tool.function)));
    });
  }

  it('a_default_qwen3-coder_v0.171.req2.json: replays the exec_command call byte for byte and its string output', () => {
    const { capture, lowered } = lowerCapture('a_default_qwen3-coder_v0.171.req2.json');
    const call = capture.input[4];
    const output = capture.input[5];
    assert.deepStrictEqual(lowered.chatRequest.messages.slice(-2), [
      { role: 'assistant', content: null, tool_calls: [{ id: call?.call_id, type: 'function', function: { name: 'exec_command', arguments: call?.arguments } }] },
      { role: 'tool', tool_call_id: output?.call_id, content: output?.['output'] },
    ]);
  });
});

describe('captures: ≤0.161 instructions and ≥0.162 developer prompts', () => {
  it('0.161 and 0.162 give the same messages apart from the sanitised base prompt text', () => {
    const old = lowerCapture('a_default_qwen3-coder_v0.161.json');
    const current = lowerCapture('a_default_qwen3-coder_v0.162.json');
    const oldBase = old.capture.instructions ?? '';
    const currentBase = textOf(current.capture.input[0] ?? {}).join('');
    const developerTexts = textOf(current.capture.input[1] ?? {});
    assert.deepStrictEqual(textOf(old.capture.input[0] ?? {}), developerTexts);
    assert.deepStrictEqual(old.lowered.chatRequest.messages[0], { role: 'system', content: [oldBase, ...developerTexts].join('\n\n') });
    assert.deepStrictEqual(current.lowered.chatRequest.messages[0], { role: 'system', content: [currentBase, ...developerTexts].join('\n\n') });
    assert.deepStrictEqual(old.lowered.chatRequest.messages.slice(1), current.lowered.chatRequest.messages.slice(1));
    assert.deepStrictEqual(old.lowered.chatRequest.tools, current.lowered.chatRequest.tools);
  });

  it('0.154 and 0.171 give the same message shape', () => {
    const old = lowerCapture('a_default_qwen3-coder_v0.154.req2.json');
    const current = lowerCapture('a_default_qwen3-coder_v0.171.req2.json');
    const shape = (lowered: LoweredRequest) =>
      lowered.chatRequest.messages.map((message) => [message.role, message.role === 'assistant' ? (message.tool_calls ?? []).length : typeof message.content]);
    assert.deepStrictEqual(shape(old.lowered), shape(current.lowered));
    assert.deepStrictEqual(shape(current.lowered), [
      ['system', 'string'],
      ['user', 'string'],
      ['user', 'string'],
      ['assistant', 1],
      ['tool', 'string'],
    ]);
    const system = old.lowered.chatRequest.messages[0];
    assert.ok(system?.role === 'system' && system.content.startsWith(`${old.capture.instructions ?? ''}\n\n<skills_instructions>`));
  });
});

describe('captures: freeform apply_patch (b)', () => {
  for (const fileName of captureFiles.filter((name) => name.startsWith('b_freeform_apply_patch_gpt-5.5'))) {
    it(`${fileName}: apply_patch bridged with its lark grammar; tool_search and web_search dropped`, () => {
      const { capture, lowered } = lowerCapture(fileName);
      assert.deepStrictEqual(toolNames(lowered.chatRequest), GPT_5_5_TOOL_NAMES);
      const declared = (capture.tools ?? []).find((tool) => tool.name === 'apply_patch');
      const format = declared?.['format'];
      assert.ok(isPlainObject(format) && typeof format['definition'] === 'string');
      const bridged = lowered.chatRequest.tools?.[3];
      assert.ok(bridged?.type === 'function');
      assert.ok(bridged.function.description?.startsWith(`${String(declared?.['description'])}\n\nIn this interface`));
      // The grammar ends with a newline, so the closing fence follows it directly.
      assert.ok(format['definition'].endsWith('\n'));
      assert.ok(bridged.function.description?.endsWith(`\`\`\`lark\n${format['definition']}\`\`\``));
      assert.deepStrictEqual(bridged.function.parameters, {
        type: 'object',
        properties: { input: { type: 'string', description: 'Raw free-form input for the `apply_patch` tool.' } },
        required: ['input'],
        additionalProperties: false,
      });
      assert.deepStrictEqual(lowered.toolMap.get('apply_patch'), {
        wireName: 'apply_patch',
        name: 'apply_patch',
        namespace: null,
        kind: 'custom',
        grammar: { syntax: 'lark', definition: format['definition'] },
      });
      assert.deepStrictEqual(warningKinds(lowered), [
        ['grammar_not_enforced', 'apply_patch'],
        ['hosted_tool_dropped', 'tool_search'],
        ['hosted_tool_dropped', 'web_search'],
      ]);
      assert.equal(lowered.chatRequest.reasoning_effort, 'medium');
    });
  }

  it('b_freeform_apply_patch_gpt-5.5_v0.171.req2.json: replays the custom call as {"input": …} and the string output', () => {
    const { capture, lowered } = lowerCapture('b_freeform_apply_patch_gpt-5.5_v0.171.req2.json');
    const call = capture.input.find((item) => item.type === 'custom_tool_call');
    assert.deepStrictEqual(lowered.chatRequest.messages.slice(-2), [
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_resp_3_mx1oihpd',
            type: 'function',
            function: { name: 'apply_patch', arguments: '{"input": "*** Begin Patch\\n*** Add File: hello.txt\\n+hello from mock\\n*** End Patch"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_resp_3_mx1oihpd', content: 'Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nA hello.txt\n' },
    ]);
    assert.equal(call?.input, '*** Begin Patch\n*** Add File: hello.txt\n+hello from mock\n*** End Patch');
  });

  it('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json: default surface plus the bridged apply_patch', () => {
    const { lowered } = lowerCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json');
    assert.deepStrictEqual(toolNames(lowered.chatRequest), [...DEFAULT_TOOL_NAMES.slice(0, 3), 'apply_patch', ...DEFAULT_TOOL_NAMES.slice(3)]);
    assert.equal(lowered.toolMap.get('apply_patch')?.kind, 'custom');
    assert.deepStrictEqual(warningKinds(lowered), [
      ['grammar_not_enforced', 'apply_patch'],
      ['hosted_tool_dropped', 'web_search'],
    ]);
  });
});

describe('captures: code mode (c)', () => {
  for (const fileName of captureFiles.filter((name) => name.startsWith('c_code_mode_only_additional_tools') || name.startsWith('d_replay_code_mode'))) {
    it(`${fileName}: the carrier becomes functions__exec (custom, namespace functions) and the other namespaces`, () => {
      const { capture, lowered } = lowerCapture(fileName);
      assert.equal(capture.tools, undefined);
      assert.equal(capture.input[0]?.type, 'additional_tools');
      assert.deepStrictEqual(toolNames(lowered.chatRequest), CODE_MODE_ONLY_CARRIER_TOOL_NAMES);
      assert.deepStrictEqual(lowered.toolMap.get('functions__exec')?.kind, 'custom');
      assert.deepStrictEqual(lowered.toolMap.get('functions__exec')?.namespace, 'functions');
      assert.deepStrictEqual(lowered.toolMap.get('functions__wait')?.kind, 'function');
      assert.ok(lowered.summary.tools.every((tool) => tool.source === 'additional_tools'));
      assert.equal(lowered.chatRequest.parallel_tool_calls, false);
      // The four developer messages after the carrier still form the leading run.
      const developerTexts = capture.input.filter((item) => item.role === 'developer').flatMap(textOf);
      assert.deepStrictEqual(lowered.chatRequest.messages[0], { role: 'system', content: developerTexts.join('\n\n') });
      assert.deepStrictEqual(lowered.chatRequest.messages.slice(1, 3).map((message) => message.role), ['user', 'user']);
      assert.deepStrictEqual(warningKinds(lowered), [['grammar_not_enforced', 'exec']]);
    });
  }

  it('code mode: exec declares the apply_patch helper only where Codex lists it, and a patch sent as exec becomes that helper call', () => {
    const withHelper = lowerCapture('c_code_mode_only_additional_tools_gpt-6-sol_v0.171.req1.json').lowered;
    const withoutHelper = lowerCapture('c_enable_code_mode_only_qwen3-coder_v0.171.req1.json').lowered;
    assert.equal(withHelper.toolMap.get('functions__exec')?.execAppliesPatches, true);
    assert.equal([...withoutHelper.toolMap.values()].some((entry) => entry.execAppliesPatches === true), false);

    const patch = '*** Begin Patch\n*** Add File: a.txt\n+hi "there"\n*** End Patch';
    const lift = (toolMap: typeof withHelper.toolMap, wireName: string, input: string) =>
      liftToolCall({ wireName, argumentsText: JSON.stringify({ input }), callId: 'call_x', finishReason: 'tool_calls', toolMap });
    const lifted = lift(withHelper.toolMap, 'functions__exec', `${patch}\n`);
    assert.equal(lifted.item?.type === 'custom_tool_call' && lifted.item.input, `text(await tools.apply_patch(${JSON.stringify(`${patch}\n`)}));\n`);
    assert.deepStrictEqual(lifted.warnings.map((warning) => [warning.kind, warning.raw]), [['grammar_repaired', `${patch}\n`]]);
    // JavaScript, a patch Codex would reject, and an exec without the helper are left as written.
    for (const input of ['text(1)', `${patch.replace('*** End Patch', '')}`]) {
      const untouched = lift(withHelper.toolMap, 'functions__exec', input);
      assert.equal(untouched.item?.type === 'custom_tool_call' && untouched.item.input, input);
    }
    const execWire = [...withoutHelper.toolMap.values()].find((entry) => entry.name === 'exec')?.wireName ?? 'exec';
    const plain = lift(withoutHelper.toolMap, execWire, patch);
    assert.equal(plain.item?.type === 'custom_tool_call' && plain.item.input, patch);
  });

  it('c_code_mode_only_additional_tools_gpt-6-sol_v0.171.req2.json: replays functions__exec and joins the structured output', () => {
    const { capture, lowered } = lowerCapture('c_code_mode_only_additional_tools_gpt-6-sol_v0.171.req2.json');
    const output = capture.input.at(-1)?.['output'];
    assert.ok(Array.isArray(output));
    const texts = output.map((part: unknown) => (isPlainObject(part) && typeof part['text'] === 'string' ? part['text'] : ''));
    assert.equal(texts[0]?.endsWith('\n'), true);
    assert.deepStrictEqual(lowered.chatRequest.messages.slice(-2), [
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_resp_1_mx1oiudo',
            type: 'function',
            function: { name: 'functions__exec', arguments: '{"input": "const r = await tools.exec_command({cmd: \\"ls\\"});\\ntext(JSON.stringify(r));"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_resp_1_mx1oiudo', content: texts.join('') },
    ]);
  });

  it('d_replay_code_mode_syntax_error_v0.171.json: a replayed exec without namespace keeps its bare wire name', () => {
    const { lowered } = lowerCapture('d_replay_code_mode_syntax_error_v0.171.json');
    const call = allToolCalls(lowered.chatRequest.messages)[0];
    assert.deepStrictEqual(call?.function, { name: 'exec', arguments: '{"input": "this is not (valid javascript"}' });
  });

  for (const fileName of captureFiles.filter((name) => name.startsWith('c_enable_code_mode_only_'))) {
    it(`${fileName}: top-level exec (custom, no namespace), wait, request_user_input; web_search dropped`, () => {
      const { lowered } = lowerCapture(fileName);
      assert.deepStrictEqual(toolNames(lowered.chatRequest), ['exec', 'wait', 'request_user_input']);
      assert.deepStrictEqual(lowered.toolMap.get('exec')?.kind, 'custom');
      assert.deepStrictEqual(lowered.toolMap.get('exec')?.namespace, null);
      assert.deepStrictEqual(warningKinds(lowered), [
        ['grammar_not_enforced', 'exec'],
        ['hosted_tool_dropped', 'web_search'],
      ]);
    });
  }

  for (const fileName of captureFiles.filter((name) => name.startsWith('c_enable_code_mode_qwen3'))) {
    it(`${fileName}: exec and wait in front of the default tools`, () => {
      const { lowered } = lowerCapture(fileName);
      assert.deepStrictEqual(toolNames(lowered.chatRequest), ['exec', 'wait', ...DEFAULT_TOOL_NAMES]);
      assert.deepStrictEqual(lowered.toolMap.get('exec')?.kind, 'custom');
    });
  }
});

describe('captures: replayed history (d, e)', () => {
  it('d_replay_malformed_function_arguments_v0.171.json: re-wraps the malformed arguments with a warning', () => {
    const { lowered } = lowerCapture('d_replay_malformed_function_arguments_v0.171.json');
    assert.deepStrictEqual(findToolCall(lowered, 'call_resp_72_mx1okyvd').function, {
      name: 'exec_command',
      arguments: '{"_raw_arguments": "{\\"cmd\\": \\"ls\\", oops"}',
    });
    assert.deepStrictEqual(warningKinds(lowered), [
      ['hosted_tool_dropped', 'web_search'],
      ['replay_rewrapped', 'exec_command'],
    ]);
  });

  it('d_replay_namespaced_function_call_with_namespace_v0.171.json: joins the namespace', () => {
    const { lowered } = lowerCapture('d_replay_namespaced_function_call_with_namespace_v0.171.json');
    assert.deepStrictEqual(allToolCalls(lowered.chatRequest.messages).map((call) => call.function), [
      { name: 'multi_agent_v1__close_agent', arguments: '{"target":"nobody"}' },
    ]);
  });

  it('d_replay_namespaced_function_call_without_namespace_v0.171.json: keeps the bare name', () => {
    const { lowered } = lowerCapture('d_replay_namespaced_function_call_without_namespace_v0.171.json');
    assert.deepStrictEqual(allToolCalls(lowered.chatRequest.messages).map((call) => call.function.name), ['close_agent']);
  });

  it('d_replay_function_tool_returned_as_custom_call_v0.171.json: a custom call is replayed as a bridged call even for a function tool', () => {
    const { lowered } = lowerCapture('d_replay_function_tool_returned_as_custom_call_v0.171.json');
    assert.deepStrictEqual(allToolCalls(lowered.chatRequest.messages).map((call) => call.function), [
      { name: 'exec_command', arguments: '{"input": "{\\"cmd\\":\\"echo hi\\"}"}' },
    ]);
  });

  it('d_replay_custom_tool_returned_as_function_call_v0.171.json: a function call to apply_patch keeps its object arguments byte for byte', () => {
    const { capture, lowered } = lowerCapture('d_replay_custom_tool_returned_as_function_call_v0.171.json');
    const call = capture.input.find((item) => item.type === 'function_call');
    assert.deepStrictEqual(findToolCall(lowered, 'call_mm_1').function, { name: 'apply_patch', arguments: call?.arguments });
  });

  it('d_replay_unknown_custom_tool_v0.171.json: an undeclared custom tool is still replayed as a bridged call', () => {
    const { lowered } = lowerCapture('d_replay_unknown_custom_tool_v0.171.json');
    assert.deepStrictEqual(allToolCalls(lowered.chatRequest.messages).map((call) => call.function), [
      { name: 'no_such_custom', arguments: '{"input": "hello"}' },
    ]);
    assert.equal(lowered.toolMap.has('no_such_custom'), false);
  });

  it('d_retry_after_stream_without_completed_v0.171.req2.json: the partial assistant message has no tool_calls key', () => {
    const { lowered } = lowerCapture('d_retry_after_stream_without_completed_v0.171.req2.json');
    assert.deepStrictEqual(lowered.chatRequest.messages.at(-1), { role: 'assistant', content: 'partial answer without completion' });
  });

  it('d_retry_after_stream_without_completed_v0.171.req3.json: text and the following call merge into one assistant message', () => {
    const { lowered } = lowerCapture('d_retry_after_stream_without_completed_v0.171.req3.json');
    const [assistant, tool] = lowered.chatRequest.messages.slice(-2);
    assert.ok(assistant?.role === 'assistant');
    assert.equal(assistant.content, 'partial answer without completion');
    assert.equal(assistant.tool_calls?.length, 1);
    assert.equal(tool?.role, 'tool');
  });

  it('e_end_turn_false_resample_v0.171.req2.json: the first answer is replayed as an assistant message', () => {
    const { lowered } = lowerCapture('e_end_turn_false_resample_v0.171.req2.json');
    assert.deepStrictEqual(lowered.chatRequest.messages.at(-1), { role: 'assistant', content: 'FIRST' });
  });
});
