import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { resolveBridgeOptions } from '../../src/core/bridge-options.ts';
import { createGrammarCache } from '../../src/core/grammar/grammar-cache.ts';
import type { ItemIdPrefix } from '../../src/core/ids.ts';
import { convertResponsesRequestToChatRequest } from '../../src/core/lower/convert-responses-request-to-chat-request.ts';
import type { ResponsesStreamEvent } from '../../src/core/responses/responses-output.ts';
import { encodeSseEvent } from '../../src/core/sse/sse-encoder.ts';
import { ChatStreamTranslator } from '../../src/core/stream/chat-stream-to-responses-events.ts';
import { ChatSsePump, liftJsonCompletion } from '../../src/core/stream/chat-sse-pump.ts';
import type { ToolMap, ToolMapEntry } from '../../src/core/tool-map.ts';
import { createWarningLedger } from '../../src/core/warnings.ts';
import { checkCodexStream } from '../support/codex-stream-oracle.ts';
import { fixturePath } from '../support/fixtures.ts';

/*
 * Property-based fuzzing of the streaming half of the core — random Chat chunk streams,
 * serialised as SSE and cut into random byte pieces, through the SSE decoder, the frame classifier
 * and the translator exactly as the server drives them. No input may throw or break the event
 * grammar: exactly one terminal event; every `output_item.added` has its `done` unless the stream
 * ends incomplete or failed (a cut call is never delivered); every lifted
 * custom call keeps its payload byte for byte.
 *
 * Runs are bounded and seeded: FUZZ_SEED and FUZZ_RUNS override; fast-check prints the seed and the
 * shrunk counterexample on failure.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed_0008);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);
const PARAMETERS: fc.Parameters<unknown> = { seed: SEED, numRuns: RUNS, endOnFailure: false };

const CAPTURES = fixturePath('captures');

/** The real tool maps lowering produces for Codex's apply_patch and code-mode requests, merged. */
function loadToolMap(): ToolMap {
  const merged = new Map<string, ToolMapEntry>();
  for (const name of ['b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json', 'c_enable_code_mode_qwen3-coder_v0.171.req1.json']) {
    const body = JSON.parse(readFileSync(path.join(CAPTURES, name), 'utf8')) as unknown;
    const lowered = convertResponsesRequestToChatRequest(body, resolveBridgeOptions(), createWarningLedger());
    for (const [wireName, entry] of lowered.toolMap) merged.set(wireName, entry);
  }
  return merged;
}

const TOOL_MAP = loadToolMap();
const CUSTOM_WIRE_NAMES = [...TOOL_MAP.values()].filter((entry) => entry.kind === 'custom').map((entry) => entry.wireName);
const FUNCTION_WIRE_NAMES = [...TOOL_MAP.values()].filter((entry) => entry.kind === 'function').map((entry) => entry.wireName);
const GRAMMAR_CACHE = createGrammarCache();

// ---------- the server's read loop (the shared pump), without the I/O ----------

type StreamEnding = 'done' | 'eof' | 'socket-cut';

interface PipelineRun {
  events: ResponsesStreamEvent[];
  translator: ChatStreamTranslator;
}

function createTranslator(grammarRepair = false): ChatStreamTranslator {
  let itemCounter = 0;
  let callCounter = 0;
  return new ChatStreamTranslator({
    responseId: 'resp_fuzz',
    model: 'qwen3-coder',
    createdAt: 0,
    toolMap: TOOL_MAP,
    grammarRepair,
    grammarCache: GRAMMAR_CACHE,
    createItemId: (prefix: ItemIdPrefix) => `${prefix}_${itemCounter++}`,
    createCallId: () => `call_synthesised_${callCounter++}`,
  });
}

/**
 * The server's read loop without the I/O: the same pump (chat-sse-pump.ts) over each byte piece,
 * stopping when it wants no more, then the end of the body; a socket cut is `fail`. `keepaliveAfter`
 * holds piece indexes after which the keepalive timer fires.
 */
function runPipeline(pieces: readonly Uint8Array[], ending: StreamEnding, keepaliveAfter: ReadonlySet<number>, grammarRepair = false): PipelineRun {
  const translator = createTranslator(grammarRepair);
  const events: ResponsesStreamEvent[] = [...translator.start()];
  const pump = new ChatSsePump(translator);
  for (const [index, piece] of pieces.entries()) {
    events.push(...pump.push(piece));
    if (keepaliveAfter.has(index)) events.push(...translator.keepalive());
    if (!pump.wantsMore) break;
  }
  if (ending === 'socket-cut') {
    events.push(...translator.fail({ code: 'server_error', message: 'backend stream broke: other side closed' }));
  } else {
    events.push(...pump.end());
  }
  return { events, translator };
}

/** The server's path for a backend that answers a stream request with one JSON completion. */
function runJsonCompletion(text: string): PipelineRun {
  const translator = createTranslator();
  const events: ResponsesStreamEvent[] = [...translator.start(), ...liftJsonCompletion(translator, text)];
  return { events, translator };
}

/** Every event must also survive the SSE writer: no CR/LF in names, serialisable data. */
function assertEncodable(events: readonly ResponsesStreamEvent[]): void {
  for (const event of events) assert.ok(encodeSseEvent(event).endsWith('\n\n'));
}

function cutBytes(input: string | Uint8Array, cutSeeds: readonly number[]): Uint8Array[] {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const cuts = [...new Set(cutSeeds.map((seed) => seed % (bytes.length + 1)))].sort((left, right) => left - right);
  const pieces: Uint8Array[] = [];
  let previous = 0;
  for (const cut of [...cuts, bytes.length]) {
    pieces.push(bytes.subarray(previous, cut));
    previous = cut;
  }
  return pieces;
}

function terminalEvents(events: readonly ResponsesStreamEvent[]): ResponsesStreamEvent[] {
  return events.filter((event) => event.type === 'response.completed' || event.type === 'response.incomplete' || event.type === 'response.failed');
}

/** The invariants every stream keeps, whatever the backend sent. */
function assertStreamInvariants(run: PipelineRun): void {
  const { events, translator } = run;
  const terminals = terminalEvents(events);
  assert.equal(terminals.length, 1, `exactly one terminal event, got ${terminals.map((event) => event.type).join(', ') || 'none'}`);
  assert.equal(events.at(-1), terminals[0], 'the terminal event is the last one');
  assertEncodable(events);
  const mismatches = translator.warnings.flatMap((warning) => (warning.kind === 'input_delta_mismatch' && warning.callId ? [warning.callId] : []));
  // The oracle encodes "added without done only when the terminal is incomplete or failed".
  const violations = checkCodexStream(events, { expectedTerminal: 'any', inputDeltaMismatchCallIds: mismatches });
  assert.deepEqual(violations, []);
  const terminal = terminals[0]!;
  if (terminal.type === 'response.completed') {
    const added = events.filter((event) => event.type === 'response.output_item.added').length;
    const done = events.filter((event) => event.type === 'response.output_item.done').length;
    assert.equal(done, added, 'a completed response closed every item');
  }
}

// ---------- arbitraries: chaotic backends ----------

/** `arbitrary` about once in `every` draws, else `nil` (fc.option's `freq` is the odds of nil, not of the value). */
function sometimes<T, Nil>(arbitrary: fc.Arbitrary<T>, every: number, nil: Nil): fc.Arbitrary<T | Nil> {
  return fc.oneof({ weight: every - 1, arbitrary: fc.constant(nil) }, { weight: 1, arbitrary });
}

const anyText = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.constantFrom('', ' ', '\n\n', '\t', '\r\n', '\u0000', '\ud800', '\udfff', '🙂', '"}', '{"input":"', '\\', '\\u00'),
);
const nameArbitrary = fc.constantFrom<string | null | undefined>(...CUSTOM_WIRE_NAMES, ...FUNCTION_WIRE_NAMES.slice(0, 3), 'invented_tool', 'functions__', '', null, undefined);
const argumentsArbitrary = fc.oneof(
  anyText,
  fc.constantFrom('{"input":"', '{"input": "', '"}', '{', '}', '{}', '{"input": null}', '{"input":1}', '[]', 'null', '{"input":"a","extra":1}', '"{\\"input\\":\\"x\\"}"'),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  fc.constant(null),
);
const toolCallEntry = fc.record(
  {
    index: fc.constantFrom<number | null | undefined>(0, 0, 1, 2, null, undefined),
    id: fc.constantFrom<string | null | undefined>('call_a', 'call_b', 'call_a', '', null, undefined),
    type: fc.constantFrom<string | null | undefined>('function', 'function', 'custom', null, undefined),
    function: fc.option(fc.record({ name: nameArbitrary, arguments: argumentsArbitrary }, { requiredKeys: [] }), { nil: undefined }),
    custom: sometimes(fc.record({ name: nameArbitrary, input: fc.option(anyText, { nil: null }) }, { requiredKeys: [] }), 6, undefined),
  },
  { requiredKeys: [] },
);
const finishReason = fc.constantFrom('stop', 'tool_calls', 'length', 'content_filter', 'abort', 'error', 'repetition', 'function_call', 'eos', 'unheard_of');
const delta = fc.record(
  {
    role: fc.constantFrom('assistant', null),
    content: fc.option(anyText, { nil: null }),
    reasoning: sometimes(anyText, 3, null),
    reasoning_content: sometimes(anyText, 3, null),
    tool_calls: sometimes(fc.array(toolCallEntry, { maxLength: 3 }), 2, null),
  },
  { requiredKeys: [] },
);
const count = fc.option(fc.oneof(fc.nat(5000), fc.constant(-1), fc.double({ noNaN: true, noDefaultInfinity: true })), { nil: null });
const usage = fc.record(
  {
    prompt_tokens: count,
    completion_tokens: count,
    total_tokens: count,
    prompt_tokens_details: fc.option(fc.record({ cached_tokens: count }, { requiredKeys: [] }), { nil: null }),
    completion_tokens_details: fc.option(fc.record({ reasoning_tokens: count }, { requiredKeys: [] }), { nil: null }),
    reasoning_tokens: count,
  },
  { requiredKeys: [] },
);
const choice = fc.record(
  {
    index: fc.constantFrom<number | null>(0, 0, 0, 1, null),
    delta: fc.option(delta, { nil: null, freq: 8 }),
    finish_reason: sometimes(finishReason, 6, null),
  },
  { requiredKeys: [] },
);
const chunk = fc.record(
  {
    id: fc.constantFrom('chatcmpl-1', 'chatcmpl-2', null),
    object: fc.constantFrom('chat.completion.chunk', null),
    created: fc.constant(0),
    model: fc.constant('m'),
    choices: fc.option(fc.array(choice, { maxLength: 2 }), { nil: null, freq: 10 }),
    usage: sometimes(usage, 4, null),
  },
  { requiredKeys: ['choices'] },
);
const errorFrame = fc.oneof(
  fc.record({ error: fc.record({ message: anyText, type: fc.constantFrom('InternalServerError', 'exceed_context_size_error', null), code: fc.constantFrom(500, 400, null) }, { requiredKeys: [] }) }),
  fc.record({ error: anyText }),
  fc.record({ object: fc.constant('error'), message: anyText, type: fc.constantFrom('BadRequestError', null), code: fc.constant(400) }),
  fc.record({ error: fc.jsonValue({ maxDepth: 2 }) }),
);

/** One SSE frame: mostly chunks, sometimes error frames, garbage, comments and unknown fields. */
const frame = fc.oneof(
  { weight: 20, arbitrary: chunk.map((value) => `data: ${JSON.stringify(value)}\n\n`) },
  { weight: 2, arbitrary: errorFrame.map((value) => `data: ${JSON.stringify(value)}\n\n`) },
  { weight: 1, arbitrary: errorFrame.map((value) => `error: ${JSON.stringify(value)}\n\n`) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => `data: ${JSON.stringify(value) ?? 'null'}\n\n`) },
  { weight: 1, arbitrary: anyText.map((text) => `data: ${text.replace(/[\r\n]/g, ' ')}\n\n`) },
  { weight: 1, arbitrary: fc.constantFrom(': keepalive\n\n', 'event: ping\n\n', 'event: ping\ndata: {}\n\n', 'retry: 100\n', 'id: 7\n', 'data: [DONE]\n\n', '\n', 'x-unknown: 1\n\n') },
);

const streamText = fc
  .record({
    frames: fc.array(frame, { maxLength: 14 }),
    crlf: fc.boolean(),
    ending: fc.constantFrom<StreamEnding>('done', 'done', 'eof', 'socket-cut'),
  })
  .map(({ frames, crlf, ending }) => {
    let text = frames.join('') + (ending === 'done' ? 'data: [DONE]\n\n' : '');
    if (crlf) text = text.replace(/\n/g, '\r\n');
    return { text, ending };
  });

describe('fuzz: random Chat chunk streams through decoder, classifier and translator', () => {
  it('never throw and always keep the event grammar', () => {
    fc.assert(
      fc.property(streamText, fc.array(fc.nat(), { maxLength: 16 }), fc.array(fc.nat(20), { maxLength: 3 }), fc.boolean(), ({ text, ending }, cutSeeds, keepalives, grammarRepair) => {
        const run = runPipeline(cutBytes(text, cutSeeds), ending, new Set(keepalives), grammarRepair);
        assertStreamInvariants(run);
      }),
      PARAMETERS,
    );
  });

  it('random JSON completions (a backend that does not stream) keep the same grammar', () => {
    const completion = fc.record(
      {
        id: fc.constantFrom('chatcmpl-1', null),
        object: fc.constant('chat.completion'),
        choices: fc.array(
          fc.record({ index: fc.constantFrom(0, 0, 1, null), message: fc.option(delta, { nil: null, freq: 8 }), finish_reason: fc.option(finishReason, { nil: null, freq: 8 }) }, { requiredKeys: [] }),
          { maxLength: 2 },
        ),
        usage: sometimes(usage, 2, null),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof({ weight: 8, arbitrary: completion }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) }), (value) => {
        assertStreamInvariants(runJsonCompletion(JSON.stringify(value) ?? 'null'));
      }),
      PARAMETERS,
    );
  });

  it('random bytes are read as a failure or an empty stream, never a crash', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(fc.nat(), { maxLength: 6 }), (bytes, cutSeeds) => {
        assertStreamInvariants(runPipeline(cutBytes(bytes, cutSeeds), 'eof', new Set()));
      }),
      PARAMETERS,
    );
  });
});

// ---------- arbitraries: well-behaved backends with tricky payloads ----------

const payloadCharacter = fc.oneof(
  fc.constantFrom('"', '\\', '\n', '\r', '\t', '/', '\b', '\f', '\u0000', '\u001f', '\u2028', 'é', '—', '👋', '𝄞', '\ud800', '\udc00', '<', '</parameter>', '*** End Patch', '{"input":"', ' '),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 3 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
);
const payload = fc.array(payloadCharacter, { maxLength: 40 }).map((characters) => characters.join(''));
const byteForm = fc.constantFrom('compact', 'spaced', 'ascii-escaped', 'html-escaped');

function renderArguments(value: Record<string, unknown>, form: string): string {
  switch (form) {
    case 'spaced':
      return JSON.stringify(value, null, 1).replace(/\n\s*/g, ' ');
    case 'ascii-escaped':
      return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
    case 'html-escaped':
      // Go's encoding/json (Ollama) escapes <, > and &.
      return JSON.stringify(value).replace(/[<>&]/g, (character) => `\\u00${character.charCodeAt(0).toString(16)}`);
    default:
      return JSON.stringify(value);
  }
}

function splitAt(text: string, seeds: readonly number[]): string[] {
  const cuts = [...new Set(seeds.map((seed) => seed % (text.length + 1)))].sort((left, right) => left - right);
  const parts: string[] = [];
  let previous = 0;
  for (const cut of [...cuts, text.length]) {
    parts.push(text.slice(previous, cut));
    previous = cut;
  }
  return parts.filter((part, index) => index === 0 || part !== '');
}

interface PlannedCall {
  index: number;
  id: string | null;
  wireName: string;
  custom: boolean;
  payload: string;
  argumentsText: string;
  fragments: string[];
}

const plannedCall = fc.record({
  custom: fc.boolean(),
  customName: fc.constantFrom(...CUSTOM_WIRE_NAMES),
  functionName: fc.constantFrom(...FUNCTION_WIRE_NAMES),
  payload,
  form: byteForm,
  cutSeeds: fc.array(fc.nat(), { maxLength: 8 }),
  // SGLang sends null ids after the first delta; some engines send no id at all.
  hasId: fc.boolean(),
});

const wellFormedStream = fc.record({
  reasoning: fc.option(payload, { nil: null }),
  text: fc.option(payload, { nil: null }),
  calls: fc.array(plannedCall, { minLength: 1, maxLength: 3 }),
  interleaveSeeds: fc.array(fc.nat(), { maxLength: 30 }),
  whitespaceBetween: fc.boolean(),
  lastFragmentInFinishChunk: fc.boolean(),
  finishReason: fc.constantFrom('tool_calls', 'stop'),
  usageChunk: fc.boolean(),
  ending: fc.constantFrom<StreamEnding>('done', 'eof'),
  byteCutSeeds: fc.array(fc.nat(), { maxLength: 16 }),
});

describe('fuzz: every lifted custom call keeps its payload', () => {
  it('through random fragmentation, interleaving, byte forms and byte splits', () => {
    fc.assert(
      fc.property(wellFormedStream, (plan) => {
        const calls: PlannedCall[] = plan.calls.map((call, index) => {
          const argumentsText = call.custom ? renderArguments({ input: call.payload }, call.form) : renderArguments({ text: call.payload, n: index }, call.form);
          return {
            index,
            id: call.hasId ? `call_${index}` : null,
            wireName: call.custom ? call.customName : call.functionName,
            custom: call.custom,
            payload: call.payload,
            argumentsText,
            fragments: splitAt(argumentsText, call.cutSeeds),
          };
        });
        const chunks: unknown[] = [{ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }];
        const deltaChunk = (value: Record<string, unknown>, finish: string | null = null): unknown => ({
          id: 'chatcmpl-fuzz',
          object: 'chat.completion.chunk',
          choices: [{ index: 0, delta: value, finish_reason: finish }],
        });
        if (plan.reasoning) chunks.push(deltaChunk({ reasoning_content: plan.reasoning }));
        if (plan.text) chunks.push(deltaChunk({ content: plan.text }));
        // Each call: a header with its name (and first fragment), then its fragments, interleaved across calls.
        const queues = calls.map((call) => [...call.fragments]);
        const held: Array<{ call: PlannedCall; fragment: string } | null> = calls.map(() => null);
        if (plan.lastFragmentInFinishChunk) {
          const last = calls.length - 1;
          const queue = queues[last]!;
          if (queue.length > 1) held[last] = { call: calls[last]!, fragment: queue.pop()! };
        }
        for (const call of calls) {
          const first = queues[call.index]!.shift() ?? '';
          chunks.push(deltaChunk({ tool_calls: [{ index: call.index, id: call.id, type: 'function', function: { name: call.wireName, arguments: first } }] }));
        }
        let seed = 0;
        while (queues.some((queue) => queue.length > 0)) {
          const open = queues.map((queue, index) => (queue.length > 0 ? index : -1)).filter((index) => index >= 0);
          const pick = open[(plan.interleaveSeeds[seed++ % Math.max(1, plan.interleaveSeeds.length)] ?? 0) % open.length]!;
          const fragment = queues[pick]!.shift()!;
          chunks.push(deltaChunk({ tool_calls: [{ index: pick, id: null, function: { name: null, arguments: fragment } }] }));
          if (plan.whitespaceBetween) chunks.push(deltaChunk({ content: '\n\n' }));
        }
        const finishDelta = held.find((entry) => entry !== null);
        chunks.push(
          deltaChunk(finishDelta ? { tool_calls: [{ index: finishDelta.call.index, function: { arguments: finishDelta.fragment } }] } : {}, plan.finishReason),
        );
        if (plan.usageChunk) chunks.push({ id: 'chatcmpl-fuzz', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: null } });
        const text = chunks.map((value) => `data: ${JSON.stringify(value)}\n\n`).join('') + (plan.ending === 'done' ? 'data: [DONE]\n\n' : '');

        const run = runPipeline(cutBytes(text, plan.byteCutSeeds), plan.ending, new Set());
        assertStreamInvariants(run);
        const { events } = run;
        assert.equal(events.at(-1)?.type, 'response.completed');
        const doneItems = events.flatMap((event) => (event.type === 'response.output_item.done' ? [event.item] : []));
        const doneCalls = doneItems.filter((item) => item.type === 'custom_tool_call' || item.type === 'function_call');
        assert.equal(doneCalls.length, calls.length);
        for (const [position, call] of calls.entries()) {
          const item = doneCalls[position]!;
          if (call.custom) {
            assert.equal(item.type, 'custom_tool_call');
            if (item.type !== 'custom_tool_call') continue;
            assert.equal(item.input, call.payload, 'the delivered input is the payload');
            const deltas = events
              .filter((event) => event.type === 'response.custom_tool_call_input.delta' && event.item_id === item.id)
              .map((event) => (event.type === 'response.custom_tool_call_input.delta' ? event.delta : ''))
              .join('');
            assert.equal(deltas, call.payload, 'the streamed deltas add up to the payload');
          } else {
            assert.equal(item.type, 'function_call');
            if (item.type !== 'function_call') continue;
            assert.deepEqual(JSON.parse(item.arguments), { text: call.payload, n: call.index });
          }
        }
        assert.deepEqual(
          run.translator.warnings.filter((warning) => warning.kind !== 'grammar_mismatch' && warning.kind !== 'grammar_check_skipped'),
          [],
          'a well-formed stream raises no warning beyond the grammar check',
        );
      }),
      PARAMETERS,
    );
  });
});

describe('fuzz: shrunk counterexamples, kept as regressions', () => {
  const frames = (...chunks: unknown[]): string => `${chunks.map((value) => `data: ${JSON.stringify(value)}\n\n`).join('')}data: [DONE]\n\n`;

  it('a tool call that never gets a name fails the response instead of delivering a nameless call', () => {
    const run = runPipeline(
      cutBytes(frames({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '{"cmd":"ls"}' } }] }, finish_reason: 'tool_calls' }] }), []),
      'done',
      new Set(),
    );
    assertStreamInvariants(run);
    const terminal = run.events.at(-1);
    assert.equal(terminal?.type, 'response.failed');
    assert.match(JSON.stringify(terminal), /tool call without a function name \(arguments: .*cmd.*ls/);
    assert.equal(run.events.filter((event) => event.type === 'response.output_item.added').length, 0, 'nothing was announced');
  });

  it('an empty nameless entry carries nothing and is ignored', () => {
    const run = runPipeline(cutBytes(frames({ choices: [{ delta: { content: 'hi', tool_calls: [{}] }, finish_reason: 'stop' }] }), []), 'done', new Set());
    assertStreamInvariants(run);
    assert.equal(run.events.at(-1)?.type, 'response.completed');
  });

  it('a later entry in the other shape does not change the kind of an announced call', () => {
    const run = runPipeline(
      cutBytes(frames({ choices: [{ delta: { tool_calls: [{ function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } }, { custom: {} }] }, finish_reason: 'stop' }] }), []),
      'done',
      new Set(),
    );
    assertStreamInvariants(run);
    const done = run.events.flatMap((event) => (event.type === 'response.output_item.done' ? [event.item] : []));
    assert.deepEqual(
      done.map((item) => [item.type, item.type === 'function_call' ? item.arguments : null]),
      [['function_call', '{"cmd":"ls"}']],
    );
  });
});
