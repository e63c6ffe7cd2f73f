import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { resolveBridgeOptions, type BridgeOptions } from '../../src/core/bridge-options.ts';
import type { ChatRequest } from '../../src/core/chat/chat-completions-api.ts';
import { BridgeError } from '../../src/core/errors.ts';
import { convertResponsesRequestToChatRequest, type LoweredRequest } from '../../src/core/lower/convert-responses-request-to-chat-request.ts';
import { encodeChatRequest } from '../../src/core/outbound/outbound-encoding.ts';
import { MAX_WIRE_NAME_LENGTH } from '../../src/core/tool-map.ts';
import { createWarningLedger } from '../../src/core/warnings.ts';
import { validateChatRequestForVllm } from '../../mock-backend/vllm-chat-validator.ts';
import { fixturePath } from '../support/fixtures.ts';

/*
 * Property-based fuzzing of lowering — random Responses requests (Codex-shaped ones with
 * random kinds and values, mutated real captures, and arbitrary JSON). Lowering either returns a Chat
 * request that keeps the bridge's promises or refuses with a typed 4xx error (InvalidRequestError,
 * UnsupportedFeatureError); it never throws anything else (a TypeError here is a 400 "internal error"
 * for Codex).
 *
 * Runs are bounded and seeded: FUZZ_SEED and FUZZ_RUNS override; fast-check prints the seed and the
 * shrunk counterexample on failure.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed_0008);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);
const PARAMETERS: fc.Parameters<unknown> = { seed: SEED, numRuns: RUNS };

const CAPTURES = fixturePath('captures');
const CAPTURE_BODIES: unknown[] = readdirSync(CAPTURES)
  .filter((name) => name.endsWith('.json') && !name.startsWith('headers_'))
  // A file holding whole exchanges (the compaction capture) contributes each exchange's body.
  .flatMap((name) => {
    const parsed = JSON.parse(readFileSync(path.join(CAPTURES, name), 'utf8')) as unknown;
    return Array.isArray(parsed) ? parsed.map((exchange) => (exchange as { body: unknown }).body) : [parsed];
  });

const VALID_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

type LoweringOutcome = { kind: 'lowered'; lowered: LoweredRequest } | { kind: 'refused'; error: BridgeError };

/** Lowers, classifying the outcome; any error other than a typed refusal fails the property. */
function lower(body: unknown, options: BridgeOptions): LoweringOutcome {
  return outcomeOf(() => convertResponsesRequestToChatRequest(body, options, createWarningLedger()));
}

function outcomeOf(lowerRequest: () => LoweredRequest): LoweringOutcome {
  try {
    return { kind: 'lowered', lowered: lowerRequest() };
  } catch (error) {
    if (BridgeError.is(error) && (error.bridgeErrorReason === 'invalid_request' || error.bridgeErrorReason === 'unsupported_feature')) {
      assert.ok(error.message.length > 0, 'a refusal says why');
      return { kind: 'refused', error };
    }
    throw error;
  }
}

const BRIDGED_SCHEMA_KEYS = ['additionalProperties', 'properties', 'required', 'type'];

/** What every lowered request promises, whatever Codex sent. */
function assertLoweredInvariants(lowered: LoweredRequest, options: BridgeOptions): void {
  const { chatRequest, toolMap } = lowered;
  // What the server sends upstream: serialisable, and an object again when the backend parses it.
  assert.equal(typeof JSON.parse(JSON.stringify(chatRequest)), 'object');
  assert.equal(chatRequest.stream, true);
  assert.deepEqual(chatRequest.stream_options, { include_usage: true });
  assert.ok(typeof chatRequest.model === 'string' && chatRequest.model.length > 0);

  const tools = chatRequest.tools ?? [];
  if (tools.length === 0) {
    assert.equal(chatRequest.tools, undefined, 'vLLM rejects "tools": []');
    assert.equal(chatRequest.tool_choice, undefined, 'no tool_choice without tools');
    assert.equal(chatRequest.parallel_tool_calls, undefined);
  }
  const names = tools.map((tool) => {
    if (options.strategy === 'function_bridge') assert.equal(tool.type, 'function', 'only function tools reach the backend');
    const name = tool.type === 'function' ? tool.function.name : (tool as { custom?: { name?: string } }).custom?.name;
    assert.ok(typeof name === 'string' && name.length > 0 && name.length <= MAX_WIRE_NAME_LENGTH, `wire name ${String(name)}`);
    return name;
  });
  assert.equal(new Set(names).size, names.length, 'wire names are unique');
  assert.deepEqual([...toolMap.keys()].sort(), [...names].sort(), 'the reverse map knows exactly the tools sent');
  for (const tool of tools) {
    const entry = tool.type === 'function' ? toolMap.get(tool.function.name) : undefined;
    if (entry?.kind === 'custom' && tool.type === 'function') {
      const parameters = tool.function.parameters as Record<string, unknown>;
      assert.deepEqual(Object.keys(parameters).sort(), BRIDGED_SCHEMA_KEYS, 'a bridged custom tool takes exactly {"input": string}');
      assert.deepEqual(parameters.required, ['input']);
    }
  }

  for (const message of chatRequest.messages) {
    assert.ok(['system', 'user', 'assistant', 'tool'].includes(message.role), `role ${message.role}`);
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) {
        // The id is Codex's call_id as sent (Codex never sends an empty one; the bridge does not invent one).
        assert.equal(typeof call.id, 'string', 'a replayed call has an id');
        assert.equal(call.type, 'function');
        // The replay rule: every replayed `arguments` is valid JSON (vLLM and templates parse it).
        assert.doesNotThrow(() => JSON.parse(call.function.arguments) as unknown, `replayed arguments ${call.function.arguments}`);
      }
    }
    if (message.role === 'tool') assert.ok(typeof message.tool_call_id === 'string');
  }
}

/** Replayed custom calls keep their payload: the arguments parse to exactly `{"input": <original>}`. */
function assertReplayedPayloads(body: unknown, chatRequest: ChatRequest): void {
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { input?: unknown }).input)) return;
  const replayed = new Map<string, string[]>();
  for (const message of chatRequest.messages) {
    if (message.role !== 'assistant') continue;
    for (const call of message.tool_calls ?? []) replayed.set(call.id, [...(replayed.get(call.id) ?? []), call.function.arguments]);
  }
  for (const item of (body as { input: unknown[] }).input) {
    if (typeof item !== 'object' || item === null) continue;
    const candidate = item as { type?: unknown; call_id?: unknown; input?: unknown };
    if (candidate.type !== 'custom_tool_call' || typeof candidate.call_id !== 'string' || typeof candidate.input !== 'string') continue;
    const sent = replayed.get(candidate.call_id);
    if (sent === undefined) continue;
    assert.ok(
      sent.some((argumentsText) => {
        const parsed = JSON.parse(argumentsText) as unknown;
        return typeof parsed === 'object' && parsed !== null && (parsed as { input?: unknown }).input === candidate.input;
      }),
      `custom call ${candidate.call_id} replayed with its input`,
    );
  }
}

// ---------- arbitraries ----------

/** `arbitrary` about once in `every` draws, else null (fc.option's `freq` is the odds of nil, not of the value). */
function rarely<T>(arbitrary: fc.Arbitrary<T>, every: number): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: every - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary });
}

const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.constantFrom('', ' ', '\n', '\u0000', '\ud800', '{"input":"x"}', '*** Begin Patch\n*** End Patch', 'a__b', 'functions'),
);
const toolName = fc.oneof(
  fc.constantFrom('apply_patch', 'exec', 'wait', 'exec_command', 'shell', 'f', 'a__b', 'functions__exec', 'x'.repeat(80)),
  fc.string({ minLength: 1, maxLength: 10 }),
);
const namespaceName = fc.constantFrom('functions', 'multi_agent_v1', 'a', 'mcp__server', 'n'.repeat(70));
const jsonSchemaLike = fc.oneof(
  fc.constant({ type: 'object', properties: {} }),
  fc.record({ type: fc.constant('object'), properties: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }) }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }),
);
const format = fc.oneof(
  fc.constant(undefined),
  fc.constant({}),
  fc.constant({ type: 'text' }),
  fc.record({ type: fc.constant('grammar'), syntax: fc.constantFrom('lark', 'regex', 'ebnf', 'unknown'), definition: fc.oneof(text, fc.constantFrom('start: "a"+', 'start: WORD\n%import common.WORD', '[a-z]+', 'start: ( ')) }),
  fc.record({ type: fc.constantFrom('grammar', 'weird'), syntax: fc.option(text), definition: fc.option(text) }, { requiredKeys: [] }),
);
const functionTool = fc.record(
  { type: fc.constant('function'), name: toolName, description: fc.option(text), parameters: fc.option(jsonSchemaLike), strict: fc.option(fc.boolean()), defer_loading: rarely(fc.boolean(), 8) },
  { requiredKeys: ['type', 'name'] },
);
const customTool = fc.record({ type: fc.constant('custom'), name: toolName, description: fc.option(text), format }, { requiredKeys: ['type', 'name'] });
const hostedTool = fc.oneof(
  fc.record({ type: fc.constantFrom('web_search', 'tool_search', 'image_generation', 'local_shell', 'mcp', 'brand_new_kind') }),
  fc.record({ type: fc.constantFrom('web_search', 'file_search'), name: toolName }),
);
const namespaceTool = fc.record({
  type: fc.constant('namespace'),
  name: namespaceName,
  description: fc.option(text),
  tools: fc.array(fc.oneof(functionTool, customTool, hostedTool, fc.record({ type: fc.constantFrom('function', 'custom') })), { maxLength: 3 }),
});
const tool = fc.oneof({ weight: 4, arbitrary: functionTool }, { weight: 4, arbitrary: customTool }, { weight: 2, arbitrary: namespaceTool }, { weight: 1, arbitrary: hostedTool });

const callId = fc.constantFrom('call_1', 'call_2', 'call_3', '', 'call_1');
const contentPart = fc.oneof(
  fc.record({ type: fc.constantFrom('input_text', 'output_text', 'text'), text }),
  fc.record({ type: fc.constant('input_image'), image_url: fc.oneof(fc.constant(''), fc.constant('data:image/png;base64,AAAA'), fc.constant('https://example.com/a.png'), fc.record({ url: fc.option(fc.constant('https://e.x/i.png')) })), detail: fc.option(fc.constantFrom('auto', 'low', 'high')) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constantFrom('input_file', 'input_video', 'refusal', 'input_hologram'), filename: fc.option(text) }, { requiredKeys: ['type'] }),
);
const content = fc.oneof(text, fc.array(contentPart, { maxLength: 3 }));
const inputItem = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('message'), role: fc.constantFrom('user', 'assistant', 'system', 'developer'), content }) },
  { weight: 1, arbitrary: fc.record({ role: fc.constantFrom('user', 'assistant'), content }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('reasoning'), summary: fc.option(fc.array(fc.record({ type: fc.constant('summary_text'), text }), { maxLength: 2 })), content: fc.option(fc.array(fc.record({ type: fc.constant('reasoning_text'), text }), { maxLength: 2 })), encrypted_content: fc.option(text) }, { requiredKeys: ['type'] }) },
  {
    weight: 3,
    arbitrary: fc.record(
      { type: fc.constant('function_call'), call_id: callId, name: toolName, namespace: fc.option(namespaceName), arguments: fc.option(fc.oneof(text, fc.constantFrom('{}', '{"a":1}', '[1]', 'null', '"s"', '{"a":'))) },
      { requiredKeys: ['type', 'call_id', 'name'] },
    ),
  },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('custom_tool_call'), call_id: callId, name: toolName, namespace: fc.option(namespaceName), input: text }, { requiredKeys: ['type', 'call_id', 'name', 'input'] }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constantFrom('function_call_output', 'custom_tool_call_output'), call_id: callId, output: fc.oneof(text, fc.array(contentPart, { maxLength: 3 })) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('additional_tools'), tools: fc.array(tool, { maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('item_reference', 'web_search_call', 'compaction', 'local_shell_call', 'brand_new_item'), id: fc.option(text) }, { requiredKeys: ['type'] }) },
);
const toolChoice = fc.oneof(
  fc.constantFrom('auto', 'none', 'required', 'weird'),
  fc.record({ type: fc.constantFrom('function', 'custom'), name: toolName, namespace: fc.option(namespaceName) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('allowed_tools'), mode: fc.constantFrom('auto', 'required'), tools: fc.array(fc.record({ type: fc.constantFrom('function', 'custom', 'web_search'), name: toolName }, { requiredKeys: ['type'] }), { maxLength: 3 }) }),
  fc.record({ type: fc.constantFrom('web_search', 'tool_search', 'image_generation') }),
);
const codexShapedRequest = fc.record(
  {
    model: fc.oneof(fc.constantFrom('qwen3-coder', 'gpt-5.5'), fc.string({ minLength: 1, maxLength: 10 })),
    instructions: fc.option(text),
    input: fc.oneof({ weight: 1, arbitrary: text }, { weight: 6, arbitrary: fc.array(inputItem, { maxLength: 8 }) }),
    tools: fc.option(fc.array(tool, { maxLength: 6 })),
    tool_choice: fc.option(toolChoice),
    parallel_tool_calls: fc.option(fc.boolean()),
    reasoning: fc.option(fc.record({ effort: fc.option(fc.constantFrom(...VALID_EFFORTS, 'ultra')), summary: fc.option(fc.constantFrom('auto', 'detailed')) }, { requiredKeys: [] })),
    text: fc.option(fc.record({ verbosity: fc.option(fc.constantFrom('low', 'high')), format: fc.option(fc.oneof(fc.constant({ type: 'text' }), fc.constant({ type: 'json_object' }), fc.record({ type: fc.constant('json_schema'), name: fc.option(text), schema: fc.option(jsonSchemaLike), strict: fc.option(fc.boolean()) }, { requiredKeys: ['type'] }))) }, { requiredKeys: [] })),
    max_output_tokens: fc.option(fc.integer({ min: 1, max: 100_000 })),
    temperature: fc.option(fc.double({ min: 0, max: 2, noNaN: true })),
    top_p: fc.option(fc.double({ min: 0, max: 1, noNaN: true })),
    stream: fc.option(fc.boolean()),
    store: fc.option(fc.boolean()),
    include: fc.option(fc.array(fc.constantFrom('reasoning.encrypted_content'))),
    prompt_cache_key: fc.option(text),
    previous_response_id: rarely(fc.constant('resp_1'), 20),
    background: rarely(fc.boolean(), 10),
    client_metadata: fc.option(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 })),
    a_future_field: fc.option(fc.jsonValue({ maxDepth: 2 })),
  },
  { requiredKeys: ['model', 'input'] },
);
const options = fc.record({
  strategy: fc.constantFrom<BridgeOptions['strategy']>('function_bridge', 'function_bridge', 'passthrough'),
  dropCustomTools: fc.boolean(),
  reasoningEffort: fc.constantFrom<BridgeOptions['reasoningEffort']>('forward', 'clamp', 'drop'),
  replayReasoningField: fc.constantFrom<BridgeOptions['replayReasoningField']>('reasoning', 'reasoning_content', 'both'),
  replayReasoning: fc.boolean(),
  midConversationDeveloperRole: fc.constantFrom<BridgeOptions['midConversationDeveloperRole']>('system', 'user'),
  toolOutputParts: fc.constantFrom<BridgeOptions['toolOutputParts']>('join', 'list'),
  toolOutputImages: fc.constantFrom<BridgeOptions['toolOutputImages']>('inline_user_message', 'placeholder', 'reject'),
  grammarExamples: fc.boolean(),
  modelOverride: fc.option(fc.constantFrom('served-model'), { nil: null }),
});

/** A real capture with one value somewhere inside replaced by random JSON. */
const mutatedCapture = fc
  .record({ capture: fc.constantFrom(...CAPTURE_BODIES), pathSeeds: fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), replacement: fc.jsonValue({ maxDepth: 3 }) })
  .map(({ capture, pathSeeds, replacement }) => {
    const copy = structuredClone(capture) as Record<string, unknown>;
    let parent: unknown = copy;
    for (const [depth, seed] of pathSeeds.entries()) {
      if (typeof parent !== 'object' || parent === null) break;
      const keys = Object.keys(parent);
      if (keys.length === 0) break;
      const key = keys[seed % keys.length]!;
      const child = (parent as Record<string, unknown>)[key];
      if (depth === pathSeeds.length - 1 || typeof child !== 'object' || child === null) {
        (parent as Record<string, unknown>)[key] = replacement;
        break;
      }
      parent = child;
    }
    return copy;
  });

describe('fuzz: random Responses requests through lowering', () => {
  it('Codex-shaped requests with random kinds and values: a valid Chat request or a typed refusal', (context) => {
    let lowered = 0;
    fc.assert(
      fc.property(codexShapedRequest, options, (body, partialOptions) => {
        const resolved = resolveBridgeOptions(partialOptions);
        const outcome = lower(body, resolved);
        if (outcome.kind === 'refused') return;
        lowered += 1;
        assertLoweredInvariants(outcome.lowered, resolved);
        assertReplayedPayloads(body, outcome.lowered.chatRequest);
        const effort = body.reasoning?.effort;
        if (resolved.strategy === 'function_bridge' && (effort === undefined || effort === null || VALID_EFFORTS.includes(effort))) {
          assert.equal(validateChatRequestForVllm(outcome.lowered.chatRequest), null, 'vLLM accepts what the bridge sends');
        }
      }),
      PARAMETERS,
    );
    context.diagnostic(`${lowered} of ${RUNS} requests lowered, the rest refused with a typed error (seed ${SEED})`);
    assert.ok(lowered > RUNS / 4, `too few requests lowered (${lowered}): the generator mostly produces refusals`);
  });

  it('mutated captures: a valid Chat request or a typed refusal', () => {
    fc.assert(
      fc.property(mutatedCapture, (body) => {
        const resolved = resolveBridgeOptions();
        const outcome = lower(body, resolved);
        if (outcome.kind === 'lowered') {
          assertLoweredInvariants(outcome.lowered, resolved);
          assertReplayedPayloads(body, outcome.lowered.chatRequest);
        }
      }),
      PARAMETERS,
    );
  });

  it('arbitrary JSON bodies are refused with a typed error or lowered, never a crash', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.record({ model: fc.jsonValue({ maxDepth: 1 }), input: fc.jsonValue({ maxDepth: 4 }), tools: fc.jsonValue({ maxDepth: 4 }) }, { requiredKeys: [] })), (body) => {
        const resolved = resolveBridgeOptions();
        const outcome = lower(body, resolved);
        if (outcome.kind === 'lowered') assertLoweredInvariants(outcome.lowered, resolved);
      }),
      PARAMETERS,
    );
  });

  it("a session's next turn is a byte-stable extension of its last: the same head, tools and messages, then the new ones", () => {
    // An engine's prefix cache reuses what the previous request already sent: the lowering of a
    // history must not change when the history grows.
    const nextItem = fc.constantFrom<unknown>(
      { type: 'message', role: 'user', content: 'and then?' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'more' }] },
    );
    fc.assert(
      fc.property(codexShapedRequest, options, fc.array(nextItem, { minLength: 1, maxLength: 3 }), (body, partial, added) => {
        const resolved = resolveBridgeOptions(partial);
        const first = outcomeOf(() => convertResponsesRequestToChatRequest(structuredClone(body), resolved, createWarningLedger()));
        if (first.kind === 'refused' || !Array.isArray((body as { input?: unknown }).input)) return;
        const longer = { ...(body as Record<string, unknown>), input: [...((body as { input: unknown[] }).input), ...added] };
        const second = outcomeOf(() => convertResponsesRequestToChatRequest(structuredClone(longer), resolved, createWarningLedger()));
        assert.equal(second.kind, 'lowered');
        if (second.kind !== 'lowered') return;
        const last = encodeChatRequest(first.lowered.chatRequest, { byParts: true, largeStrings: null }).readParts?.();
        const next = encodeChatRequest(second.lowered.chatRequest, { byParts: true, largeStrings: null }).readParts?.();
        assert.ok(last && next);
        assert.equal(next.head, last.head);
        assert.equal(next.tools, last.tools);
        assert.deepStrictEqual(next.messages.slice(0, last.messages.length), last.messages);
      }),
      PARAMETERS,
    );
  });
});

