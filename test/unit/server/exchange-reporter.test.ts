import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveBridgeOptions } from '../../../src/core/bridge-options.ts';
import { convertResponsesRequestToChatRequest, type LoweredRequest } from '../../../src/core/lower/convert-responses-request-to-chat-request.ts';
import { labelRoundTrip } from '../../../src/core/traffic/round-trip-label.ts';
import { ChatStreamTranslator } from '../../../src/core/stream/chat-stream-to-responses-events.ts';
import { SENT_REQUEST_PARTS, type ExchangeStartEvent, type TrafficEvent } from '../../../src/core/traffic/traffic-event.ts';
import { createWarningLedger } from '../../../src/core/warnings.ts';
import { ExchangeReporter, type RequestReaders } from '../../../src/server/exchange-reporter.ts';

/** The traffic events of one exchange: one start, deltas for what was delivered, exactly one end. */

interface SetUp {
  reporter: ExchangeReporter;
  translator: ChatStreamTranslator;
  events: TrafficEvent[];
  clock: { now: number };
  lowered: LoweredRequest;
}

/** One exchange's reporter, started; `sent` says how its start event reads the request (by default, as lowered). */
function setUp(options: { exchangeId?: string; input?: string; sent?: (lowered: LoweredRequest) => RequestReaders } = {}): SetUp {
  const { exchangeId = 'resp_r', input = 'hi' } = options;
  const events: TrafficEvent[] = [];
  const clock = { now: 1_000 };
  const lowered = convertResponsesRequestToChatRequest({ model: 'qwen3-coder', input, stream: true }, resolveBridgeOptions(), createWarningLedger());
  const translator = new ChatStreamTranslator({ responseId: exchangeId, model: 'qwen3-coder', createdAt: 0, toolMap: lowered.toolMap });
  const reporter = new ExchangeReporter({ onTraffic: (event) => events.push(event), exchangeId, roundTrip: labelRoundTrip(undefined), startedAtMs: 1_000, now: () => clock.now });
  reporter.start(lowered, 123, translator, options.sent?.(lowered) ?? { readRequest: () => lowered.chatRequest, readParts: null });
  return { reporter, translator, events, clock, lowered };
}

function startEventOf(events: readonly TrafficEvent[]): ExchangeStartEvent {
  const start = events[0];
  if (start?.type !== 'exchange-start') return assert.fail('no start event');
  return start;
}

describe('ExchangeReporter', () => {
  it('reports the start with what lowering produced', () => {
    const { events } = setUp();
    assert.equal(events.length, 1);
    const start = events[0];
    assert.equal(start?.type, 'exchange-start');
    if (start?.type !== 'exchange-start') return;
    assert.equal(start.exchangeId, 'resp_r');
    assert.equal(start.requestBytes, 123);
    assert.equal(start.clientStream, true);
    assert.equal(start.model, 'qwen3-coder');
    assert.equal(start.startedAt, new Date(1_000).toISOString());
  });

  it('times the headers and the first delta, reports delivered items, and ends once with the final response', () => {
    const { reporter, translator, events, clock } = setUp();
    clock.now = 1_010;
    reporter.upstreamHeadersArrived();
    clock.now = 1_020;
    reporter.delivering(translator.start());
    assert.equal(events.length, 1, 'created and in_progress deliver nothing to report');
    clock.now = 1_030;
    reporter.delivering(translator.push({ id: 'c', choices: [{ index: 0, delta: { content: 'hello' }, finish_reason: 'stop' }] }));
    reporter.delivering(translator.finish());
    const deltas = events.filter((event) => event.type === 'exchange-delta');
    assert.equal(deltas.length, 1);
    assert.equal(deltas[0]?.type === 'exchange-delta' ? deltas[0].items[0]?.type : null, 'message');
    clock.now = 1_050;
    reporter.end('completed', 200, null);
    reporter.end('failed', 503, { code: 'server_error', message: 'late' });
    const ends = events.filter((event) => event.type === 'exchange-end');
    assert.equal(ends.length, 1, 'one end, whatever else tries to end the exchange');
    const end = ends[0];
    if (end?.type !== 'exchange-end') return assert.fail('no end event');
    assert.equal(reporter.ended, true);
    assert.deepEqual(end.timings, { upstreamHeadersMs: 10, firstDeltaMs: 30, totalMs: 50 });
    assert.equal(end.outcome, 'completed');
    assert.deepEqual(end.output, translator.finalResponse?.output);
  });

  it('without a final response ends with the items delivered so far', () => {
    const { reporter, events } = setUp();
    reporter.end('aborted', 499, null);
    const end = events.at(-1);
    assert.equal(end?.type, 'exchange-end');
    if (end?.type !== 'exchange-end') return;
    assert.deepEqual(end.output, []);
    assert.deepEqual(end.timings, { upstreamHeadersMs: null, firstDeltaMs: null, totalMs: 0 });
    assert.equal(end.httpStatus, 499);
  });

  it('reports the translator\'s new warnings once each, and all of them at the end', () => {
    const { reporter, translator, events } = setUp();
    reporter.delivering(translator.start());
    // vLLM's repetition detector ended the output: delivered, with a warning.
    reporter.delivering(translator.push({ id: 'c', choices: [{ index: 0, delta: { content: 'again and again' }, finish_reason: 'repetition' }] }));
    reporter.delivering(translator.finish());
    reporter.end('completed', 200, null);
    const deltaWarnings = events.flatMap((event) => (event.type === 'exchange-delta' ? event.warnings : []));
    assert.ok(translator.warnings.length > 0, 'the fixture must make the translator warn');
    assert.deepEqual(deltaWarnings, [...translator.warnings]);
    const end = events.at(-1);
    assert.deepEqual(end?.type === 'exchange-end' ? end.warnings : null, [...translator.warnings]);
  });

  it('reads the request as sent only when a listener reads it, and every copy or encoding of the event sees it', () => {
    const reads = { request: 0, parts: 0 };
    const parts = { head: '{"model":"qwen3-coder"', messages: ['{"role":"user","content":"hi"}'], tools: null };
    const { events, lowered } = setUp({ sent: (lowered) => ({ readRequest: () => (reads.request++, lowered.chatRequest), readParts: () => (reads.parts++, parts) }) });
    const start = startEventOf(events);
    assert.deepEqual(reads, { request: 0, parts: 0 }, 'reporting the start reads nothing');
    const copy = { ...start };
    assert.deepEqual(copy.loweredRequest, lowered.chatRequest);
    assert.deepEqual(reads, { request: 1, parts: 0 }, 'a copy reads the request, not its parts');
    assert.deepEqual(start[SENT_REQUEST_PARTS], parts);
    assert.deepEqual(Object.keys(copy).filter((key) => key.startsWith('lowered')), ['loweredRequest']);
    assert.deepEqual(Object.getOwnPropertySymbols(copy), [], 'neither the parts nor how the event reads its request is copied with it');
    assert.deepEqual(JSON.parse(JSON.stringify(start)).loweredRequest, JSON.parse(JSON.stringify(lowered.chatRequest)));
  });

  it('gives every start event the same getters, never a closure per request', () => {
    // A getter made per request kept its request alive after the event was gone (docs/PERFORMANCE.md).
    const getters = ['resp_a', 'resp_b'].map((exchangeId) => {
      const { events, lowered } = setUp({ exchangeId, input: exchangeId, sent: (lowered) => ({ readRequest: () => lowered.chatRequest, readParts: () => ({ head: '{}', messages: [], tools: null }) }) });
      const start = startEventOf(events);
      assert.equal(start.loweredRequest, lowered.chatRequest);
      return ['loweredRequest', SENT_REQUEST_PARTS].map((key) => Object.getOwnPropertyDescriptor(start, key)?.get);
    });
    assert.ok(getters[0]?.every((getter) => typeof getter === 'function'));
    assert.deepEqual(getters[0], getters[1]);
  });
});
