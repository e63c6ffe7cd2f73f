import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatCompletionChunk } from '../../../../src/core/chat/chat-completions-api.ts';
import type { ItemIdPrefix } from '../../../../src/core/ids.ts';
import type { ResponsesOutputItem, ResponsesStreamEvent } from '../../../../src/core/responses/responses-output.ts';
import { liftJsonCompletion } from '../../../../src/core/stream/chat-sse-pump.ts';
import { ChatStreamTranslator, type StreamTranslatorOptions } from '../../../../src/core/stream/chat-stream-to-responses-events.ts';
import type { ToolMap, ToolMapEntry } from '../../../../src/core/tool-map.ts';
import { assertCodexAcceptsStream } from '../../../support/codex-stream-oracle.ts';

/*
 * Tool calls the engine left in the assistant text (read-text-tool-calls.ts) through the stream
 * translator: held while they may still be calls, delivered as calls when the whole text is calls,
 * streamed at once when it is prose, and never silent.
 */


function toolEntry(wireName: string, name: string, namespace: string | null, kind: ToolMapEntry['kind']): [string, ToolMapEntry] {
  return [wireName, { wireName, name, namespace, kind, grammar: null }];
}

const TOOL_MAP: ToolMap = new Map([toolEntry('apply_patch', 'apply_patch', null, 'custom'), toolEntry('exec_command', 'exec_command', null, 'function')]);

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch\n';
const HERMES_CALL = `<tool_call>\n${JSON.stringify({ name: 'apply_patch', arguments: { input: PATCH } })}\n</tool_call>`;

function translator(options: Partial<StreamTranslatorOptions> = {}): ChatStreamTranslator {
  let items = 0;
  let calls = 0;
  return new ChatStreamTranslator({
    responseId: 'resp_text_calls',
    model: 'tiny-hermes',
    createdAt: 1790000000,
    toolMap: TOOL_MAP,
    createItemId: (prefix: ItemIdPrefix) => `${prefix}_${items++}`,
    createCallId: () => `call_${calls++}`,
    ...options,
  });
}

function chunk(content: string | null, finishReason: string | null = null, toolCalls?: NonNullable<NonNullable<ChatCompletionChunk['choices']>[number]['delta']>['tool_calls']): ChatCompletionChunk {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'tiny-hermes', choices: [{ index: 0, delta: { content, ...(toolCalls ? { tool_calls: toolCalls } : {}) }, finish_reason: finishReason }] };
}

/** Streams `text` in pieces of `size` characters, then a `stop` finish; returns the events after each push. */
function stream(text: string, size: number, options: Partial<StreamTranslatorOptions> = {}): { batches: ResponsesStreamEvent[][]; all: ResponsesStreamEvent[]; translator: ChatStreamTranslator } {
  const run = translator(options);
  const batches: ResponsesStreamEvent[][] = [run.start()];
  for (let start = 0; start < text.length; start += size) batches.push(run.push(chunk(text.slice(start, start + size))));
  batches.push(run.push(chunk(null, 'stop')));
  batches.push(run.finish());
  const all = batches.flat();
  assertCodexAcceptsStream(all, { expectedKinds: { apply_patch: 'custom_tool_call', exec_command: 'function_call' } });
  return { batches, all, translator: run };
}

function doneItems(events: ResponsesStreamEvent[]): ResponsesOutputItem[] {
  return events.flatMap((event) => (event.type === 'response.output_item.done' ? [event.item] : []));
}

describe('tool calls left as text', () => {
  it('delivers a Hermes apply_patch call in the text as a custom_tool_call, streamed as one, with no message and a warning naming the family, the tool and the fix', () => {
    const { all, translator: run } = stream(`\n${HERMES_CALL}\n`, 7);
    const items = doneItems(all);
    assert.deepEqual(
      items.map((item) => item.type),
      ['custom_tool_call'],
    );
    const [item] = items;
    assert.ok(item?.type === 'custom_tool_call');
    assert.equal(item.name, 'apply_patch');
    assert.equal(item.input, PATCH);
    assert.ok(all.some((event) => event.type === 'response.custom_tool_call_input.delta'), 'the input streams as deltas');
    assert.ok(!all.some((event) => event.type === 'response.output_text.delta'), 'no markup delivered as a message');
    const warning = run.warnings.find((entry) => entry.kind === 'tool_call_as_text');
    assert.ok(warning);
    assert.equal(warning.tool, 'apply_patch');
    assert.equal(warning.callId, item.call_id);
    assert.match(warning.detail, /Hermes\/Qwen2\.5 <tool_call>/);
    assert.match(warning.detail, /delivered it as a custom_tool_call/);
    assert.match(warning.detail, /--jinja and no --chat-template override/);
    assert.match(warning.detail, /--tool-call-parser hermes/);
  });

  it('holds text that begins like a call and streams prose from its first piece', () => {
    const held = stream(HERMES_CALL, 5);
    // Nothing is delivered until the finish decides.
    for (const batch of held.batches.slice(1, -2)) assert.deepEqual(batch, []);
    const prose = stream('I will now write the file.', 5);
    assert.ok(prose.batches[1]?.some((event) => event.type === 'response.output_text.delta'), 'the first piece of prose streams at once');
    assert.equal(prose.translator.warnings.length, 0);
  });

  it('turns a Qwen3-Coder XML call of a function into a function_call with typed arguments, and a think block into reasoning', () => {
    const text = '<think>list the files</think>\n<tool_call>\n<function=exec_command>\n<parameter=cmd>\nls -la\n</parameter>\n<parameter=yield_time_ms>\n1000\n</parameter>\n</function>\n</tool_call>';
    const { all } = stream(text, 11);
    const items = doneItems(all);
    assert.deepEqual(
      items.map((item) => item.type),
      ['reasoning', 'function_call'],
    );
    const call = items[1];
    assert.ok(call?.type === 'function_call');
    assert.deepEqual(JSON.parse(call.arguments), { cmd: 'ls -la', yield_time_ms: 1000 });
    const reasoning = items[0];
    assert.ok(reasoning?.type === 'reasoning');
    assert.equal(reasoning.content?.[0]?.text, 'list the files');
  });

  it('only warns about markup within prose, a tool not offered and a cut-off block, delivering the text as the message it is', () => {
    const cases = [
      { text: `Let me create it.\n${HERMES_CALL}`, reason: /within other text/ },
      { text: '<tool_call>\n{"name": "web_search", "arguments": {"q": "x"}}\n</tool_call>', reason: /did not offer/ },
      { text: '<tool_call>\n{"name": "apply_patch", "arguments": {"input": "*** Begin Patch\\n', reason: /cut off/ },
    ];
    for (const { text, reason } of cases) {
      const { all, translator: run } = stream(text, 9);
      const items = doneItems(all);
      assert.deepEqual(
        items.map((item) => item.type),
        ['message'],
        text,
      );
      const message = items[0];
      assert.ok(message?.type === 'message');
      assert.equal(message.content[0]?.text, text, 'the text is delivered whole');
      const warnings = run.warnings.filter((entry) => entry.kind === 'tool_call_as_text');
      assert.equal(warnings.length, 1, text);
      assert.match(warnings[0]?.detail ?? '', reason);
      assert.match(warnings[0]?.detail ?? '', /nothing ran/);
    }
  });

  it('leaves an answer that shows the syntax in a code sample alone, unwarned', () => {
    const text = 'Hermes models write a call like this:\n\n```\n<tool_call>\n{"name": "apply_patch", "arguments": {"input": "…"}}\n</tool_call>\n```\n\nThe engine parses it when its template knows the format.';
    const { all, translator: run } = stream(text, 13);
    assert.deepEqual(
      doneItems(all).map((item) => item.type),
      ['message'],
    );
    assert.deepEqual(run.warnings, []);
  });

  it('with recovery off delivers the call markup as a message, warned and saying how to turn recovery on', () => {
    const { all, translator: run } = stream(HERMES_CALL, 8, { recoverTextToolCalls: false });
    assert.deepEqual(
      doneItems(all).map((item) => item.type),
      ['message'],
    );
    const warning = run.warnings.find((entry) => entry.kind === 'tool_call_as_text');
    assert.match(warning?.detail ?? '', /recovering text calls is off/);
  });

  it('does not read text as a call when the engine also sent tool_calls, and says so', () => {
    const run = translator();
    const events = [...run.start()];
    events.push(...run.push(chunk(HERMES_CALL)));
    events.push(...run.push(chunk(null, null, [{ index: 0, id: 'call_engine', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } }])));
    events.push(...run.push(chunk(null, 'tool_calls')));
    events.push(...run.finish());
    assert.deepEqual(
      doneItems(events).map((item) => item.type),
      ['message', 'function_call'],
    );
    assert.match(run.warnings.find((entry) => entry.kind === 'tool_call_as_text')?.detail ?? '', /also sent tool_calls/);
  });

  it('reads the call the same way from a non-stream JSON answer (llama-server with a template it does not parse)', () => {
    const run = translator();
    const completion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'tiny-hermes',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: '<tool_call>\n\n{"name": "apply_patch", "arguments": {"input": "*** Begin Patch\\n*** Add File: hello.txt\\n+Hello world\\n*** End Patch"}}\n</tool_call>' } }],
    };
    const events = [...run.start(), ...liftJsonCompletion(run, JSON.stringify(completion))];
    const items = doneItems(events);
    assert.equal(items.length, 1);
    assert.ok(items[0]?.type === 'custom_tool_call');
    assert.equal(items[0].input, PATCH.replace(/\n$/, ''));
    assert.equal(run.warnings.filter((entry) => entry.kind === 'tool_call_as_text').length, 1);
  });

  it('warns about nothing when the request offered no tools', () => {
    const { all, translator: run } = stream(`Sure: ${HERMES_CALL}`, 9, { toolMap: new Map() });
    assert.equal(doneItems(all)[0]?.type, 'message');
    assert.deepEqual(run.warnings, []);
  });

  it('neither reads nor warns about call markup when Codex asked for no tool call (tool_choice "none"): the text is the model\'s', () => {
    for (const size of [1, 4096]) {
      const { all, translator: run } = stream(HERMES_CALL, size, { toolCallsRefused: true });
      assert.deepEqual(doneItems(all).map((item) => item.type), ['message']);
      const message = doneItems(all)[0];
      assert.ok(message?.type === 'message');
      assert.deepEqual(message.content.map((part) => (part.type === 'output_text' ? part.text : '')), [HERMES_CALL]);
      assert.deepEqual(run.warnings, []);
    }
  });
});
