import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import type { ChatCompletionChunk } from '../../../../src/core/chat/chat-completions-api.ts';
import { createGrammarCache } from '../../../../src/core/grammar/grammar-cache.ts';
import type { ItemIdPrefix } from '../../../../src/core/ids.ts';
import type { ResponsesOutputItem, ResponsesResponse, ResponsesStreamEvent } from '../../../../src/core/responses/responses-output.ts';
import { ChatSsePump } from '../../../../src/core/stream/chat-sse-pump.ts';
import { ChatStreamTranslator, type StreamTranslatorOptions } from '../../../../src/core/stream/chat-stream-to-responses-events.ts';
import type { ToolMap, ToolMapEntry } from '../../../../src/core/tool-map.ts';
import { assertCodexAcceptsStream, type CodexStreamCheckOptions } from '../../../support/codex-stream-oracle.ts';
import { fixturePath } from '../../../support/fixtures.ts';

// ---------- fixtures and helpers ----------

const BACKEND_EXAMPLES = fixturePath('backend-examples');
const TRICKY_INPUT = readFileSync(path.join(BACKEND_EXAMPLES, 'tricky-input.txt'), 'utf8');
/** XML parsers (qwen3_coder, SGLang, Ollama's qwen3coder) drop exactly one trailing newline. */
const TRICKY_INPUT_TRIMMED = TRICKY_INPUT.replace(/\n$/, '');
const ARGUMENTS_MATRIX = JSON.parse(readFileSync(path.join(BACKEND_EXAMPLES, 'arguments-matrix.json'), 'utf8')) as Record<string, string>;

function toolEntry(wireName: string, name: string, namespace: string | null, kind: ToolMapEntry['kind']): [string, ToolMapEntry] {
  return [wireName, { wireName, name, namespace, kind, grammar: null }];
}

const TOOL_MAP: ToolMap = new Map([
  toolEntry('apply_patch', 'apply_patch', null, 'custom'),
  toolEntry('functions__exec', 'exec', 'functions', 'custom'),
  toolEntry('functions__wait', 'wait', 'functions', 'function'),
  toolEntry('exec_command', 'exec_command', null, 'function'),
  toolEntry('multi_agent_v1__close_agent', 'close_agent', 'multi_agent_v1', 'function'),
]);

const RESPONSE_ID = 'resp_test';
const CREATED_AT = 1790000000;
const MODEL = 'qwen3-coder';

function createTranslator(options: Partial<StreamTranslatorOptions> = {}): ChatStreamTranslator {
  let itemCounter = 0;
  let callCounter = 0;
  return new ChatStreamTranslator({
    responseId: RESPONSE_ID,
    model: MODEL,
    createdAt: CREATED_AT,
    toolMap: TOOL_MAP,
    createItemId: (prefix: ItemIdPrefix) => `${prefix}_${itemCounter++}`,
    createCallId: () => `call_synthesised_${callCounter++}`,
    ...options,
  });
}

interface StreamRun {
  events: ResponsesStreamEvent[];
  translator: ChatStreamTranslator;
}

/** start → every chunk → finish, as the server drives it when upstream ends with `[DONE]`. */
function translate(chunks: ChatCompletionChunk[], options: Partial<StreamTranslatorOptions> = {}): StreamRun {
  const translator = createTranslator(options);
  const events = [...translator.start()];
  for (const chunk of chunks) events.push(...translator.push(chunk));
  events.push(...translator.finish());
  return { events, translator };
}

/** Replays a backend SSE body through the server's own pump (chat-sse-pump.ts). */
function translateSse(body: string, options: Partial<StreamTranslatorOptions> = {}): StreamRun {
  const translator = createTranslator(options);
  const pump = new ChatSsePump(translator);
  // EOF without `[DONE]` (Ollama's error path): the pump finishes at the end of the body.
  const events = [...translator.start(), ...pump.push(Buffer.from(body, 'utf8')), ...pump.end()];
  return { events, translator };
}

function translateSseFile(name: string, options: Partial<StreamTranslatorOptions> = {}): StreamRun {
  return translateSse(readFileSync(path.join(BACKEND_EXAMPLES, name), 'utf8'), options);
}

/** A backend SSE body: compact `data:` frames (vLLM/SGLang/Ollama style) and `[DONE]`. */
function renderSse(frames: unknown[], options: { done?: boolean } = {}): string {
  const body = frames.map((frame) => `data: ${JSON.stringify(frame)}\n\n`).join('');
  return options.done === false ? body : `${body}data: [DONE]\n\n`;
}

type Delta = NonNullable<NonNullable<ChatCompletionChunk['choices']>[number]['delta']>;

function chunk(delta: Delta, finishReason: string | null = null): ChatCompletionChunk {
  return {
    id: 'chatcmpl-8f3a1c2e9b7d4a60',
    object: 'chat.completion.chunk',
    created: 1779158289,
    model: MODEL,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

function usageChunk(usage: NonNullable<ChatCompletionChunk['usage']>): ChatCompletionChunk {
  return { id: 'chatcmpl-8f3a1c2e9b7d4a60', object: 'chat.completion.chunk', created: 1779158289, model: MODEL, choices: [], usage };
}

function toolCallDelta(
  index: number | null,
  fields: { id?: string | null; name?: string | null; arguments?: string | Record<string, unknown>; type?: string },
): NonNullable<Delta['tool_calls']>[number] {
  const call: NonNullable<Delta['tool_calls']>[number] = {};
  if (index !== null) call.index = index;
  if (fields.id !== undefined) call.id = fields.id;
  if (fields.type !== undefined) call.type = fields.type;
  const fn: { name?: string | null; arguments?: string | Record<string, unknown> } = {};
  if (fields.name !== undefined) fn.name = fields.name;
  if (fields.arguments !== undefined) fn.arguments = fields.arguments;
  call.function = fn;
  return call;
}

function types(events: ResponsesStreamEvent[]): string[] {
  return events.map((event) => event.type);
}

function doneItems(events: ResponsesStreamEvent[]): ResponsesOutputItem[] {
  const items: ResponsesOutputItem[] = [];
  for (const event of events) if (event.type === 'response.output_item.done') items.push(event.item);
  return items;
}

function terminalResponse(events: ResponsesStreamEvent[]): { type: string; response: ResponsesResponse } {
  const terminals = events.filter(
    (event) => event.type === 'response.completed' || event.type === 'response.incomplete' || event.type === 'response.failed',
  );
  assert.equal(terminals.length, 1, 'exactly one terminal event');
  const terminal = terminals[0];
  assert.ok(terminal && 'response' in terminal);
  assert.equal(events[events.length - 1], terminal, 'the terminal event is the last event');
  return { type: terminal.type, response: terminal.response };
}

/** Concatenated `custom_tool_call_input.delta` text per output index. */
function customInputDeltas(events: ResponsesStreamEvent[], outputIndex: number): string {
  let text = '';
  for (const event of events) {
    if (event.type === 'response.custom_tool_call_input.delta' && event.output_index === outputIndex) text += event.delta;
  }
  return text;
}

function customInputDone(events: ResponsesStreamEvent[], outputIndex: number): string | undefined {
  for (const event of events) {
    if (event.type === 'response.custom_tool_call_input.done' && event.output_index === outputIndex) return event.input;
  }
  return undefined;
}

/** Kinds and namespaces Codex requires for the tools of TOOL_MAP. */
const ORACLE_OPTIONS: CodexStreamCheckOptions = {
  expectedKinds: { apply_patch: 'custom_tool_call', exec: 'custom_tool_call', wait: 'function_call', exec_command: 'function_call', close_agent: 'function_call' },
  namespaces: { exec: 'functions', wait: 'functions', close_agent: 'multi_agent_v1' },
};

/** Every stream goes through the Codex oracle and the translator's own invariants. */
function check(events: ResponsesStreamEvent[], options: CodexStreamCheckOptions = {}): void {
  assertCodexAcceptsStream(events, { ...ORACLE_OPTIONS, ...options });
  events.forEach((event, position) => assert.equal(event.sequence_number, position, 'sequence numbers count every event from 0'));
  const { response } = terminalResponse(events);
  assert.equal(response.id, RESPONSE_ID);
  assert.equal(response.object, 'response');
  assert.ok(!('end_turn' in response), 'never end_turn');
  assert.deepEqual(response.output, sortByOutputIndex(events), 'terminal output = the done items in output_index order');
}

function sortByOutputIndex(events: ResponsesStreamEvent[]): ResponsesOutputItem[] {
  const done: Array<{ index: number; item: ResponsesOutputItem }> = [];
  for (const event of events) if (event.type === 'response.output_item.done') done.push({ index: event.output_index, item: event.item });
  return done.sort((left, right) => left.index - right.index).map((entry) => entry.item);
}

const SNAPSHOT: ResponsesResponse = {
  id: RESPONSE_ID,
  object: 'response',
  created_at: CREATED_AT,
  model: MODEL,
  status: 'in_progress',
  output: [],
};

const ZERO_USAGE = {
  input_tokens: 0,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 0,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 0,
};

// ---------- text, usage, reasoning ----------

describe('text and usage', () => {
  it('replays vLLM text with a usage chunk into the full message group and completed', () => {
    const { events, translator } = translateSseFile('vllm-stream-text-usage.sse');
    check(events);
    const message = {
      type: 'message' as const,
      id: 'msg_0',
      role: 'assistant' as const,
      status: 'completed' as const,
      content: [{ type: 'output_text' as const, text: 'Hello!', annotations: [] }],
    };
    const usage = {
      input_tokens: 31,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 34,
    };
    assert.deepEqual(events, [
      { type: 'response.created', sequence_number: 0, response: SNAPSHOT },
      { type: 'response.in_progress', sequence_number: 1, response: SNAPSHOT },
      {
        type: 'response.output_item.added',
        sequence_number: 2,
        output_index: 0,
        item: { type: 'message', id: 'msg_0', role: 'assistant', status: 'in_progress', content: [] },
      },
      {
        type: 'response.content_part.added',
        sequence_number: 3,
        item_id: 'msg_0',
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      },
      { type: 'response.output_text.delta', sequence_number: 4, item_id: 'msg_0', output_index: 0, content_index: 0, delta: 'Hello' },
      { type: 'response.output_text.delta', sequence_number: 5, item_id: 'msg_0', output_index: 0, content_index: 0, delta: '!' },
      { type: 'response.output_text.done', sequence_number: 6, item_id: 'msg_0', output_index: 0, content_index: 0, text: 'Hello!' },
      {
        type: 'response.content_part.done',
        sequence_number: 7,
        item_id: 'msg_0',
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: 'Hello!', annotations: [] },
      },
      { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: message },
      {
        type: 'response.completed',
        sequence_number: 9,
        response: { ...SNAPSHOT, status: 'completed', output: [message], usage },
      },
    ]);
    assert.deepEqual(translator.warnings, []);
    assert.deepEqual(translator.finalResponse, { ...SNAPSHOT, status: 'completed', output: [message], usage });
    assert.equal(translator.terminated, true);
  });

  it('maps cached and reasoning token details, and gives zeros without a usage chunk', () => {
    const withUsage = translate([
      chunk({ content: 'Hi' }, 'stop'),
      usageChunk({ prompt_tokens: 10, completion_tokens: 4, total_tokens: 14, prompt_tokens_details: null, reasoning_tokens: 2 }),
    ]);
    check(withUsage.events);
    assert.deepEqual(terminalResponse(withUsage.events).response.usage, {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 4,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 14,
    });
    const withoutUsage = translate([chunk({ content: 'Hi' }, 'stop')]);
    check(withoutUsage.events);
    assert.deepEqual(terminalResponse(withoutUsage.events).response.usage, ZERO_USAGE);
  });

  it('holds whitespace-only text until real text arrives, then sends it too', () => {
    const { events } = translate([chunk({ role: 'assistant', content: '' }), chunk({ content: '\n\n' }), chunk({ content: 'Hi' }, 'stop')]);
    check(events);
    const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
    assert.deepEqual(deltas, ['\n\nHi']);
    assert.deepEqual(doneItems(events).map((item) => item.type === 'message' && item.content[0]?.text), ['\n\nHi']);
  });

  it('sends whitespace inside an open message straight through', () => {
    const { events } = translate([chunk({ content: 'a' }), chunk({ content: ' ' }), chunk({ content: 'b' }, 'stop')]);
    check(events);
    const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
    assert.deepEqual(deltas, ['a', ' ', 'b']);
  });

  it('takes the last text token from the finish chunk', () => {
    const { events } = translate([chunk({ content: 'Hel' }), chunk({ content: 'lo' }, 'stop')]);
    check(events);
    assert.deepEqual(doneItems(events).map((item) => item.type === 'message' && item.content[0]?.text), ['Hello']);
  });

  it('answers whitespace-only text with an empty completed response', () => {
    const { events } = translate([chunk({ content: '\n\n' }, 'stop')]);
    check(events);
    assert.deepEqual(types(events), ['response.created', 'response.in_progress', 'response.completed']);
  });
});

describe('reasoning', () => {
  it('counts vLLM 0.11.1–0.15 reasoning once although both keys carry it', () => {
    const { events } = translateSseFile('vllm-0.12-stream-reasoning-interim.sse');
    check(events);
    assert.deepEqual(types(events), [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    assert.deepEqual(doneItems(events), [
      { type: 'reasoning', id: 'rs_0', summary: [], content: [{ type: 'reasoning_text', text: 'Thinking' }] },
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hi', annotations: [] }] },
    ]);
    assert.deepEqual(terminalResponse(events).response.usage, ZERO_USAGE);
  });

  it('reads reasoning_content (SGLang, llama.cpp, vLLM ≤0.11.0) when reasoning is absent', () => {
    const { events } = translate([chunk({ reasoning_content: 'A' }), chunk({ reasoning_content: 'B', reasoning: null }), chunk({ content: 'C' }, 'stop')]);
    check(events);
    const reasoningDeltas = events.flatMap((event) => (event.type === 'response.reasoning_text.delta' ? [event.delta] : []));
    assert.deepEqual(reasoningDeltas, ['A', 'B']);
    assert.equal(doneItems(events)[0]?.type, 'reasoning');
  });

  it('closes the reasoning item when text opens and a new reasoning item opens when reasoning resumes', () => {
    const { events } = translate([chunk({ reasoning: 'r1' }), chunk({ content: 't1' }), chunk({ reasoning: 'r2' }), chunk({}, 'stop')]);
    check(events);
    assert.deepEqual(
      doneItems(events).map((item) => item.type),
      ['reasoning', 'message', 'reasoning'],
    );
  });
});

// ---------- tool calls: the delta variants engines send for a call's first fragment ----------

describe('tool-call delta variants', () => {
  it('(a) hermes at U: name entry and first args entry for one index in one chunk; "\\n\\n" opens no message', () => {
    const { events, translator } = translateSseFile('vllm-stream-reasoning-toolcall-hermes.sse');
    check(events);
    const items = doneItems(events);
    assert.deepEqual(
      items.map((item) => item.type),
      ['reasoning', 'custom_tool_call'],
    );
    assert.deepEqual(items[1], {
      type: 'custom_tool_call',
      id: 'ctc_1',
      call_id: 'chatcmpl-tool-9c1e4b7f2a6d8e30',
      name: 'apply_patch',
      input: TRICKY_INPUT,
      status: 'completed',
    });
    assert.equal(customInputDeltas(events, 1), TRICKY_INPUT);
    assert.equal(customInputDone(events, 1), TRICKY_INPUT);
    assert.deepEqual(terminalResponse(events).response.usage?.total_tokens, 983);
    assert.deepEqual(translator.warnings, []);
  });

  it('(b) old hermes: a name-only chunk without arguments, then fragments', () => {
    const { events } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'chatcmpl-tool-1', type: 'function', name: 'apply_patch' })] }),
      chunk({ tool_calls: [toolCallDelta(0, { arguments: '{"input": "*** Begin' })] }),
      chunk({ tool_calls: [toolCallDelta(0, { arguments: ' Patch\\n"}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    assert.equal(customInputDeltas(events, 0), '*** Begin Patch\n');
    assert.equal(customInputDone(events, 0), '*** Begin Patch\n');
  });

  it('(c) legacy qwen3_coder: header with arguments "", then "{", the whole member, "}"', () => {
    const { events, translator } = translateSseFile('vllm-stream-toolcall-qwen3coder.sse');
    check(events);
    const items = doneItems(events);
    assert.deepEqual(items[0], {
      type: 'message',
      id: 'msg_0',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: "I'll apply the fix.\n\n", annotations: [] }],
    });
    assert.equal(items[1]?.type === 'custom_tool_call' && items[1].call_id, 'call_5f0c3a9b1d7e4c2a8b6f0e1d');
    const inputDeltas = events.filter((event) => event.type === 'response.custom_tool_call_input.delta');
    assert.equal(inputDeltas.length, 1, 'the whole member arrives in one fragment and becomes one delta');
    assert.equal(customInputDeltas(events, 1), TRICKY_INPUT_TRIMMED);
    assert.equal(customInputDone(events, 1), TRICKY_INPUT_TRIMMED);
    assert.deepEqual(translator.warnings, []);
  });

  it('(d) qwen3_xml: the id repeated on every delta does not start a new call', () => {
    const id = 'call_0123456789abcdef01234567';
    const { events } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id, type: 'function', name: 'exec_command', arguments: '' })] }),
      chunk({ tool_calls: [toolCallDelta(0, { id, type: 'function', arguments: '{"cmd": ' })] }),
      chunk({ tool_calls: [toolCallDelta(0, { id, type: 'function', arguments: '"ls"}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    assert.deepEqual(doneItems(events), [
      { type: 'function_call', id: 'fc_0', call_id: id, name: 'exec_command', arguments: '{"cmd": "ls"}', status: 'completed' },
    ]);
    const argumentDeltas = events.flatMap((event) => (event.type === 'response.function_call_arguments.delta' ? [event.delta] : []));
    assert.deepEqual(argumentDeltas, ['{"cmd": ', '"ls"}'], 'function deltas are the raw fragments');
  });

  it('(e) harmony: raw compact JSON pieces after an arguments:"" opener', () => {
    const full = ARGUMENTS_MATRIX.vllm_gptoss_stream_concat as string;
    const cut = full.indexOf('"*** Begin');
    const { events } = translate([
      chunk({ reasoning: 'Need a patch.' }),
      chunk({ tool_calls: [toolCallDelta(0, { id: 'chatcmpl-tool-aa', type: 'function', name: 'apply_patch', arguments: '' })] }),
      chunk({ tool_calls: [toolCallDelta(0, { arguments: full.slice(0, cut) })] }),
      chunk({ tool_calls: [toolCallDelta(0, { arguments: full.slice(cut, cut + 40) })] }),
      chunk({ tool_calls: [toolCallDelta(0, { arguments: full.slice(cut + 40) })] }),
      chunk({}, 'tool_calls'),
      usageChunk({ prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 }),
    ]);
    check(events);
    assert.equal(customInputDeltas(events, 1), TRICKY_INPUT);
    assert.equal(customInputDone(events, 1), TRICKY_INPUT);
  });

  it('(f) named tool_choice: args in the first delta and finish_reason "stop"', () => {
    const { events, translator } = translateSseFile('vllm-stream-toolcall-named-choice.sse');
    check(events);
    assert.equal(terminalResponse(events).type, 'response.completed');
    assert.equal(customInputDeltas(events, 0), TRICKY_INPUT);
    assert.equal(customInputDone(events, 0), TRICKY_INPUT);
    assert.deepEqual(translator.warnings, []);
  });

  it('(g) SGLang: explicit "id":null and "name":null on later deltas never overwrite the call', () => {
    const member = (ARGUMENTS_MATRIX.sglang_qwen3coder as string).slice(1, -1);
    const base = { id: '5c2a1e0f9b8d4c3a2e1f0a9b8c7d6e5f', object: 'chat.completion.chunk', created: 1779158289, model: MODEL };
    const toolDelta = (fields: Record<string, unknown>) => ({
      ...base,
      choices: [
        {
          index: 0,
          delta: { role: null, content: null, reasoning_content: null, tool_calls: [fields] },
          logprobs: null,
          finish_reason: null,
          matched_stop: null,
        },
      ],
      usage: null,
    });
    const body = renderSse([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null, matched_stop: null }] },
      {
        ...base,
        choices: [
          {
            index: 0,
            delta: { role: null, content: "I'll apply the fix.\n\n", reasoning_content: null, tool_calls: null },
            logprobs: null,
            finish_reason: null,
            matched_stop: null,
          },
        ],
        usage: null,
      },
      toolDelta({ id: 'call_9a8b7c6d5e4f3a2b1c0d9e8f', index: 0, type: 'function', function: { name: 'apply_patch', arguments: '' } }),
      toolDelta({ id: null, index: 0, type: 'function', function: { name: null, arguments: '{' } }),
      toolDelta({ id: null, index: 0, type: 'function', function: { name: null, arguments: member } }),
      toolDelta({ id: null, index: 0, type: 'function', function: { name: null, arguments: '}' } }),
      { ...base, choices: [{ index: 0, delta: { reasoning_content: null }, logprobs: null, finish_reason: 'tool_calls', matched_stop: null }], usage: null },
      {
        ...base,
        choices: [],
        usage: { prompt_tokens: 900, total_tokens: 1000, completion_tokens: 100, prompt_tokens_details: null, reasoning_tokens: 0 },
      },
    ]);
    const { events, translator } = translateSse(body);
    check(events);
    const call = {
      type: 'custom_tool_call' as const,
      id: 'ctc_1',
      call_id: 'call_9a8b7c6d5e4f3a2b1c0d9e8f',
      name: 'apply_patch',
      input: TRICKY_INPUT_TRIMMED,
      status: 'completed' as const,
    };
    const message = {
      type: 'message' as const,
      id: 'msg_0',
      role: 'assistant' as const,
      status: 'completed' as const,
      content: [{ type: 'output_text' as const, text: "I'll apply the fix.\n\n", annotations: [] }],
    };
    assert.deepEqual(events.slice(2), [
      {
        type: 'response.output_item.added',
        sequence_number: 2,
        output_index: 0,
        item: { type: 'message', id: 'msg_0', role: 'assistant', status: 'in_progress', content: [] },
      },
      {
        type: 'response.content_part.added',
        sequence_number: 3,
        item_id: 'msg_0',
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      },
      {
        type: 'response.output_text.delta',
        sequence_number: 4,
        item_id: 'msg_0',
        output_index: 0,
        content_index: 0,
        delta: "I'll apply the fix.\n\n",
      },
      {
        type: 'response.output_text.done',
        sequence_number: 5,
        item_id: 'msg_0',
        output_index: 0,
        content_index: 0,
        text: "I'll apply the fix.\n\n",
      },
      {
        type: 'response.content_part.done',
        sequence_number: 6,
        item_id: 'msg_0',
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: "I'll apply the fix.\n\n", annotations: [] },
      },
      { type: 'response.output_item.done', sequence_number: 7, output_index: 0, item: message },
      {
        type: 'response.output_item.added',
        sequence_number: 8,
        output_index: 1,
        item: { ...call, input: '', status: 'in_progress' },
      },
      {
        type: 'response.custom_tool_call_input.delta',
        sequence_number: 9,
        item_id: 'ctc_1',
        call_id: call.call_id,
        output_index: 1,
        delta: TRICKY_INPUT_TRIMMED,
      },
      {
        type: 'response.custom_tool_call_input.done',
        sequence_number: 10,
        item_id: 'ctc_1',
        call_id: call.call_id,
        output_index: 1,
        input: TRICKY_INPUT_TRIMMED,
      },
      { type: 'response.output_item.done', sequence_number: 11, output_index: 1, item: call },
      {
        type: 'response.completed',
        sequence_number: 12,
        response: {
          ...SNAPSHOT,
          status: 'completed',
          output: [message, call],
          usage: {
            input_tokens: 900,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 100,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 1000,
          },
        },
      },
    ]);
    assert.deepEqual(translator.warnings, []);
  });

  it('(h) Ollama: the whole call in one delta, HTML-escaped, then a separate finish chunk', () => {
    const base = { id: 'chatcmpl-417', object: 'chat.completion.chunk', created: 1779158289, model: 'qwen3-coder:30b', system_fingerprint: 'fp_ollama' };
    const body = renderSse([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: "I'll apply the fix." }, finish_reason: null }] },
      {
        ...base,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { id: 'call_k3v9x2ab', index: 0, type: 'function', function: { name: 'apply_patch', arguments: ARGUMENTS_MATRIX.ollama_any_parser } },
              ],
            },
            finish_reason: null,
          },
        ],
      },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { ...base, choices: [], usage: { prompt_tokens: 700, completion_tokens: 90, total_tokens: 790 } },
    ]);
    const { events, translator } = translateSse(body);
    check(events);
    assert.equal(customInputDeltas(events, 1), TRICKY_INPUT_TRIMMED, 'the Go \\u003c escapes decode in the delta');
    assert.equal(customInputDone(events, 1), TRICKY_INPUT_TRIMMED);
    assert.deepEqual(
      doneItems(events).map((item) => item.type),
      ['message', 'custom_tool_call'],
    );
    assert.deepEqual(translator.warnings, []);
  });

  it('(i) parallel calls, including one chunk carrying deltas for two indexes', () => {
    const { events, translator } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_a', type: 'function', name: 'exec_command' })] }),
      chunk({ tool_calls: [toolCallDelta(0, { arguments: '{"cmd":"echo ' })] }),
      chunk({
        tool_calls: [
          toolCallDelta(0, { arguments: 'ONE"}' }),
          toolCallDelta(1, { id: 'call_b', type: 'function', name: 'functions__exec', arguments: '{"input":"text(' }),
        ],
      }),
      chunk({ tool_calls: [toolCallDelta(1, { arguments: '1)"}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    assert.deepEqual(doneItems(events), [
      { type: 'function_call', id: 'fc_0', call_id: 'call_a', name: 'exec_command', arguments: '{"cmd":"echo ONE"}', status: 'completed' },
      { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_b', namespace: 'functions', name: 'exec', input: 'text(1)', status: 'completed' },
    ]);
    // Both calls close only at the finish chunk, in output_index order.
    const closing = events.filter((event) => event.type === 'response.output_item.done').map((event) => event.sequence_number);
    const lastDelta = events.filter((event) => event.type === 'response.custom_tool_call_input.delta').at(-1)?.sequence_number ?? -1;
    assert.ok(closing.every((sequence) => sequence > lastDelta));
    assert.equal(customInputDeltas(events, 1), 'text(1)');
    assert.deepEqual(translator.warnings, []);
  });

  it('(i) parallel calls interleaved across chunks keep their own arguments', () => {
    const { events } = translate([
      chunk({
        tool_calls: [
          toolCallDelta(0, { id: 'call_a', name: 'exec_command', arguments: '{"cmd":' }),
          toolCallDelta(1, { id: 'call_b', name: 'exec_command', arguments: '{"cmd":' }),
        ],
      }),
      chunk({ tool_calls: [toolCallDelta(1, { arguments: '"b"}' }), toolCallDelta(0, { arguments: '"a"}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    assert.deepEqual(
      doneItems(events).map((item) => item.type === 'function_call' && [item.call_id, item.arguments]),
      [
        ['call_a', '{"cmd":"a"}'],
        ['call_b', '{"cmd":"b"}'],
      ],
    );
  });

  it('(j) a final "remaining arguments" delta in the finish chunk is applied before closing', () => {
    const { events, translator } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_r', type: 'function', name: 'apply_patch', arguments: '{"input": "*** Begin' })] }),
      chunk({ tool_calls: [toolCallDelta(0, { arguments: ' Patch\\n*** End Patch"}' })] }, 'tool_calls'),
    ]);
    check(events);
    assert.equal(customInputDeltas(events, 0), '*** Begin Patch\n*** End Patch');
    assert.equal(customInputDone(events, 0), '*** Begin Patch\n*** End Patch');
    assert.equal(terminalResponse(events).type, 'response.completed');
    assert.deepEqual(translator.warnings, []);
  });

  it('(k) llama.cpp: first delta already holds {"input":", diffs split inside escapes; content:null; no blank line after [DONE]', () => {
    const full = ARGUMENTS_MATRIX.llamacpp_compact as string;
    const opening = '{"input":"';
    assert.ok(full.startsWith(opening));
    const base = { created: 1779158289, id: 'chatcmpl-x', model: 'gpt-oss', system_fingerprint: 'b6351-5d804a49', object: 'chat.completion.chunk' };
    const frames: unknown[] = [{ choices: [{ finish_reason: null, index: 0, delta: { role: 'assistant', content: null } }], ...base }];
    frames.push({
      choices: [
        {
          finish_reason: null,
          index: 0,
          delta: {
            tool_calls: [{ index: 0, id: 'Zk3q9XvT2bLmN8rPq4sYw1cUe7dHa0Jf', type: 'function', function: { name: 'apply_patch', arguments: opening } }],
          },
        },
      ],
      ...base,
    });
    // Seven-character diffs cut `\n`, `\\`, `\"` and words anywhere.
    for (let position = opening.length; position < full.length; position += 7) {
      frames.push({
        choices: [{ finish_reason: null, index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: full.slice(position, position + 7) } }] } }],
        ...base,
      });
    }
    frames.push({ choices: [{ finish_reason: 'tool_calls', index: 0, delta: {} }], ...base });
    frames.push({
      choices: [],
      ...base,
      usage: { completion_tokens: 80, prompt_tokens: 600, total_tokens: 680 },
      timings: { prompt_n: 600, prompt_ms: 120.5, predicted_n: 80, predicted_ms: 900.2 },
    });
    const body = `${renderSse(frames, { done: false })}data: [DONE]\n`;
    const { events, translator } = translateSse(body);
    check(events);
    assert.equal(customInputDeltas(events, 0), TRICKY_INPUT_TRIMMED);
    assert.equal(customInputDone(events, 0), TRICKY_INPUT_TRIMMED);
    assert.equal(terminalResponse(events).response.usage?.total_tokens, 680);
    assert.deepEqual(translator.warnings, []);
  });
});

describe('custom input deltas', () => {
  it('decodes \\uXXXX escapes and surrogate pairs split across fragments', () => {
    // Cuts: inside `\u00e9`, between the halves of `\ud83d\udc4b`, right after a lone `\`.
    const fragments = ['{"input": "H\\u00', 'e9llo \\ud83d', '\\udc4b \\', 'u2014 \\', '"q\\', '"\\', 'n"}'];
    const { events, translator } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_s', name: 'apply_patch', arguments: '' })] }),
      ...fragments.map((fragment) => chunk({ tool_calls: [toolCallDelta(0, { arguments: fragment })] })),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    const expected = 'Héllo 👋 — "q"\n';
    assert.equal(customInputDeltas(events, 0), expected);
    assert.equal(customInputDone(events, 0), expected);
    for (const event of events) {
      if (event.type !== 'response.custom_tool_call_input.delta') continue;
      assert.ok(event.delta.length > 0, 'no empty deltas');
      assert.ok(!/[\ud800-\udbff]$/.test(event.delta), 'never a lone high surrogate at the end of a delta');
      assert.ok(!/^[\udc00-\udfff]/.test(event.delta), 'never a lone low surrogate at the start of a delta');
    }
    assert.deepEqual(translator.warnings, []);
  });

  it('decodes the ASCII-escaped gpt-oss byte form to the same input', () => {
    const full = ARGUMENTS_MATRIX.vllm_gptoss_nonstream as string;
    const fragments: string[] = [];
    for (let position = 0; position < full.length; position += 3) fragments.push(full.slice(position, position + 3));
    const { events } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_g', name: 'apply_patch', arguments: '' })] }),
      ...fragments.map((fragment) => chunk({ tool_calls: [toolCallDelta(0, { arguments: fragment })] })),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    assert.equal(customInputDeltas(events, 0), TRICKY_INPUT);
    assert.equal(customInputDone(events, 0), TRICKY_INPUT);
  });

  it('property: random payloads in random fragments → deltas = done input = payload', () => {
    const payloadCharacter = fc.oneof(
      fc.constantFrom('"', '\\', '\n', '\t', '\r', '/', '\b', '\f', '\u0000', '\u001f', 'é', '—', '👋', '𝄞', '<', '>', '&', ' '),
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
    );
    const payloadArbitrary = fc.array(payloadCharacter, { maxLength: 60 }).map((characters) => characters.join(''));
    const asciiEscaped = (text: string) => text.replace(/[\u007f-\uffff]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
    fc.assert(
      fc.property(payloadArbitrary, fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), fc.boolean(), (payload, cutSeeds, spaced, escapeAll) => {
        let argumentsText = spaced ? JSON.stringify({ input: payload }, null, 1) : JSON.stringify({ input: payload });
        if (escapeAll) argumentsText = asciiEscaped(argumentsText);
        const cuts = [...new Set(cutSeeds.map((seed) => seed % (argumentsText.length + 1)))].sort((left, right) => left - right);
        const fragments: string[] = [];
        let previous = 0;
        for (const cut of [...cuts, argumentsText.length]) {
          fragments.push(argumentsText.slice(previous, cut));
          previous = cut;
        }
        const { events, translator } = translate([
          chunk({ tool_calls: [toolCallDelta(0, { id: 'call_p', type: 'function', name: 'functions__exec', arguments: fragments[0] ?? '' })] }),
          ...fragments.slice(1).map((fragment) => chunk({ tool_calls: [toolCallDelta(0, { arguments: fragment })] })),
          chunk({}, 'tool_calls'),
        ]);
        assertCodexAcceptsStream(events, ORACLE_OPTIONS);
        assert.equal(customInputDeltas(events, 0), payload);
        assert.equal(customInputDone(events, 0), payload);
        assert.deepEqual(translator.warnings, []);
      }),
      { numRuns: 300 },
    );
  });
});

// ---------- lifting in the stream ----------

describe('names, namespaces and kinds', () => {
  it('restores namespaces for custom and function calls and keeps unknown names as function_call', () => {
    const { events, translator } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_1', name: 'functions__exec', arguments: '{"input":"text(1)"}' })] }),
      chunk({ tool_calls: [toolCallDelta(1, { id: 'call_2', name: 'multi_agent_v1__close_agent', arguments: '{"id":"a"}' })] }),
      chunk({ tool_calls: [toolCallDelta(2, { id: 'call_3', name: 'invented_tool', arguments: '{}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    const added = events.flatMap((event) => (event.type === 'response.output_item.added' ? [event.item] : []));
    assert.deepEqual(added, [
      { type: 'custom_tool_call', id: 'ctc_0', call_id: 'call_1', namespace: 'functions', name: 'exec', input: '', status: 'in_progress' },
      { type: 'function_call', id: 'fc_1', call_id: 'call_2', namespace: 'multi_agent_v1', name: 'close_agent', arguments: '', status: 'in_progress' },
      { type: 'function_call', id: 'fc_2', call_id: 'call_3', name: 'invented_tool', arguments: '', status: 'in_progress' },
    ]);
    assert.deepEqual(doneItems(events), [
      { type: 'custom_tool_call', id: 'ctc_0', call_id: 'call_1', namespace: 'functions', name: 'exec', input: 'text(1)', status: 'completed' },
      { type: 'function_call', id: 'fc_1', call_id: 'call_2', namespace: 'multi_agent_v1', name: 'close_agent', arguments: '{"id":"a"}', status: 'completed' },
      { type: 'function_call', id: 'fc_2', call_id: 'call_3', name: 'invented_tool', arguments: '{}', status: 'completed' },
    ]);
    assert.deepEqual(translator.warnings, []);
  });

  it('lifts a Chat-native custom call directly to custom_tool_call', () => {
    const { events } = translate([
      chunk({ tool_calls: [{ index: 0, id: 'call_n', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch\n' } }] }),
      chunk({ tool_calls: [{ index: 0, type: 'custom', custom: { input: '*** End Patch' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    assert.equal(customInputDeltas(events, 0), '*** Begin Patch\n*** End Patch');
    assert.deepEqual(doneItems(events), [
      { type: 'custom_tool_call', id: 'ctc_0', call_id: 'call_n', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch', status: 'completed' },
    ]);
  });

  it('re-serialises arguments sent as an object', () => {
    const { events } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_o', name: 'apply_patch', arguments: { input: 'x "y"' } })] }),
      chunk({ tool_calls: [toolCallDelta(1, { id: 'call_p', name: 'exec_command', arguments: { cmd: 'ls' } })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    assert.equal(customInputDone(events, 0), 'x "y"');
    assert.equal(customInputDeltas(events, 0), 'x "y"');
    assert.deepEqual(
      doneItems(events).map((item) => item.type === 'function_call' && item.arguments),
      [false, '{"cmd":"ls"}'],
    );
  });

  it('merges by id when index is missing and synthesises missing ids', () => {
    const { events } = translate([
      chunk({ tool_calls: [toolCallDelta(null, { id: 'call_x', name: 'exec_command', arguments: '{"cmd":' })] }),
      chunk({ tool_calls: [toolCallDelta(null, { id: 'call_x', arguments: '"ls"}' })] }),
      chunk({ tool_calls: [toolCallDelta(null, { id: 'call_y', name: 'functions__wait', arguments: '{}' })] }),
      chunk({ tool_calls: [toolCallDelta(5, { name: 'exec_command', arguments: '{"cmd":"pwd"}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    assert.deepEqual(
      doneItems(events).map((item) => item.type === 'function_call' && [item.call_id, item.name, item.arguments]),
      [
        ['call_x', 'exec_command', '{"cmd":"ls"}'],
        ['call_y', 'wait', '{}'],
        ['call_synthesised_0', 'exec_command', '{"cmd":"pwd"}'],
      ],
    );
  });

  it('makes repeated call ids unique with a duplicate_call_id warning (Ollama, index-based ids)', () => {
    const { events, translator } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_0', name: 'exec_command', arguments: '{"cmd":"a"}' })] }),
      chunk({ tool_calls: [toolCallDelta(1, { id: 'call_0', name: 'exec_command', arguments: '{"cmd":"b"}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    const callIds = doneItems(events).map((item) => item.type === 'function_call' && item.call_id);
    assert.equal(new Set(callIds).size, 2);
    assert.deepEqual(
      translator.warnings.map((warning) => warning.kind),
      ['duplicate_call_id'],
    );
  });

  it('waits for the name before announcing a call, then sends the buffered arguments', () => {
    const { events } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_late', arguments: '{"input":"a' })] }),
      chunk({ tool_calls: [toolCallDelta(0, { name: 'apply_patch', arguments: 'b"}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    // The name and the next fragment arrive together: everything buffered goes out as one delta.
    assert.deepEqual(types(events).slice(2, 5), [
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
    ]);
    assert.equal(customInputDeltas(events, 0), 'ab');
    assert.equal(customInputDone(events, 0), 'ab');
  });

  it('opens a new message item when text resumes after a call', () => {
    const { events } = translate([
      chunk({ content: 'First.' }),
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' })] }),
      chunk({ content: 'Second.' }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    const added = events.flatMap((event) => (event.type === 'response.output_item.added' ? [[event.output_index, event.item.type]] : []));
    assert.deepEqual(added, [
      [0, 'message'],
      [1, 'function_call'],
      [2, 'message'],
    ]);
    assert.deepEqual(
      terminalResponse(events).response.output.map((item) => item.type),
      ['message', 'function_call', 'message'],
    );
  });

  it('processes content before tool_calls in one chunk', () => {
    const { events } = translate([
      chunk({ content: 'Running.', tool_calls: [toolCallDelta(0, { id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    assert.deepEqual(
      doneItems(events).map((item) => item.type),
      ['message', 'function_call'],
    );
  });
});

describe('malformed and truncated arguments', () => {
  it('records input_delta_mismatch when the lifted input is not an extension of the deltas', () => {
    // Duplicate keys: the decoder streams the first value; which one was meant is unknown, so the done
    // item carries the arguments as written.
    const { events, translator } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_m', name: 'apply_patch', arguments: '{"input": "first", "input": "second"}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events, { inputDeltaMismatchCallIds: ['call_m'] });
    assert.equal(customInputDeltas(events, 0), 'first');
    assert.equal(customInputDone(events, 0), '{"input": "first", "input": "second"}', 'the done value wins');
    assert.ok(translator.warnings.some((warning) => warning.kind === 'input_delta_mismatch' && warning.callId === 'call_m'));
  });

  it('delivers not-JSON arguments raw with not_json and input_delta_mismatch', () => {
    const argumentsText = '{"input": "echo hi"} trailing';
    const { events, translator } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_j', name: 'functions__exec', arguments: argumentsText })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events, { inputDeltaMismatchCallIds: ['call_j'] });
    assert.equal(customInputDone(events, 0), argumentsText);
    assert.deepEqual(
      translator.warnings.map((warning) => warning.kind).sort(),
      ['input_delta_mismatch', 'not_json'],
    );
  });

  it('streams no deltas for a non-string payload and delivers its compact JSON text', () => {
    const { events, translator } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_o', name: 'apply_patch', arguments: '{"input": {"patch": "X"}}' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events);
    assert.equal(customInputDeltas(events, 0), '');
    assert.equal(customInputDone(events, 0), '{"patch":"X"}');
    assert.deepEqual(
      translator.warnings.map((warning) => warning.kind),
      ['non_string_payload'],
    );
  });

  it('finish "length" with a cut custom call → incomplete, the call gets no done events, text kept', () => {
    const { events, translator } = translate([
      chunk({ content: 'Patching.' }),
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_t', name: 'apply_patch', arguments: '{"input": "*** Begin Patch\\n*** Add' })] }),
      chunk({}, 'length'),
      usageChunk({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }),
    ]);
    check(events, { expectedTerminal: 'response.incomplete' });
    const { type, response } = terminalResponse(events);
    assert.equal(type, 'response.incomplete');
    assert.equal(response.status, 'incomplete');
    assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
    assert.deepEqual(
      response.output.map((item) => item.type),
      ['message'],
    );
    assert.ok(events.some((event) => event.type === 'response.output_item.added' && event.output_index === 1));
    assert.ok(!events.some((event) => 'output_index' in event && event.output_index === 1 && event.type.endsWith('.done')));
    assert.ok(translator.warnings.some((warning) => warning.kind === 'truncated' && warning.callId === 'call_t'));
  });

  it('finish "tool_calls" with an unterminated JSON prefix (vLLM hides length) → incomplete', () => {
    const { events, translator } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_u', name: 'functions__exec', arguments: '{"input":"const r = await tools.exec_command({cmd: ' })] }),
      chunk({}, 'tool_calls'),
    ]);
    check(events, { expectedTerminal: 'response.incomplete' });
    const { type, response } = terminalResponse(events);
    assert.equal(type, 'response.incomplete');
    assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
    assert.deepEqual(response.output, []);
    assert.deepEqual(doneItems(events), []);
    assert.deepEqual(
      translator.warnings.map((warning) => warning.kind),
      ['truncated'],
    );
  });

  it('a plain function call cut by length is not delivered either', () => {
    const { events } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_f', name: 'exec_command', arguments: '{"cmd":"rm -' })] }),
      chunk({}, 'length'),
    ]);
    check(events, { expectedTerminal: 'response.incomplete' });
    assert.equal(terminalResponse(events).type, 'response.incomplete');
    assert.deepEqual(doneItems(events), []);
  });

  it('finish "length" after plain text → incomplete with the text delivered', () => {
    const { events } = translate([chunk({ content: 'Long answ' }, 'length')]);
    check(events, { expectedTerminal: 'response.incomplete' });
    const { type, response } = terminalResponse(events);
    assert.equal(type, 'response.incomplete');
    assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(response.output.length, 1);
  });

  it('finish "content_filter" → incomplete with reason content_filter', () => {
    const { events } = translate([chunk({ content: 'x' }, 'content_filter')]);
    check(events, { expectedTerminal: 'response.incomplete' });
    assert.deepEqual(terminalResponse(events).response.incomplete_details, { reason: 'content_filter' });
  });

  it('an unusual finish reason completes with a finish_reason_unusual warning', () => {
    const { events, translator } = translate([chunk({ content: 'x' }, 'repetition')]);
    check(events);
    assert.equal(terminalResponse(events).type, 'response.completed');
    assert.deepEqual(
      translator.warnings.map((warning) => warning.kind),
      ['finish_reason_unusual'],
    );
  });
});

// ---------- commit rule, keepalive, failures ----------

describe('when items are committed', () => {
  it('closes tool calls only at the finish chunk, and the finish chunk closes everything before the usage chunk', () => {
    const translator = createTranslator();
    const events = [...translator.start()];
    events.push(...translator.push(chunk({ tool_calls: [toolCallDelta(0, { id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' })] })));
    assert.ok(!events.some((event) => event.type === 'response.output_item.done'), 'a complete-looking call still waits');
    const atFinish = translator.push(chunk({}, 'tool_calls'));
    assert.deepEqual(types(atFinish), ['response.function_call_arguments.done', 'response.output_item.done']);
    events.push(...atFinish);
    const atUsage = translator.push(usageChunk({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }));
    assert.deepEqual(atUsage, []);
    events.push(...atUsage);
    const atEnd = translator.finish();
    assert.deepEqual(types(atEnd), ['response.completed']);
    events.push(...atEnd);
    check(events);
    assert.equal(terminalResponse(events).response.usage?.total_tokens, 7);
  });

  it('a message closes as soon as the call opens', () => {
    const translator = createTranslator();
    translator.start();
    translator.push(chunk({ content: 'Running.' }));
    const atCall = translator.push(chunk({ tool_calls: [toolCallDelta(0, { id: 'call_1', name: 'exec_command', arguments: '{}' })] }));
    assert.deepEqual(types(atCall), [
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
    ]);
  });
});

describe('keepalive', () => {
  it('sends response.in_progress with the same snapshot and strictly increasing sequence numbers', () => {
    const translator = createTranslator();
    const events = [...translator.start()];
    events.push(...translator.keepalive(), ...translator.keepalive());
    events.push(...translator.push(chunk({ content: 'Hel' })));
    events.push(...translator.keepalive());
    events.push(...translator.push(chunk({ content: 'lo' }, 'stop')));
    events.push(...translator.keepalive());
    events.push(...translator.finish());
    check(events);
    assert.deepEqual(types(events).slice(0, 4), ['response.created', 'response.in_progress', 'response.in_progress', 'response.in_progress']);
    const keepalives = events.filter((event) => event.type === 'response.in_progress');
    assert.equal(keepalives.length, 5);
    for (const keepalive of keepalives) assert.deepEqual('response' in keepalive && keepalive.response, SNAPSHOT);
    for (let position = 1; position < events.length; position += 1) {
      assert.ok((events[position]?.sequence_number ?? -1) > (events[position - 1]?.sequence_number ?? -1));
    }
    assert.deepEqual(translator.keepalive(), [], 'nothing after the terminal event');
  });

  it('a keepalive before start() starts the stream', () => {
    const translator = createTranslator();
    assert.deepEqual(types(translator.keepalive()), ['response.created', 'response.in_progress']);
    assert.deepEqual(translator.start(), []);
  });
});

describe('failures after the stream started', () => {
  it('fail() after items were added → response.failed only; open calls are not delivered', () => {
    const translator = createTranslator();
    const events = [...translator.start()];
    events.push(...translator.push(chunk({ content: 'Partial' })));
    events.push(...translator.push(chunk({ tool_calls: [toolCallDelta(0, { id: 'call_1', name: 'apply_patch', arguments: '{"input":"*** Begin' })] })));
    const failure = translator.fail({ code: 'server_error', message: 'backend stream failed (vLLM): Internal server error' });
    assert.deepEqual(types(failure), ['response.failed']);
    events.push(...failure);
    check(events, { expectedTerminal: 'response.failed' });
    const { response } = terminalResponse(events);
    assert.equal(response.status, 'failed');
    assert.deepEqual(response.error, { code: 'server_error', message: 'backend stream failed (vLLM): Internal server error' });
    assert.deepEqual(
      response.output.map((item) => item.type),
      ['message'],
      'only the message that was already done',
    );
    assert.ok(!events.some((event) => event.type === 'response.completed'));
    assert.deepEqual(translator.push(chunk({}, 'stop')), []);
    assert.deepEqual(translator.finish(), []);
    assert.deepEqual(translator.fail({ code: 'server_error', message: 'again' }), []);
    assert.equal(translator.finalResponse, response);
  });

  it('fail() with context_length_exceeded keeps the code', () => {
    const translator = createTranslator();
    const events = [...translator.start(), ...translator.fail({ code: 'context_length_exceeded', message: 'too long' })];
    check(events, { expectedTerminal: 'response.failed' });
    assert.deepEqual(terminalResponse(events).response.error, { code: 'context_length_exceeded', message: 'too long' });
  });

  it('replays a vLLM mid-stream error frame (spaced, ASCII-escaped JSON) into response.failed', () => {
    const body =
      renderSse([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Partial' })], { done: false }) +
      'data: {"error": {"message": "Internal server error", "type": "InternalServerError", "param": null, "code": 500}}\n\n' +
      'data: [DONE]\n\n';
    const { events } = translateSse(body);
    check(events, { expectedTerminal: 'response.failed' });
    const { type, response } = terminalResponse(events);
    assert.equal(type, 'response.failed');
    assert.deepEqual(response.error, { code: 'server_error', message: 'backend stream failed: Internal server error' });
    assert.deepEqual(response.output, [], 'the open message is not committed');
  });

  it('replays Ollama\'s error path (empty content delta, EOF without finish or [DONE]) into response.failed', () => {
    const body = renderSse([chunk({ role: 'assistant', content: 'Looking' }), chunk({ content: '' })], { done: false });
    const { events } = translateSse(body);
    check(events, { expectedTerminal: 'response.failed' });
    const { type, response } = terminalResponse(events);
    assert.equal(type, 'response.failed');
    assert.equal(response.error?.code, 'server_error');
    assert.match(response.error?.message ?? '', /ended before a finish reason/);
  });

  it('finish() without any chunk → response.failed', () => {
    const translator = createTranslator();
    const events = [...translator.start(), ...translator.finish()];
    check(events, { expectedTerminal: 'response.failed' });
    assert.equal(terminalResponse(events).type, 'response.failed');
  });

  it('an error frame pushed as a chunk still fails the stream, recognising context overflow', () => {
    const translator = createTranslator();
    const events = [...translator.start()];
    events.push(...translator.push({ object: 'error', message: "The input (9000 tokens) is longer than the model's context length (8192 tokens).", choices: null }));
    check(events, { expectedTerminal: 'response.failed' });
    assert.equal(terminalResponse(events).response.error?.code, 'context_length_exceeded');
  });

  it('finish reason "abort" → response.failed, nothing delivered', () => {
    const { events } = translate([
      chunk({ tool_calls: [toolCallDelta(0, { id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' })] }),
      chunk({}, 'abort'),
    ]);
    check(events, { expectedTerminal: 'response.failed' });
    assert.equal(terminalResponse(events).type, 'response.failed');
    assert.deepEqual(doneItems(events), []);
  });
});

describe('grammar check at the finish chunk', () => {
  const capture = JSON.parse(readFileSync(fixturePath('captures/b_freeform_apply_patch_gpt-5.5_v0.171.req1.json'), 'utf8')) as {
    tools: Array<{ name?: string; format?: { syntax: string; definition: string } }>;
  };
  const format = capture.tools.find((tool) => tool.name === 'apply_patch')?.format;
  assert.ok(format);
  const grammarToolMap: ToolMap = new Map([
    ['apply_patch', { wireName: 'apply_patch', name: 'apply_patch', namespace: null, kind: 'custom', grammar: { syntax: format.syntax, definition: format.definition } }],
  ]);
  const fenced = `\`\`\`diff\n${TRICKY_INPUT}\`\`\``;
  const argumentsText = JSON.stringify({ input: fenced });
  const streamFenced = (options: Partial<StreamTranslatorOptions>) =>
    translate(
      [
        chunk({ tool_calls: [toolCallDelta(0, { id: 'call_g', name: 'apply_patch', arguments: argumentsText.slice(0, 30) })] }),
        chunk({ tool_calls: [toolCallDelta(0, { arguments: argumentsText.slice(30) })] }),
        chunk({}, 'tool_calls'),
      ],
      { toolMap: grammarToolMap, ...options },
    );

  it('accepts the tricky patch streamed in every engine byte form without a warning', () => {
    for (const [form, text] of Object.entries(ARGUMENTS_MATRIX)) {
      // Notes and the file name sit beside the argument strings in the matrix.
      if (typeof text !== 'string' || !text.startsWith('{')) continue;
      const { events, translator } = translate(
        [chunk({ tool_calls: [toolCallDelta(0, { id: 'call_t', name: 'apply_patch', arguments: text })] }), chunk({}, 'tool_calls')],
        { toolMap: grammarToolMap },
      );
      check(events);
      assert.deepEqual(translator.warnings.filter((warning) => warning.kind.startsWith('grammar_')), [], form);
    }
  });

  it('rescues a fenced patch by default: the done event carries the patch, with grammar_repaired', () => {
    const { events, translator } = streamFenced({});
    check(events, { inputDeltaMismatchCallIds: ['call_g'] });
    assert.equal(customInputDeltas(events, 0), fenced, 'the deltas went out before the check');
    assert.equal(customInputDone(events, 0), TRICKY_INPUT);
    assert.deepEqual(translator.warnings.map((warning) => [warning.kind, warning.callId]), [['grammar_repaired', 'call_g']]);
  });

  it('delivers a patch Codex would reject and no safe rescue fixes unchanged, with grammar_mismatch', () => {
    const withoutEnd = TRICKY_INPUT.replace('*** End Patch\n', '');
    const text = JSON.stringify({ input: withoutEnd });
    const { events, translator } = translate(
      [chunk({ tool_calls: [toolCallDelta(0, { id: 'call_m', name: 'apply_patch', arguments: text })] }), chunk({}, 'tool_calls')],
      { toolMap: grammarToolMap },
    );
    check(events);
    assert.equal(customInputDone(events, 0), withoutEnd);
    assert.deepEqual(translator.warnings.map((warning) => [warning.kind, warning.callId]), [['grammar_mismatch', 'call_m']]);
  });

  it('with grammarRepair, the done event carries the repaired input; no input_delta_mismatch on top of grammar_repaired', () => {
    const { events, translator } = streamFenced({ grammarRepair: true });
    check(events, { inputDeltaMismatchCallIds: ['call_g'] });
    assert.equal(customInputDeltas(events, 0), fenced, 'the deltas went out before the check');
    assert.equal(customInputDone(events, 0), TRICKY_INPUT);
    assert.deepEqual(terminalResponse(events).response.output.map((item) => item.type === 'custom_tool_call' && item.input), [TRICKY_INPUT]);
    assert.deepEqual(translator.warnings.map((warning) => [warning.kind, warning.callId]), [['grammar_repaired', 'call_g']]);
  });

  it('uses the grammar cache it is given, so an uncompilable grammar is reported once across responses', () => {
    const brokenMap: ToolMap = new Map([['broken', { wireName: 'broken', name: 'broken', namespace: null, kind: 'custom', grammar: { syntax: 'lark', definition: 'start: "(" start ")"\n' } }]]);
    const grammarCache = createGrammarCache();
    const run = () =>
      translate([chunk({ tool_calls: [toolCallDelta(0, { id: 'call_b', name: 'broken', arguments: '{"input": "(x)"}' })] }), chunk({}, 'tool_calls')], {
        toolMap: brokenMap,
        grammarCache,
      }).translator.warnings.map((warning) => warning.kind);
    assert.deepEqual(run(), ['grammar_uncompilable']);
    assert.deepEqual(run(), []);
  });
});
