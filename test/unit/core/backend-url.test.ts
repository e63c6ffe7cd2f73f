import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { suggestVersionedBaseUrl } from '../../../src/core/backend-url.ts';

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
