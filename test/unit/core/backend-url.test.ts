import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeInvalidBackendUrl, normaliseBackendUrl, suggestVersionedBaseUrl } from '../../../src/core/backend-url.ts';

describe('suggestVersionedBaseUrl', () => {
  it('adds /v1 to a server root, with or without its slash', () => {
    assert.equal(suggestVersionedBaseUrl('http://127.0.0.1:8000'), 'http://127.0.0.1:8000/v1');
    assert.equal(suggestVersionedBaseUrl('http://127.0.0.1:8000/'), 'http://127.0.0.1:8000/v1');
  });

  it("replaces Ollama's native /api instead of appending to it", () => {
    assert.equal(suggestVersionedBaseUrl('http://127.0.0.1:11434/api'), 'http://127.0.0.1:11434/v1');
    assert.equal(suggestVersionedBaseUrl('http://127.0.0.1:11434/api/'), 'http://127.0.0.1:11434/v1');
  });

  it('cuts a pasted endpoint back to its version segment', () => {
    assert.equal(suggestVersionedBaseUrl('http://127.0.0.1:8000/v1/chat/completions'), 'http://127.0.0.1:8000/v1');
    assert.equal(suggestVersionedBaseUrl('https://gateway.example/openai/v1/models'), 'https://gateway.example/openai/v1');
  });

  it('offers the root first and the mount point second for any other path', () => {
    assert.equal(suggestVersionedBaseUrl('http://proxy.lan/llm'), 'http://proxy.lan/v1 (or http://proxy.lan/llm/v1 if the server is mounted under /llm)');
  });

  it('still answers for text that is not a URL', () => {
    assert.equal(suggestVersionedBaseUrl('not a url/'), 'not a url/v1');
  });
});

describe('backend URLs: hostile input', () => {
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
