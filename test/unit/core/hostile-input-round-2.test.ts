import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeInvalidBackendUrl, normaliseBackendUrl } from '../../../src/core/backend-url.ts';
import { InvalidRequestError } from '../../../src/core/errors.ts';
import { redactSecrets } from '../../../src/core/redact-secrets.ts';
import { parseResponsesRequest } from '../../../src/core/responses/responses-request.ts';

/** Small holes found by a review with hostile inputs: each one here failed before it was closed. */

describe('hostile inputs, round 2', () => {
  it('a request with 200,000 invalid input items gets a short validation message, not a stack overflow', () => {
    const input = Array.from({ length: 200_000 }, () => ({ type: 'message', role: 'user', content: 42 }));
    assert.throws(
      () => parseResponsesRequest({ model: 'm', input }),
      (error: unknown) => InvalidRequestError.is(error) && /^invalid Responses request: .*and \d+ more$/.test(error.message) && error.message.length < 1000,
    );
  });

  it('a key containing / is redacted in its PHP-style JSON spelling (\\/) too', () => {
    const key = 'sk-abc/def/ghi';
    const echoed = '{"error":"bad key sk-abc\\/def\\/ghi"}';
    assert.equal(redactSecrets(echoed, [key]), '{"error":"bad key [redacted]"}');
  });

  it('credentials in the backend URL are refused without being repeated; a harmless query string is kept', () => {
    for (const url of ['http://user:hunter2@127.0.0.1:8000/v1', 'http://127.0.0.1:8000/v1?api-key=hunter2', 'http://127.0.0.1:8000/v1?token=hunter2&x=1']) {
      const problem = describeInvalidBackendUrl(url);
      assert.ok(problem !== null, url);
      assert.ok(!problem.includes('hunter2'), problem);
      assert.match(problem, /backend API key/);
      assert.throws(() => normaliseBackendUrl(url), (error: unknown) => error instanceof Error && !error.message.includes('hunter2'));
    }
    assert.equal(describeInvalidBackendUrl('https://proxy.example/openai/v1?api-version=2024-10-01'), null);
    assert.equal(normaliseBackendUrl('https://proxy.example/openai/v1/?api-version=2024-10-01'), 'https://proxy.example/openai/v1?api-version=2024-10-01');
  });
});

describe('numbers JSON cannot carry', () => {
  it('a tool schema number too large for a double (1e400) is refused, naming where it is', () => {
    const body = JSON.parse('{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"n":{"type":"number","maximum":1e400}}}}]}') as unknown;
    assert.throws(
      () => parseResponsesRequest(body),
      (error: unknown) => InvalidRequestError.is(error) && /`tools\[0\]\.parameters\.properties\.n\.maximum` is a number JSON cannot carry \(Infinity/.test(error.message),
    );
  });
});
