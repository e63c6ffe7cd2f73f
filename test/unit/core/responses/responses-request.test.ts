import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidRequestError } from '../../../../src/core/errors.ts';
import { formatIssuePath, MAX_INPUT_ITEMS, parseResponsesRequest } from '../../../../src/core/responses/responses-request.ts';

function rejection(body: unknown): { message: string; param: string | null } {
  try {
    parseResponsesRequest(body);
  } catch (error) {
    if (InvalidRequestError.is(error)) return { message: error.message, param: error.param };
    throw error;
  }
  throw new Error('expected the request to be rejected');
}

describe('parseResponsesRequest: required fields', () => {
  it('names a missing model', () => {
    assert.deepStrictEqual(rejection({ input: 'hi' }), { message: 'invalid Responses request: `model` is missing', param: 'model' });
  });

  it('names a missing input', () => {
    assert.deepStrictEqual(rejection({ model: 'm' }), { message: 'invalid Responses request: `input` is missing', param: 'input' });
  });

  it('says what input may be when it has the wrong type', () => {
    assert.deepStrictEqual(rejection({ model: 'm', input: 5 }), {
      message: 'invalid Responses request: `input`: Invalid input: expected string or array',
      param: 'input',
    });
  });

  it('points into the offending item of an array input', () => {
    const body = {
      model: 'm',
      input: [
        { role: 'user', content: 'a' },
        { type: 'function_call', call_id: 'c', name: 'x', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'ok' },
        { type: 'function_call', name: 'x', arguments: '{}' },
      ],
    };
    assert.deepStrictEqual(rejection(body), { message: 'invalid Responses request: `input[3].call_id` is missing', param: 'input[3].call_id' });
  });

  it('points into nested content parts and tools', () => {
    assert.equal(rejection({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_text' }] }] }).param, 'input[0].content[0].text');
    assert.equal(rejection({ model: 'm', input: 'x', tools: [{ type: 'function' }] }).param, 'tools[0].name');
    assert.equal(rejection({ model: 'm', input: [{ role: 'wizard', content: 'x' }] }).param, 'input[0].role');
  });

  it('rejects an item with neither type nor role', () => {
    assert.deepStrictEqual(rejection({ model: 'm', input: [{ content: 'x' }] }), {
      message: 'invalid Responses request: `input[0].type` is missing',
      param: 'input[0].type',
    });
  });

  it('rejects a body that is not an object', () => {
    assert.deepStrictEqual(rejection([1]), { message: 'the request body must be a JSON object', param: null });
  });
});

describe('parseResponsesRequest: what it keeps', () => {
  it('keeps unknown top-level fields and unknown item, part and tool kinds', () => {
    const request = parseResponsesRequest({
      model: 'm',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_audio', data: 'x' }], future: 1 },
        { type: 'compaction', encrypted_content: 'abc' },
      ],
      tools: [{ type: 'web_search', external_web_access: false }],
      store: false,
      include: ['reasoning.encrypted_content'],
      client_metadata: { session_id: 's' },
      service_tier: 'auto',
      a_field_from_codex_0_200: { nested: true },
    });
    assert.deepStrictEqual(request, {
      model: 'm',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'unknown', originalType: 'input_audio', value: { type: 'input_audio', data: 'x' } }], future: 1 },
        { type: 'unknown', originalType: 'compaction', value: { type: 'compaction', encrypted_content: 'abc' } },
      ],
      tools: [{ type: 'hosted', originalType: 'web_search', value: { type: 'web_search', external_web_access: false } }],
      store: false,
      include: ['reasoning.encrypted_content'],
      client_metadata: { session_id: 's' },
      service_tier: 'auto',
      a_field_from_codex_0_200: { nested: true },
    });
  });

  it('treats an item with a role but no type as a message', () => {
    const request = parseResponsesRequest({ model: 'm', input: [{ role: 'developer', content: 'x' }] });
    assert.deepStrictEqual(request.input, [{ role: 'developer', content: 'x', type: 'message' }]);
  });

  it('formats issue paths the way OpenAI names params', () => {
    assert.equal(formatIssuePath(['input', 3, 'content', 0, 'image_url']), 'input[3].content[0].image_url');
    assert.equal(formatIssuePath([]), '');
  });
});

/** Holes found by a review with hostile inputs: each failed before it was closed. */
describe('parseResponsesRequest: hostile input', () => {
  it('a request with 100,000 invalid input items gets a short message naming the first one, not a stack overflow', () => {
    const input = Array.from({ length: MAX_INPUT_ITEMS }, () => ({ type: 'message', role: 'user', content: 42 }));
    assert.deepStrictEqual(rejection({ model: 'm', input }), {
      message: 'invalid Responses request: `input[0].content`: Invalid input: expected string or array',
      param: 'input[0].content',
    });
  });

  it('refuses more input items than MAX_INPUT_ITEMS before validating any of them', () => {
    let itemsRead = 0;
    const item = {
      get type(): string {
        itemsRead++;
        return 'message';
      },
      role: 'user',
      content: 'x',
    };
    const input = new Array<unknown>(MAX_INPUT_ITEMS + 1).fill(item);
    assert.deepStrictEqual(rejection({ model: 'm', input }), {
      message: `\`input\` holds ${MAX_INPUT_ITEMS + 1} items; freeform-bridge accepts at most ${MAX_INPUT_ITEMS} (far more than a long Codex session sends)`,
      param: 'input',
    });
    assert.equal(itemsRead, 0);
    const accepted = parseResponsesRequest({ model: 'm', input: input.slice(1) }).input;
    assert.ok(Array.isArray(accepted));
    assert.equal(accepted.length, MAX_INPUT_ITEMS);
  });

  it('stops validating at the first bad item: no item after it is read', () => {
    const itemsRead = new Set<number>();
    const input = Array.from({ length: 10_000 }, (_, index) => ({
      get type(): string {
        itemsRead.add(index);
        return 'function_call';
      },
      call_id: index === 0 ? 'call_0' : 42,
      name: 'f',
    }));
    assert.deepStrictEqual(rejection({ model: 'm', input }), {
      message: 'invalid Responses request: `input[1].call_id`: Invalid input: expected string, received number',
      param: 'input[1].call_id',
    });
    assert.deepStrictEqual([...itemsRead].sort((left, right) => left - right), [0, 1]);
  });

  it('a tool schema number too large for a double (1e400) is refused, naming where it is', () => {
    const body = JSON.parse('{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"n":{"type":"number","maximum":1e400}}}}]}') as unknown;
    assert.throws(
      () => parseResponsesRequest(body),
      (error: unknown) => InvalidRequestError.is(error) && /`tools\[0\]\.parameters\.properties\.n\.maximum` is a number JSON cannot carry \(Infinity/.test(error.message),
    );
  });
});
