import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChatRequest } from '../../../src/core/chat/chat-completions-api.ts';
import { splitChatRequest } from '../../../src/core/outbound/outbound-encoding.ts';
import { decodeFragment, encodeRequestParts, type EncodedRequestParts } from '../../../src/server/start-event-encoding.ts';
import { measureStoredRequest, rebuildStoredRequest, RequestPool } from '../../../src/extension/traffic-request-pool.ts';
import { APPLY_PATCH_TOOL, createLoweredRequest } from '../../support/traffic-events.ts';

/** A lowered request encoded for the host as the bridge's worker encodes a start event's. */
function encodeLowered(request: ChatRequest, redactText: (text: string) => string): EncodedRequestParts {
  return encodeRequestParts(splitChatRequest(request), redactText);
}

describe('RequestPool (requests as the worker thread encodes them)', () => {
  const redact = (text: string): string => text.replaceAll('sk-secret', '[redacted]');

  it('keeps each part once across turns, looked up by hash, and frees it with the last request holding it', () => {
    const pool = new RequestPool((text) => text);
    const history = { role: 'user' as const, content: 'x'.repeat(1000) };
    const one = pool.storeEncoded(encodeLowered(createLoweredRequest([history]), redact));
    const afterOne = pool.bytes;
    const next = { role: 'user' as const, content: 'second' };
    const two = pool.storeEncoded(encodeLowered(createLoweredRequest([history, next]), redact));
    assert.equal(one.messages[0], two.messages[0], 'the same entry, not a copy');
    assert.equal(one.tools, two.tools, 'one tool list for both turns');
    assert.equal(one.messages[0]?.references, 2);
    assert.equal(pool.bytes, afterOne + Buffer.byteLength(JSON.stringify(next)), 'only the new message, kept as its UTF-8 bytes');
    pool.releaseRequest(one);
    assert.equal(two.messages[0]?.references, 1);
    pool.releaseRequest(two);
    assert.equal(pool.bytes, 0);
  });

  it('counts the block of a request\'s new parts whole until its last part is freed, and two equal parts in one request once', () => {
    const pool = new RequestPool((text) => text);
    const first = { role: 'user' as const, content: 'a'.repeat(500) };
    const second = { role: 'assistant' as const, content: 'b'.repeat(700) };
    const one = pool.storeEncoded(encodeLowered(createLoweredRequest([first, second, first]), (text) => text));
    assert.equal(one.messages[0], one.messages[2]);
    assert.equal(one.messages[0]?.references, 2);
    const blockBytes = [first, second].reduce((total, message) => total + Buffer.byteLength(JSON.stringify(message)), 0) + Buffer.byteLength(JSON.stringify([APPLY_PATCH_TOOL]));
    assert.equal(pool.bytes, blockBytes);
    // A later request keeps only `second` of that block: the block stays, and is counted, until it goes too.
    const withTools = createLoweredRequest([second]);
    delete withTools.tools;
    const two = pool.storeEncoded(encodeLowered(withTools, (text) => text));
    assert.equal(two.messages[0], one.messages[1]);
    pool.releaseRequest(one);
    assert.equal(pool.bytes, blockBytes, 'the block is still held through `second`');
    assert.equal(two.messages[0]?.text, JSON.stringify(second));
    pool.releaseRequest(two);
    assert.equal(pool.bytes, 0);
  });

  it('rebuilds the request in its original key order and measures its compact JSON exactly', () => {
    const request = createLoweredRequest([{ role: 'system', content: 'rules' }, { role: 'user', content: 'héllo 👋 "quoted"' }], { temperature: 0.2 });
    const encoded = new RequestPool((text) => text).storeEncoded(encodeLowered(request, (text) => text));
    assert.equal(JSON.stringify(rebuildStoredRequest(encoded)), JSON.stringify(request));
    assert.equal(measureStoredRequest(encoded), Buffer.byteLength(JSON.stringify(request), 'utf8'));
    assert.deepEqual(
      encoded.messages.map((entry) => entry.text),
      request.messages.map((message) => JSON.stringify(message)),
    );
    const withoutTools = createLoweredRequest([{ role: 'user', content: 'no tools' }]);
    delete withoutTools.tools;
    const bare = new RequestPool((text) => text).storeEncoded(encodeLowered(withoutTools, (text) => text));
    assert.equal(bare.tools, null);
    assert.equal(JSON.stringify(rebuildStoredRequest(bare)), JSON.stringify(withoutTools));
    assert.equal(measureStoredRequest(bare), Buffer.byteLength(JSON.stringify(withoutTools), 'utf8'));
  });

  it('keeps the parts as the sender redacted them, and the head redacted here too', () => {
    const encoded = encodeLowered(createLoweredRequest([{ role: 'user', content: 'key sk-secret' }], { model: 'sk-secret' }), redact);
    const stored = new RequestPool(redact).storeEncoded(encoded);
    assert.doesNotMatch(stored.head, /sk-secret/);
    assert.equal(stored.messages[0]?.text, JSON.stringify({ role: 'user', content: 'key [redacted]' }));
    // Parts that differ only in a secret are one part once redacted: the hash is of the redacted bytes.
    const other = encodeLowered(createLoweredRequest([{ role: 'user', content: 'key [redacted]' }]), redact);
    assert.equal(other.messages[0]?.hash, encoded.messages[0]?.hash);
    assert.notEqual(other.messages[0]?.hash, encodeLowered(createLoweredRequest([{ role: 'user', content: 'key sk-other' }]), redact).messages[0]?.hash);
  });

  it('encodes every part into one buffer of its own (transferable), back to back', () => {
    const request = createLoweredRequest([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }]);
    const encoded = encodeLowered(request, (text) => text);
    const parts = splitChatRequest(request);
    assert.equal(encoded.bytes.byteOffset, 0);
    assert.equal(encoded.bytes.buffer.byteLength, encoded.bytes.byteLength);
    assert.deepEqual(
      [encoded.head, ...encoded.messages, ...(encoded.tools ? [encoded.tools] : [])].map((fragment) => decodeFragment(encoded, fragment)),
      [parts.head, ...parts.messages, parts.tools],
    );
    assert.equal(encoded.tools!.offset + encoded.tools!.length, encoded.bytes.byteLength);
  });
});
