import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeBackendCheck } from '../../../src/extension/describe-backend-check.ts';

const backendUrl = 'http://127.0.0.1:8000/v1';

describe('describeBackendCheck', () => {
  it('names the models a reachable backend serves, at most five, with the rest counted', () => {
    assert.deepEqual(describeBackendCheck({ reachable: true, backendUrl, models: ['qwen3-coder'] }, false), {
      message: 'Freeform Bridge: http://127.0.0.1:8000/v1 is reachable and serves 1 model: qwen3-coder.',
      suggestApiKey: false,
    });
    const models = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    assert.equal(
      describeBackendCheck({ reachable: true, backendUrl, models }, false).message,
      'Freeform Bridge: http://127.0.0.1:8000/v1 is reachable and serves 7 models: a, b, c, d, e and 2 more (see the log).',
    );
  });

  it('says so when a reachable backend lists no models', () => {
    assert.match(describeBackendCheck({ reachable: true, backendUrl, models: [] }, false).message, /answers but lists no models/);
  });

  it('asks whether the backend runs and the URL is right when the connection fails', () => {
    assert.deepEqual(describeBackendCheck({ reachable: false, backendUrl, reason: 'ECONNREFUSED', status: null }, false), {
      message:
        'Freeform Bridge: GET http://127.0.0.1:8000/v1/models failed: ECONNREFUSED. Is the backend running, and is http://127.0.0.1:8000/v1 its OpenAI-compatible base URL (ending in /v1)?',
      suggestApiKey: false,
    });
  });

  it('points at the API key on 401 and 403, and at the /v1 suffix on 404', () => {
    const missing = describeBackendCheck({ reachable: false, backendUrl, reason: 'HTTP 401', status: 401 }, false);
    assert.equal(missing.suggestApiKey, true);
    assert.match(missing.message, /failed: HTTP 401\. The backend wants an API key: set one\.$/);
    const refused = describeBackendCheck({ reachable: false, backendUrl, reason: 'HTTP 403', status: 403 }, true);
    assert.match(refused.message, /The stored API key was refused: set the right one\.$/);
    const notFound = describeBackendCheck({ reachable: false, backendUrl: 'http://127.0.0.1:8000/', reason: 'HTTP 404', status: 404 }, false);
    assert.equal(notFound.message, 'Freeform Bridge: GET http://127.0.0.1:8000/models failed: HTTP 404. Does the URL end in /v1 (the OpenAI-compatible base URL)?');
    assert.equal(notFound.suggestApiKey, false);
  });
});
