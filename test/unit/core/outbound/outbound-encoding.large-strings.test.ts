import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { resolveBridgeOptions, type BridgeOptions } from '../../../../src/core/bridge-options.ts';
import { convertResponsesRequestToChatRequest, type LoweredRequest } from '../../../../src/core/lower/convert-responses-request-to-chat-request.ts';
import { encodeChatRequest, extractLargeStrings, LargeStringTable, restoreAllButPassthroughText, splitChatRequest } from '../../../../src/core/outbound/outbound-encoding.ts';
import { createWarningLedger } from '../../../../src/core/warnings.ts';
import { fixturePath } from '../../../support/fixtures.ts';

/*
 * A large body's long strings are carried as bytes through lowering (outbound-encoding.ts). Whatever
 * the body, the backend must receive the same request as with a full parse and serialisation, the panel
 * must see the same request and warnings, and a body JSON.parse refuses must never be taken.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed_0019);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

type Outcome = { kind: 'lowered'; lowered: LoweredRequest } | { kind: 'refused'; message: string };

function lowerClassic(text: string, options: BridgeOptions): Outcome {
  try {
    return { kind: 'lowered', lowered: convertResponsesRequestToChatRequest(JSON.parse(text), options, createWarningLedger()) };
  } catch (error) {
    return { kind: 'refused', message: String(error) };
  }
}

/**
 * The request path of a large body, as outbound-encoding.ts and responses-exchange.ts run it:
 * what the backend receives (parsed), what the panel reads, and the warnings.
 */
function lowerWithLargeStrings(text: string, options: BridgeOptions, minBytes: number, byParts: boolean) {
  const table = extractLargeStrings(Buffer.from(text), { minBytes });
  if (table === null) return null;
  let lowered: LoweredRequest;
  try {
    lowered = convertResponsesRequestToChatRequest(restoreAllButPassthroughText(JSON.parse(table.skeleton), table), options, createWarningLedger());
  } catch (error) {
    return { kind: 'refused' as const, message: String(error) };
  }
  const sent = encodeChatRequest(lowered.chatRequest, { byParts, largeStrings: table });
  return {
    kind: 'lowered' as const,
    table,
    body: typeof sent.body === 'string' ? sent.body : sent.body.toString('utf8'),
    request: sent.readRequest(),
    parts: sent.readParts?.() ?? null,
    warnings: table.restore(lowered.warnings),
    toolMap: lowered.toolMap,
  };
}

function assertSameLowering(text: string, options: BridgeOptions, minBytes: number, byParts: boolean, label: string): void {
  const classic = lowerClassic(text, options);
  const carried = lowerWithLargeStrings(text, options, minBytes, byParts);
  if (carried === null) return;
  assert.equal(carried.kind, classic.kind, `${label}: ${classic.kind === 'refused' ? classic.message : ''} ${carried.kind === 'refused' ? carried.message : ''}`);
  if (carried.kind !== 'lowered' || classic.kind !== 'lowered') {
    if (carried.kind === 'refused' && classic.kind === 'refused') assert.equal(carried.message, classic.message, label);
    return;
  }
  const expected = classic.lowered.chatRequest;
  assert.deepEqual(JSON.parse(carried.body), expected, `${label}: what the backend receives`);
  assert.deepEqual(carried.request, expected, `${label}: what the panel reads`);
  assert.deepEqual(carried.warnings, classic.lowered.warnings, `${label}: warnings`);
  assert.deepEqual([...carried.toolMap.keys()], [...classic.lowered.toolMap.keys()], label);
  if (byParts) {
    assert.ok(carried.parts);
    const classicParts = splitChatRequest(expected);
    assert.deepEqual(JSON.parse(carried.parts.head), JSON.parse(classicParts.head), label);
    assert.deepEqual(carried.parts.messages.map((part) => JSON.parse(part) as unknown), classicParts.messages.map((part) => JSON.parse(part) as unknown), label);
    assert.equal(carried.parts.messages.join(','), carried.body.slice(carried.body.indexOf('"messages":[') + 12, carried.body.indexOf('"messages":[') + 12 + carried.parts.messages.join(',').length), label);
  }
}

const CAPTURES = fixturePath('captures');
const CAPTURE_TEXTS: Array<{ name: string; text: string }> = readdirSync(CAPTURES)
  .filter((name) => name.endsWith('.json') && !name.startsWith('headers_'))
  .flatMap((name) => {
    const parsed = JSON.parse(readFileSync(path.join(CAPTURES, name), 'utf8')) as unknown;
    const bodies = Array.isArray(parsed) ? parsed.map((exchange) => (exchange as { body: unknown }).body) : [parsed];
    return bodies.map((body, index) => ({ name: `${name}#${index}`, text: JSON.stringify(body) }));
  });

/** Text with what JSON escaping and the placeholders' own syntax meet: quotes, backslashes, controls, U+0000, non-ASCII. */
const trickyText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.array(fc.constantFrom('"', '\\', '\n', '\t', '\u0000', '\u001f', '\u2028', 'é', '✓', '😀', ':', '0', 'a', ' '), { maxLength: 40 }).map((parts) => parts.join('')),
  fc.constant(''),
);

const textPart = fc.record({ type: fc.constantFrom('input_text', 'output_text', 'text'), text: trickyText });
const imagePart = fc.record({ type: fc.constant('input_image'), image_url: fc.constant('data:image/png;base64,AAAA') });
const content = fc.oneof(trickyText, fc.array(fc.oneof({ weight: 4, arbitrary: textPart }, { weight: 1, arbitrary: imagePart }), { maxLength: 3 }));
const callId = fc.constantFrom('call_1', 'call_2');

const inputItem = fc.oneof(
  fc.record({ type: fc.constant('message'), role: fc.constantFrom('user', 'assistant', 'developer', 'system'), content }),
  fc.record({ role: fc.constantFrom('user', 'assistant'), content }),
  fc.record({
    type: fc.constant('reasoning'),
    summary: fc.array(fc.record({ type: fc.constant('summary_text'), text: trickyText }), { maxLength: 2 }),
    content: fc.array(fc.record({ type: fc.constant('reasoning_text'), text: trickyText }), { maxLength: 2 }),
  }),
  fc.record({ type: fc.constant('function_call'), call_id: callId, name: fc.constant('exec_command'), arguments: fc.oneof(trickyText, fc.constant('{"cmd":"ls"}')) }),
  fc.record({ type: fc.constantFrom('function_call_output', 'custom_tool_call_output'), call_id: callId, output: fc.oneof(trickyText, fc.array(textPart, { maxLength: 3 })) }),
  fc.record({ type: fc.constant('custom_tool_call'), call_id: callId, name: fc.constant('apply_patch'), input: trickyText }),
  fc.record({ type: fc.constant('agent_message'), author: fc.constant('worker'), content: fc.array(textPart, { maxLength: 3 }) }),
  fc.record({ type: fc.constant('web_search_call'), action: fc.record({ query: trickyText }) }),
);

const request = fc.record(
  {
    model: fc.constant('qwen3-coder'),
    instructions: trickyText,
    input: fc.oneof({ weight: 1, arbitrary: trickyText }, { weight: 6, arbitrary: fc.array(inputItem, { maxLength: 8 }) }),
    tools: fc.constant([
      { type: 'custom', name: 'apply_patch', description: 'Patch files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } },
      { type: 'function', name: 'exec_command', description: 'Run a command.', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
    ]),
    stream: fc.boolean(),
  },
  { requiredKeys: ['model', 'input'] },
);

describe('carrying long strings through lowering', () => {
  it('sends every capture exactly as a full parse would, with every string carried', () => {
    assert.ok(CAPTURE_TEXTS.length >= 15);
    let carried = 0;
    for (const { name, text } of CAPTURE_TEXTS) {
      for (const byParts of [false, true]) assertSameLowering(text, resolveBridgeOptions(), 1, byParts, name);
      carried += extractLargeStrings(Buffer.from(text), { minBytes: 1 })?.count ?? 0;
    }
    assert.ok(carried > 1_000, `${carried} strings carried`);
  });

  it('gives the same request, panel view and warnings as a full parse for any Codex-shaped body', () => {
    fc.assert(
      fc.property(request, fc.constantFrom(1, 3, 16), fc.boolean(), fc.constantFrom<'join' | 'list'>('join', 'list'), (body, minBytes, byParts, toolOutputParts) => {
        assertSameLowering(JSON.stringify(body), resolveBridgeOptions({ toolOutputParts }), minBytes, byParts, JSON.stringify(body));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('refuses what JSON.parse refuses: raw control characters, bad escapes, unterminated strings', () => {
    const long = 'x'.repeat(40);
    const malformed = [
      `{"model":"m","input":"${long}\u0001"}`,
      `{"model":"m","input":"${long}\n"}`,
      `{"model":"m","input":"${long}\\x"}`,
      `{"model":"m","input":"${long}\\u12g4"}`,
      `{"model":"m","input":"${long}\\u12"}`,
      `{"model":"m","input":"${long}\\\\\\q"}`,
      `{"model":"m","input":"${long}`,
      `{"model":"m","input":"${long}\\"}`,
    ];
    for (const text of malformed) {
      assert.throws(() => JSON.parse(text), SyntaxError, text);
      assert.equal(extractLargeStrings(Buffer.from(text), { minBytes: 8 }), null, text);
    }
  });

  it('takes every valid escape, keeps keys whole, and reads a body after a byte order mark', () => {
    const inside = `${'a'.repeat(20)}\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00 é ✓ \\\\`;
    const key = 'k'.repeat(30);
    const text = `\ufeff{"${key}" : "${inside}", "list":["${inside}", "short"], "__proto__": "${inside}"}`;
    const table = extractLargeStrings(Buffer.from(text), { minBytes: 16, start: 3 });
    assert.ok(table);
    assert.equal(table.count, 3, 'the key stays, the three values are carried');
    const parsed = JSON.parse(table.skeleton) as Record<string, unknown>;
    assert.ok(Object.hasOwn(parsed, key));
    const restored = table.restore(parsed);
    assert.deepEqual(restored, JSON.parse(text.slice(1)));
    assert.equal(Object.getPrototypeOf(restored), Object.prototype, 'a `__proto__` key stays an own property');
    assert.deepEqual(JSON.parse(table.expand(JSON.stringify(parsed))?.toString('utf8') ?? 'null'), JSON.parse(text.slice(1)));
  });

  it('joins placeholders with other text, and refuses to send one serialised twice', () => {
    const long = `line one "quoted" \\ ${'z'.repeat(30)}`;
    const table = extractLargeStrings(Buffer.from(JSON.stringify({ a: long, b: long })), { minBytes: 16 });
    assert.ok(table);
    const { a, b } = JSON.parse(table.skeleton) as { a: string; b: string };
    const joined = { text: `${a}\n\n${b}!` };
    assert.deepEqual(JSON.parse(table.expand(JSON.stringify(joined))?.toString('utf8') ?? 'null'), { text: `${long}\n\n${long}!` });
    const backslashThenPlaceholder = { text: `ends with \\${a}` };
    assert.deepEqual(JSON.parse(table.expand(JSON.stringify(backslashThenPlaceholder))?.toString('utf8') ?? 'null'), { text: `ends with \\${long}` });
    const twice = { arguments: JSON.stringify({ input: a }) };
    assert.equal(table.expand(JSON.stringify(twice)), null, 'a placeholder inside a serialised string is not spliced');
    assert.equal(table.restoreText(JSON.stringify({ input: a })), JSON.stringify({ input: long }));
    assert.equal(table.restoreText(JSON.stringify({ input: `x\\${a}` })), JSON.stringify({ input: `x\\${long}` }));
    assert.equal(table.restoreText(JSON.stringify([JSON.stringify({ input: `\\\\${a}` })])), JSON.stringify([JSON.stringify({ input: `\\\\${long}` })]));
    assert.equal(table.restoreText(`${a}|${JSON.stringify(b)}`), `${long}|${JSON.stringify(long)}`);
    // Passthrough text is only copied or joined (outbound-encoding.ts): a placeholder serialised into
    // another string is a bug in the lowering, which fails the request rather than send a placeholder.
    assert.throws(
      () => encodeChatRequest({ model: 'm', messages: [{ role: 'user', content: JSON.stringify({ input: a }) }] } as never, { byParts: true, largeStrings: table }),
      /placeholder for a long string of the body outside a passthrough text/,
    );
  });

  it('takes a client string that spells a placeholder as text: the nonce cannot be guessed', () => {
    const forged = LargeStringTable.placeholderFor('0'.repeat(24), 0);
    const body = { model: 'm', input: [{ type: 'message', role: 'user', content: forged }, { type: 'message', role: 'user', content: 'y'.repeat(60) }] };
    const result = lowerWithLargeStrings(JSON.stringify(body), resolveBridgeOptions(), 48, false);
    assert.equal(result?.kind, 'lowered');
    if (result?.kind !== 'lowered') return;
    assert.deepEqual(JSON.parse(result.body), convertResponsesRequestToChatRequest(body, resolveBridgeOptions(), createWarningLedger()).chatRequest);
    assert.equal(result.table.count, 1, 'only the long string is carried');
  });
});
