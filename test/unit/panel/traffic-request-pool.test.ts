import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { measureStoredRequest, rebuildStoredRequest, RequestPool, stringBytes } from '../../../src/extension/traffic-request-pool.ts';
import { createLoweredRequest } from './traffic-events.ts';

describe('RequestPool', () => {
  it('keeps a message shared by two requests once, and frees it with the last request holding it', () => {
    const pool = new RequestPool((text) => text);
    const first = { role: 'user' as const, content: 'x'.repeat(1000) };
    const one = pool.store(createLoweredRequest([first]));
    const afterOne = pool.bytes;
    const two = pool.store(createLoweredRequest([first, { role: 'user', content: 'second' }]));
    assert.equal(one.messages[0], two.messages[0], 'the same entry, not a copy');
    assert.equal(one.messages[0]?.references, 2);
    assert.equal(pool.bytes, afterOne + stringBytes(JSON.stringify({ role: 'user', content: 'second' })), 'only the new message and no second tool list');
    pool.releaseRequest(one);
    assert.equal(two.messages[0]?.references, 1);
    pool.releaseRequest(two);
    assert.equal(pool.bytes, 0);
  });

  it('rebuilds the request in its original key order and measures its compact JSON exactly', () => {
    const pool = new RequestPool((text) => text);
    const request = createLoweredRequest([{ role: 'system', content: 'rules' }, { role: 'user', content: 'héllo 👋' }], { temperature: 0.2 });
    const stored = pool.store(request);
    assert.equal(JSON.stringify(rebuildStoredRequest(stored)), JSON.stringify(request));
    assert.equal(measureStoredRequest(stored), Buffer.byteLength(JSON.stringify(request), 'utf8'));
    const withoutTools = createLoweredRequest([{ role: 'user', content: 'no tools' }]);
    delete withoutTools.tools;
    const bare = pool.store(withoutTools);
    assert.equal(bare.tools, null);
    assert.equal(JSON.stringify(rebuildStoredRequest(bare)), JSON.stringify(withoutTools));
    assert.equal(measureStoredRequest(bare), Buffer.byteLength(JSON.stringify(withoutTools), 'utf8'));
  });

  it('redacts every fragment before keeping it, so the same message with a secret is pooled as its redacted text', () => {
    const pool = new RequestPool((text) => text.replaceAll('sk-secret', '[redacted]'));
    const stored = pool.store(createLoweredRequest([{ role: 'user', content: 'key sk-secret' }], { model: 'sk-secret' }));
    assert.doesNotMatch(stored.head, /sk-secret/);
    assert.equal(stored.messages[0]?.text, JSON.stringify({ role: 'user', content: 'key [redacted]' }));
    pool.clear();
    assert.equal(pool.bytes, 0);
  });
});
