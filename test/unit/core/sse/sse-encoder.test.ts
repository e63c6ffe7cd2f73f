import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeSseComment, encodeSseEvent } from '../../../../src/core/sse/sse-encoder.ts';
import type { ResponsesStreamEvent } from '../../../../src/core/responses/responses-output.ts';
import { ChatStreamTranslator } from '../../../../src/core/stream/chat-stream-to-responses-events.ts';
import { SseDecoder, type SseEvent } from '../../../../src/core/sse/sse-decoder.ts';
import { parseJson } from '../../../../src/core/parse-json.ts';

function decodeAll(chunks: readonly Uint8Array[]): SseEvent[] {
  const decoder = new SseDecoder();
  const events = chunks.flatMap((chunk) => decoder.push(chunk));
  return [...events, ...decoder.end()];
}

describe('encodeSseEvent', () => {
  it('writes the event line, one data line with the JSON and a blank line', () => {
    assert.equal(
      encodeSseEvent({ type: 'response.output_text.delta', sequence_number: 4, delta: 'hi' }),
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":4,"delta":"hi"}\n\n',
    );
  });

  it('keeps model text with line breaks, quotes and separators on one data line', () => {
    const delta = 'line 1\nline 2\r\n"quoted" \\ \u2028 👋 \n\ndata: injected';
    const frame = encodeSseEvent({ type: 'response.custom_tool_call_input.delta', delta });
    assert.equal(frame.split('\n').length, 4, 'event line, data line, blank line');
    assert.ok(!frame.includes('\r'));
  });

  it('round-trips through the SSE reader at every byte split', () => {
    const events = [
      { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', output: [] } },
      { type: 'response.output_text.delta', sequence_number: 1, delta: 'é\n👋\r"\\' },
      { type: 'response.completed', sequence_number: 2, response: { id: 'resp_1', output: [] } },
    ];
    const bytes = new TextEncoder().encode(events.map(encodeSseEvent).join('') + encodeSseComment('keepalive'));
    for (let position = 0; position <= bytes.length; position += 1) {
      const decoded = decodeAll([bytes.subarray(0, position), bytes.subarray(position)]);
      assert.deepEqual(
        decoded.map((entry) => entry.event),
        events.map((entry) => entry.type),
      );
      assert.deepEqual(
        decoded.map((entry) => {
          const parsed = parseJson(entry.data);
          return parsed.success ? parsed.value : parsed.error;
        }),
        events,
      );
    }
  });

  it('rejects event names containing CR or LF', () => {
    assert.throws(() => encodeSseEvent({ type: 'response.created\ndata: {}' }), /CR or LF/);
    assert.throws(() => encodeSseEvent({ type: 'a\rb' }), /CR or LF/);
  });
});

describe('encodeSseEvent on the stream translator\'s events', () => {
  /** Text no template may mangle: quotes, backslashes, line breaks, separators, lone surrogates. */
  const TRICKY = ['plain', '"quoted" \\ back', 'line 1\nline 2\r\n\t', '\u2028\u2029 👋 é', '\ud800 lone \udfff', '</script>\u0000\u001f'];

  /** Every delta type, made by the real stream translator from chunks carrying `text`. */
  function translateDeltas(text: string): ResponsesStreamEvent[] {
    let counter = 0;
    const translator = new ChatStreamTranslator({
      responseId: 'resp_enc',
      model: 'm',
      createdAt: 0,
      toolMap: new Map([
        ['apply_patch', { wireName: 'apply_patch', name: 'apply_patch', namespace: null, kind: 'custom', grammar: null }],
        ['shell', { wireName: 'shell', name: 'shell', namespace: null, kind: 'function', grammar: null }],
      ]),
      createItemId: (prefix) => `${prefix}_"${counter++}`,
    });
    const argumentsText = JSON.stringify({ input: text });
    return [
      ...translator.start(),
      ...translator.push({ id: 'c', choices: [{ index: 0, delta: { reasoning_content: text }, finish_reason: null }] }),
      ...translator.push({ id: 'c', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] }),
      ...translator.push({ id: 'c', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_"1', type: 'function', function: { name: 'apply_patch', arguments: argumentsText } }] }, finish_reason: null }] }),
      ...translator.push({ id: 'c', choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'shell', arguments: argumentsText } }] }, finish_reason: null }] }),
      ...translator.push({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }),
      ...translator.finish(),
    ];
  }

  it('writes every event, deltas included, as one frame whose data is the event', () => {
    for (const text of TRICKY) {
      const events = translateDeltas(text);
      const types = new Set(events.map((event) => event.type));
      for (const type of ['response.reasoning_text.delta', 'response.output_text.delta', 'response.custom_tool_call_input.delta', 'response.function_call_arguments.delta']) {
        assert.ok(types.has(type as ResponsesStreamEvent['type']), `the translator made a ${type} for ${JSON.stringify(text)}`);
      }
      for (const event of events) {
        const frame = encodeSseEvent(event);
        const head = `event: ${event.type}\ndata: `;
        assert.ok(frame.startsWith(head) && frame.endsWith('\n\n'), `${event.type} of ${JSON.stringify(text)}`);
        const data = frame.slice(head.length, -2);
        assert.ok(!/[\r\n]/.test(data), 'the data is one line');
        assert.deepEqual(JSON.parse(data), JSON.parse(JSON.stringify(event)), `${event.type} of ${JSON.stringify(text)}`);
      }
    }
  });
});

describe('encodeSseComment', () => {
  it('writes a comment line and a blank line', () => {
    assert.equal(encodeSseComment('keepalive'), ': keepalive\n\n');
  });

  it('prefixes every line so text cannot become a field', () => {
    const frame = encodeSseComment('one\ndata: {"type":"error"}\r\nthree');
    assert.equal(frame, ': one\n: data: {"type":"error"}\n: three\n\n');
    assert.deepEqual(decodeAll([new TextEncoder().encode(frame)]), []);
  });
});
