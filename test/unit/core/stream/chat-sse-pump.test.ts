import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ResponsesStreamEvent } from '../../../../src/core/responses/responses-output.ts';
import { ChatSsePump, liftJsonCompletion } from '../../../../src/core/stream/chat-sse-pump.ts';
import { ChatStreamTranslator } from '../../../../src/core/stream/chat-stream-to-responses-events.ts';
import { fixturePath } from '../../../support/fixtures.ts';

/** The one loop from a backend's SSE body to Responses events, as the server, the tests and the bench drive it. */

function createTranslator(): ChatStreamTranslator {
  let counter = 0;
  return new ChatStreamTranslator({
    responseId: 'resp_pump',
    model: 'qwen3-coder',
    createdAt: 0,
    toolMap: new Map(),
    createItemId: (prefix) => `${prefix}_${counter++}`,
    createCallId: () => `call_${counter++}`,
  });
}

function chunkFrame(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
}

const TEXT_ANSWER = `${chunkFrame({ role: 'assistant', content: 'Hel' })}${chunkFrame({ content: 'lo' })}${chunkFrame({}, 'stop')}data: [DONE]\n\n`;

function types(events: readonly ResponsesStreamEvent[]): string[] {
  return events.map((event) => event.type);
}

function terminal(events: readonly ResponsesStreamEvent[]): ResponsesStreamEvent {
  const last = events.at(-1);
  assert.ok(last, 'no events');
  return last;
}

function failure(events: readonly ResponsesStreamEvent[]): { code: string; message: string } | null | undefined {
  const last = terminal(events);
  assert.equal(last.type, 'response.failed');
  return last.type === 'response.failed' ? last.response.error : undefined;
}

describe('ChatSsePump', () => {
  it('lifts a whole answer the same whether it arrives in one piece or one byte at a time', () => {
    const whole = createTranslator();
    const wholePump = new ChatSsePump(whole);
    const wholeEvents = [...whole.start(), ...wholePump.push(TEXT_ANSWER), ...wholePump.end()];

    const split = createTranslator();
    const splitPump = new ChatSsePump(split);
    const splitEvents = [...split.start()];
    for (const byte of Buffer.from(TEXT_ANSWER, 'utf8')) splitEvents.push(...splitPump.push(Uint8Array.of(byte)));
    splitEvents.push(...splitPump.end());

    assert.deepEqual(splitEvents, wholeEvents);
    assert.equal(terminal(wholeEvents).type, 'response.completed');
    assert.equal(whole.finalResponse?.status, 'completed');
    const message = whole.finalResponse?.output[0];
    assert.equal(message?.type, 'message');
    assert.deepEqual(message?.type === 'message' ? message.content.map((part) => part.text) : null, ['Hello']);
  });

  it('ends the response at [DONE], with the bytes that carried it, and ignores anything after it', () => {
    const translator = createTranslator();
    const pump = new ChatSsePump(translator);
    translator.start();
    const events = pump.push(`${chunkFrame({ content: 'a' })}${chunkFrame({}, 'stop')}data: [DONE]\n\n`);
    assert.equal(pump.wantsMore, false);
    assert.deepEqual(types(events).slice(-1), ['response.completed'], 'the last event leaves with [DONE], not at the end of the body');
    assert.deepEqual(pump.push(chunkFrame({ content: 'late' })), []);
    assert.deepEqual(pump.end(), [], 'nothing is left for the end of the body');
    assert.equal(JSON.stringify(translator.finalResponse).includes('late'), false);
  });

  it('fails on an error frame, naming the source and recognising context overflow', () => {
    const translator = createTranslator();
    const pump = new ChatSsePump(translator, { source: 'http://127.0.0.1:8000/v1' });
    const events = pump.push(`${chunkFrame({ content: 'partial' })}data: {"error":{"message":"This model's maximum context length is 8192 tokens","type":"BadRequestError"}}\n\n`);
    assert.deepEqual(failure(events), { code: 'context_length_exceeded', message: "backend stream failed (http://127.0.0.1:8000/v1): This model's maximum context length is 8192 tokens" });
    assert.equal(pump.wantsMore, false);
    assert.deepEqual(pump.end(), [], 'a failed response is not finished a second time');
  });

  it('fails on an unreadable frame, and names no source when given none', () => {
    const translator = createTranslator();
    const pump = new ChatSsePump(translator);
    const events = pump.push('data: {"id":"c","choices":"nope"}\n\n');
    const error = failure(events);
    assert.equal(error?.code, 'server_error');
    assert.match(error?.message ?? '', /^backend sent an unreadable stream frame: backend sent a malformed chunk at choices/);
  });

  it('hands ignored events (a proxy ping) to onIgnored and goes on reading', () => {
    const ignored: string[] = [];
    const translator = createTranslator();
    const pump = new ChatSsePump(translator, { onIgnored: (message) => ignored.push(message) });
    translator.start();
    pump.push('event: ping\ndata:\n\n');
    assert.equal(ignored.length, 1);
    assert.match(ignored[0] ?? '', /empty data field/);
    assert.equal(pump.wantsMore, true);
    pump.push(`${chunkFrame({ content: 'x' })}${chunkFrame({}, 'stop')}`);
    assert.equal(terminal(pump.end()).type, 'response.completed');
  });

  it('flushes an unterminated last frame at the end of the body (llama.cpp ends with one newline)', () => {
    const translator = createTranslator();
    const pump = new ChatSsePump(translator);
    translator.start();
    pump.push(chunkFrame({ content: 'x' }));
    pump.push(chunkFrame({}, 'stop').trimEnd());
    assert.equal(terminal(pump.end()).type, 'response.completed');
  });

  it('fails an answer that ends without a finish reason', () => {
    const translator = createTranslator();
    const pump = new ChatSsePump(translator);
    pump.push(chunkFrame({ content: 'Looking' }));
    assert.match(failure(pump.end())?.message ?? '', /ended before a finish reason/);
  });

  it('lifts a recorded vLLM stream to a completed response', () => {
    const translator = createTranslator();
    const pump = new ChatSsePump(translator);
    const events = [...translator.start(), ...pump.push(readFileSync(fixturePath('backend-examples', 'vllm-stream-text-usage.sse'))), ...pump.end()];
    assert.equal(terminal(events).type, 'response.completed');
    assert.ok(translator.finalResponse?.usage, 'usage from the last chunk reaches the response');
  });
});

describe('liftJsonCompletion', () => {
  it('lifts one JSON completion like the equivalent stream', () => {
    const translator = createTranslator();
    const completion = { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }] };
    const events = [...translator.start(), ...liftJsonCompletion(translator, JSON.stringify(completion), { source: 'http://b/v1' })];
    assert.equal(terminal(events).type, 'response.completed');
    const message = translator.finalResponse?.output[0];
    assert.deepEqual(message?.type === 'message' ? message.content.map((part) => part.text) : null, ['Hello']);
  });

  it('fails on text that is no completion, naming the source', () => {
    const translator = createTranslator();
    assert.deepEqual(failure(liftJsonCompletion(translator, '{"choices": 3}', { source: 'http://b/v1' })), {
      code: 'server_error',
      message: 'backend answered a stream request with unreadable JSON (http://b/v1)',
    });
  });
});
