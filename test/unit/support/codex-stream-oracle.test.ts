import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { assertCodexAcceptsStream, checkCodexStream, type CodexStreamCheckOptions } from '../../support/codex-stream-oracle.ts';
import { isPlainObject, parseJson } from '../../../src/core/parse-json.ts';
import { fixturePath } from '../../support/fixtures.ts';

const sseFolder = fixturePath('sse');

interface ReferenceScript {
  name: string;
  verdict: string;
  responses: Array<Array<Record<string, unknown>>>;
}

function readScripts(): ReferenceScript[] {
  return readdirSync(sseFolder)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const parsed = parseJson(readFileSync(path.join(sseFolder, file), 'utf8'));
      assert.ok(parsed.success && isPlainObject(parsed.value), file);
      const verdict = parsed.value['status_with_codex_0.171.0'];
      const responses = parsed.value.responses;
      assert.ok(typeof verdict === 'string' && Array.isArray(responses), file);
      // `__raw` entries are SSE comment lines the mock wrote between events, not events.
      const events = responses.map((response: unknown) =>
        (response as unknown[]).filter((entry): entry is Record<string, unknown> => isPlainObject(entry) && !('__raw' in entry)),
      );
      return { name: file.replace(/\.json$/, ''), verdict, responses: events };
    });
}

function withSequenceNumbers(events: ReadonlyArray<Record<string, unknown>>): Array<Record<string, unknown>> {
  return events.map((event, index) => ({ ...event, sequence_number: index }));
}

const scripts = readScripts();

describe('oracle against the reference pack (codex mode)', () => {
  it('finds the reference scripts', () => {
    assert.ok(scripts.filter((script) => script.name.startsWith('ok_')).length >= 10, sseFolder);
    assert.ok(scripts.filter((script) => script.name.startsWith('neg_')).length >= 10, sseFolder);
  });

  for (const script of scripts.filter((entry) => entry.name.startsWith('ok_'))) {
    it(`${script.name} (${script.verdict}) passes`, () => {
      assert.equal(script.verdict, 'accepted');
      for (const response of script.responses) assertCodexAcceptsStream(response, { protocol: 'codex' });
    });
  }

  /** What the oracle must say about each stream Codex rejected, dropped, lost or re-sampled. */
  const expectedViolation: Record<string, RegExp> = {
    neg_completed_missing_id: /response\.id missing/,
    neg_custom_tool_call_done_missing_input: /custom_tool_call input is not a string/,
    neg_end_turn_false: /end_turn false/,
    neg_error_event_ignored: /bare error event/,
    neg_function_call_item_missing_call_id: /function_call without call_id/,
    neg_response_failed_context_length: /ends with response\.failed, expected response\.completed/,
    neg_response_failed_server_error: /ends with response\.failed, expected response\.completed/,
    neg_response_incomplete: /ends with response\.incomplete, expected response\.completed/,
    neg_stream_without_completed: /without response\.completed/,
    neg_text_delta_only: /no open message item/,
    // Codex gave up on this one by its idle timer, which an event list cannot show; the list itself
    // still lacks a terminal event, and that is what the oracle reports.
    neg_idle_timeout_created_only: /without response\.completed/,
  };

  for (const script of scripts.filter((entry) => entry.name.startsWith('neg_'))) {
    if (script.name === 'neg_keepalive_sse_comments') {
      // Skipped: Codex timed out because SSE comments do not reset its idle timer. The events themselves are a valid stream; only their timing failed.
      it(`${script.name} is about timing: its events alone pass`, () => {
        assert.deepEqual(checkCodexStream(script.responses[0] ?? [], { protocol: 'codex' }), []);
      });
      continue;
    }
    it(`${script.name} (${script.verdict}) is flagged`, () => {
      assert.match(script.verdict, /^(rejected|silently-dropped|accepted-but-lost|accepted-but-resamples)$/);
      const pattern = expectedViolation[script.name];
      assert.ok(pattern, `no expectation for ${script.name}`);
      const violations = script.responses.flatMap((response) => checkCodexStream(response, { protocol: 'codex' }));
      assert.ok(
        violations.some((violation) => pattern.test(violation)),
        `expected ${String(pattern)} in ${JSON.stringify(violations)}`,
      );
    });
  }
});

describe('oracle against the reference pack (strict mode)', () => {
  const fullScripts = scripts.filter((script) => /^ok_.*_full$/.test(script.name));

  it('has the full OpenAI-style streams', () => {
    assert.equal(fullScripts.length, 4);
  });

  for (const script of fullScripts) {
    it(`${script.name} passes once sequence numbers are added`, () => {
      for (const response of script.responses) assertCodexAcceptsStream(withSequenceNumbers(response));
    });
    it(`${script.name} without sequence numbers is flagged`, () => {
      const violations = checkCodexStream(script.responses[0] ?? []);
      assert.ok(violations.length > 0 && violations.every((violation) => /sequence_number/.test(violation)), JSON.stringify(violations));
    });
  }

  it('flags the minimal streams, which skip output_item.added', () => {
    const minimal = scripts.find((script) => script.name === 'ok_text_minimal');
    assert.ok(minimal);
    const violations = checkCodexStream(withSequenceNumbers(minimal.responses[0] ?? []));
    assert.ok(violations.some((violation) => /without an open output_item\.added|output_index missing/.test(violation)), JSON.stringify(violations));
  });
});

// ---------- synthetic streams ----------

type Event = Record<string, unknown>;

const usage = {
  input_tokens: 120,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 30,
  output_tokens_details: { reasoning_tokens: 5 },
  total_tokens: 150,
};

const reasoningItem = { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'Think.' }] };
const messageItem = { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello!', annotations: [] }] };
const customItem = {
  type: 'custom_tool_call',
  id: 'ctc_1',
  call_id: 'call_a',
  namespace: 'functions',
  name: 'exec',
  input: 'text("hi");\n',
  status: 'completed',
};
const functionItem = { type: 'function_call', id: 'fc_1', call_id: 'call_b', name: 'exec_command', arguments: '{"cmd":"ls"}', status: 'completed' };

function responseSnapshot(status: string, output: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'resp_1', object: 'response', created_at: 1790000000, model: 'qwen3-coder', status, output, ...extra };
}

/** A complete, valid stream with one item of each kind, as the translator should emit it. */
function buildStream(): Event[] {
  const events: Event[] = [
    { type: 'response.created', response: responseSnapshot('in_progress', []) },
    { type: 'response.in_progress', response: responseSnapshot('in_progress', []) },
    { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [], content: [] } },
    { type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, content_index: 0, delta: 'Thi' },
    { type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, content_index: 0, delta: 'nk.' },
    { type: 'response.reasoning_text.done', item_id: 'rs_1', output_index: 0, content_index: 0, text: 'Think.' },
    { type: 'response.output_item.done', output_index: 0, item: reasoningItem },
    { type: 'response.output_item.added', output_index: 1, item: { type: 'message', id: 'msg_1', role: 'assistant', status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', item_id: 'msg_1', output_index: 1, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
    { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Hello' },
    { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: '!' },
    { type: 'response.output_text.done', item_id: 'msg_1', output_index: 1, content_index: 0, text: 'Hello!' },
    { type: 'response.content_part.done', item_id: 'msg_1', output_index: 1, content_index: 0, part: { type: 'output_text', text: 'Hello!', annotations: [] } },
    { type: 'response.output_item.done', output_index: 1, item: messageItem },
    { type: 'response.output_item.added', output_index: 2, item: { ...customItem, input: '', status: 'in_progress' } },
    { type: 'response.output_item.added', output_index: 3, item: { ...functionItem, arguments: '', status: 'in_progress' } },
    { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', call_id: 'call_a', output_index: 2, delta: 'text("hi");' },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 3, delta: '{"cmd":' },
    { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', call_id: 'call_a', output_index: 2, delta: '\n' },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 3, delta: '"ls"}' },
    { type: 'response.custom_tool_call_input.done', item_id: 'ctc_1', call_id: 'call_a', output_index: 2, input: 'text("hi");\n' },
    { type: 'response.output_item.done', output_index: 2, item: customItem },
    { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 3, arguments: '{"cmd":"ls"}' },
    { type: 'response.output_item.done', output_index: 3, item: functionItem },
    { type: 'response.completed', response: responseSnapshot('completed', [reasoningItem, messageItem, customItem, functionItem], { usage }) },
  ];
  return withSequenceNumbers(events);
}

function indexOfType(events: readonly Event[], type: string, nth = 0): number {
  const positions = events.flatMap((event, index) => (event.type === type ? [index] : []));
  const position = positions[nth];
  assert.ok(position !== undefined, `no ${type} #${nth}`);
  return position;
}

function terminalResponse(events: Event[]): Record<string, unknown> {
  const response = events.at(-1)?.response;
  assert.ok(isPlainObject(response));
  return response;
}

function assertFlags(events: readonly Event[], pattern: RegExp, options: CodexStreamCheckOptions = {}): void {
  const violations = checkCodexStream(events, options);
  assert.ok(
    violations.some((violation) => pattern.test(violation)),
    `expected ${String(pattern)} in ${JSON.stringify(violations, null, 1)}`,
  );
}

const options: CodexStreamCheckOptions = {
  expectedKinds: { exec: 'custom_tool_call', exec_command: 'function_call' },
  namespaces: { exec: 'functions' },
};

describe('oracle on synthetic streams (strict mode)', () => {
  it('accepts a complete stream with reasoning, text, a custom call and a function call', () => {
    assertCodexAcceptsStream(buildStream(), options);
    assert.deepEqual(checkCodexStream(buildStream(), { ...options, protocol: 'codex' }), []);
  });

  it('throws with every violation listed', () => {
    const events = buildStream().slice(0, -1);
    assert.throws(() => assertCodexAcceptsStream(events), /stream ends without response\.completed/);
  });

  it('checks sequence numbers', () => {
    const repeated = buildStream();
    repeated[5] = { ...repeated[5], sequence_number: 4 };
    assertFlags(repeated, /sequence_number 4 does not increase/);
    const missing = buildStream();
    delete missing[3]?.sequence_number;
    assertFlags(missing, /sequence_number missing/);
    const fractional = buildStream();
    fractional[3] = { ...fractional[3], sequence_number: 3.5 };
    assertFlags(fractional, /not a non-negative integer/);
    // The codex layer does not read sequence numbers.
    assert.deepEqual(checkCodexStream(missing, { protocol: 'codex' }), []);
  });

  it('requires exactly one terminal event, last', () => {
    const events = buildStream();
    assertFlags([...events, { ...events.at(-1), sequence_number: 99 }], /event after the terminal event/);
    assertFlags(buildStream().slice(0, -1), /without response\.completed/, { protocol: 'codex' });
  });

  it('checks the terminal response: id, same id as created, status, object', () => {
    const noId = buildStream();
    delete terminalResponse(noId).id;
    assertFlags(noId, /response\.id missing/, { protocol: 'codex' });
    const otherId = buildStream();
    terminalResponse(otherId).id = 'resp_2';
    assertFlags(otherId, /differs from response\.created's resp_1/);
    const wrongStatus = buildStream();
    terminalResponse(wrongStatus).status = 'in_progress';
    assertFlags(wrongStatus, /response\.status "in_progress", expected "completed"/);
  });

  it('flags end_turn false', () => {
    const events = buildStream();
    terminalResponse(events).end_turn = false;
    assertFlags(events, /end_turn false/, { protocol: 'codex' });
  });

  it('flags a bare error event', () => {
    const events = buildStream();
    events.splice(2, 0, { type: 'error', sequence_number: 1.5, message: 'boom' });
    assertFlags(events, /bare error event/, { protocol: 'codex' });
  });

  it('checks usage counts and detail objects', () => {
    const nullCached = buildStream();
    terminalResponse(nullCached).usage = { ...usage, input_tokens_details: { cached_tokens: null } };
    assertFlags(nullCached, /cached_tokens is not a non-negative integer/, { protocol: 'codex' });
    const fractional = buildStream();
    terminalResponse(fractional).usage = { ...usage, output_tokens: 1.5 };
    assertFlags(fractional, /usage\.output_tokens/, { protocol: 'codex' });
    const nullDetails = buildStream();
    terminalResponse(nullDetails).usage = { ...usage, output_tokens_details: null };
    assertFlags(nullDetails, /output_tokens_details is null/);
    const minimal = buildStream();
    terminalResponse(minimal).usage = { input_tokens: 1, output_tokens: 2, total_tokens: 3 };
    assert.deepEqual(checkCodexStream(minimal, options), []);
  });

  it('requires complete items in output_item.done', () => {
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ ...functionItem, call_id: undefined }, 3, /function_call without call_id/],
      [{ ...functionItem, arguments: { cmd: 'ls' } }, 3, /arguments is not a string/],
      [{ ...customItem, input: undefined }, 2, /custom_tool_call input is not a string/],
      [{ ...customItem, name: '' }, 2, /custom_tool_call without name/],
      [{ ...messageItem, content: 'Hello!' }, 1, /message content is not an array/],
      [{ ...messageItem, role: undefined }, 1, /message without role/],
    ];
    for (const [item, doneNumber, pattern] of cases) {
      const events = buildStream();
      const position = indexOfType(events, 'response.output_item.done', doneNumber);
      // Drop the fields set to undefined: a missing field is what Codex sees.
      events[position] = { ...events[position], item: Object.fromEntries(Object.entries(item).filter(([, value]) => value !== undefined)) };
      assertFlags(events, pattern, { protocol: 'codex' });
    }
  });

  it('requires output_item.added in index order before deltas and done', () => {
    const skipped = buildStream();
    const added = indexOfType(skipped, 'response.output_item.added', 0);
    skipped[added] = { ...skipped[added], output_index: 1 };
    assertFlags(skipped, /output_index 1, expected 0/);

    const doneWithoutAdded = buildStream().filter((event) => !(event.type === 'response.output_item.added' && event.output_index === 3));
    assertFlags(doneWithoutAdded, /no open function_call item/);
    assertFlags(doneWithoutAdded, /output_item\.done without an open output_item\.added at output_index 3/);
  });

  it('flags output_text.delta outside an open message item, in both modes', () => {
    const afterDone = buildStream();
    const done = indexOfType(afterDone, 'response.output_item.done', 1);
    afterDone.splice(done + 1, 0, { type: 'response.output_text.delta', sequence_number: 13.5, item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'late' });
    assertFlags(afterDone, /no open message item/);
    assertFlags(afterDone, /no open message item/, { protocol: 'codex' });
  });

  it('requires deltas to add up to the done values', () => {
    const functionMismatch = buildStream();
    const functionDelta = indexOfType(functionMismatch, 'response.function_call_arguments.delta', 1);
    functionMismatch[functionDelta] = { ...functionMismatch[functionDelta], delta: '"pwd"}' };
    assertFlags(functionMismatch, /arguments differ from the concatenated deltas/);

    const textMismatch = buildStream();
    const textDelta = indexOfType(textMismatch, 'response.output_text.delta', 1);
    textMismatch[textDelta] = { ...textMismatch[textDelta], delta: '?' };
    assertFlags(textMismatch, /text differs from the concatenated output_text deltas/);
  });

  it('requires custom input deltas to be a prefix of the done input unless a mismatch is expected', () => {
    const prefixOnly = buildStream();
    const secondDelta = indexOfType(prefixOnly, 'response.custom_tool_call_input.delta', 1);
    prefixOnly.splice(secondDelta, 1);
    assert.deepEqual(checkCodexStream(prefixOnly, options), []);

    const mismatch = buildStream();
    const firstDelta = indexOfType(mismatch, 'response.custom_tool_call_input.delta', 0);
    mismatch[firstDelta] = { ...mismatch[firstDelta], delta: '{"input": ' };
    assertFlags(mismatch, /deltas are not a prefix of the done input/);
    assert.deepEqual(checkCodexStream(mismatch, { ...options, inputDeltaMismatchCallIds: ['call_a'] }), []);
  });

  it('requires response.completed.output to list the done items', () => {
    const missingItem = buildStream();
    terminalResponse(missingItem).output = [reasoningItem, messageItem, customItem];
    assertFlags(missingItem, /does not list the same items/);
    const changedItem = buildStream();
    terminalResponse(changedItem).output = [reasoningItem, messageItem, { ...customItem, input: 'other' }, functionItem];
    assertFlags(changedItem, /does not list the same items/);
  });

  it('flags a call still open at response.completed but accepts it at response.failed', () => {
    const open = buildStream().filter((event) => !(event.type === 'response.output_item.done' && event.output_index === 3));
    terminalResponse(open).output = [reasoningItem, messageItem, customItem];
    assertFlags(open, /function_call exec_command is still open/, { protocol: 'codex' });

    const failed = open.slice(0, -1);
    failed.push({
      type: 'response.failed',
      sequence_number: 99,
      response: responseSnapshot('failed', [], { error: { code: 'server_error', message: 'backend stream failed (vLLM): Internal server error' } }),
    });
    assert.deepEqual(checkCodexStream(failed, { ...options, expectedTerminal: 'response.failed' }), []);
    assertFlags(failed, /ends with response\.failed, expected response\.completed/);
  });

  it('checks failure and incomplete details in strict mode', () => {
    const base = buildStream().slice(0, 2);
    const failedWithoutError = [...base, { type: 'response.failed', sequence_number: 2, response: responseSnapshot('failed', []) }];
    assertFlags(failedWithoutError, /response\.error needs a string code and message/, { expectedTerminal: 'response.failed' });
    const incomplete = [
      ...base,
      { type: 'response.incomplete', sequence_number: 2, response: responseSnapshot('incomplete', [], { incomplete_details: { reason: 'max_output_tokens' } }) },
    ];
    assert.deepEqual(checkCodexStream(incomplete, { expectedTerminal: 'any' }), []);
    assert.deepEqual(checkCodexStream(incomplete, { expectedTerminal: 'response.incomplete' }), []);
    const incompleteWithoutReason = [...base, { type: 'response.incomplete', sequence_number: 2, response: responseSnapshot('incomplete', []) }];
    assertFlags(incompleteWithoutReason, /incomplete_details\.reason missing/, { expectedTerminal: 'any' });
  });

  it('checks kinds and namespaces per tool', () => {
    const asFunction = buildStream();
    const customDone = indexOfType(asFunction, 'response.output_item.done', 2);
    asFunction[customDone] = { ...asFunction[customDone], item: { type: 'function_call', id: 'ctc_1', call_id: 'call_a', namespace: 'functions', name: 'exec', arguments: '{}' } };
    assertFlags(asFunction, /exec delivered as function_call, Codex needs custom_tool_call/, { ...options, protocol: 'codex' });

    const withoutNamespace = buildStream();
    const { namespace: _namespace, ...bare } = customItem;
    withoutNamespace[customDone] = { ...withoutNamespace[customDone], item: bare };
    assertFlags(withoutNamespace, /exec carries namespace undefined, expected "functions"/, { ...options, protocol: 'codex' });
  });

  it('flags unknown event types only in strict mode', () => {
    const events = buildStream();
    events.splice(2, 0, { type: 'response.heartbeat', sequence_number: 1.5 });
    assertFlags(events, /unknown event type/);
    assert.deepEqual(checkCodexStream(events, { protocol: 'codex' }), []);
  });
});
