import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseWebviewToHostMessage, type WebviewToHostMessage } from '../../../src/shared/webview-protocol.ts';

describe('parseWebviewToHostMessage', () => {
  it('accepts every message the panel sends', () => {
    const messages: WebviewToHostMessage[] = [
      { type: 'webview/ready' },
      { type: 'traffic/exchange/select', exchangeId: 'resp_1' },
      { type: 'traffic/exchange/select', exchangeId: null },
      { type: 'traffic/body/request', body: { kind: 'loweredRequest', exchangeId: 'resp_1' } },
      { type: 'traffic/body/open', body: { kind: 'exchange', exchangeId: 'resp_1' } },
      { type: 'traffic/body/copy', body: { kind: 'item', exchangeId: 'resp_1', index: 2 } },
      { type: 'traffic/body/copy', body: { kind: 'warningRaw', exchangeId: 'resp_1', index: 0 } },
      { type: 'traffic/curl/copy', exchangeId: 'resp_1' },
      { type: 'traffic/search/run', query: '<script>alert(1)</script>' },
      { type: 'traffic/session/clear' },
      { type: 'traffic/session/export' },
    ];
    for (const message of messages) assert.deepEqual(parseWebviewToHostMessage(message), message);
  });

  it('drops anything else: unknown types, extra or missing fields, wrong types, out-of-range values', () => {
    const rejected: unknown[] = [
      null,
      'webview/ready',
      [],
      {},
      { type: 'webview/ready', extra: true },
      { type: 'traffic/line/append', line: 'x' },
      { type: 'traffic/exchange/select' },
      { type: 'traffic/exchange/select', exchangeId: 42 },
      { type: 'traffic/exchange/select', exchangeId: '' },
      { type: 'traffic/exchange/select', exchangeId: 'x'.repeat(201) },
      { type: 'traffic/body/open', body: { kind: 'file', path: '/etc/passwd' } },
      { type: 'traffic/body/open', body: { kind: 'item', exchangeId: 'resp_1' } },
      { type: 'traffic/body/open', body: { kind: 'item', exchangeId: 'resp_1', index: -1 } },
      { type: 'traffic/body/open', body: { kind: 'item', exchangeId: 'resp_1', index: 1.5 } },
      { type: 'traffic/body/open', body: { kind: 'loweredRequest', exchangeId: 'resp_1', uri: 'file:///x' } },
      { type: 'traffic/search/run', query: 'x'.repeat(1001) },
      { type: 'traffic/session/export', uri: '/tmp/x.jsonl' },
      { type: '__proto__' },
    ];
    for (const message of rejected) assert.equal(parseWebviewToHostMessage(message), null, JSON.stringify(message));
  });
});
