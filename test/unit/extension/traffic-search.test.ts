import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChatRequest } from '../../../src/core/chat/chat-completions-api.ts';
import { splitChatRequest } from '../../../src/core/outbound/outbound-encoding.ts';
import { encodeRequestParts, type EncodedRequestParts } from '../../../src/server/start-event-encoding.ts';
import type { ExchangeRecord } from '../../../src/extension/traffic-record.ts';
import { RequestPool } from '../../../src/extension/traffic-request-pool.ts';
import { searchRecords } from '../../../src/extension/traffic-search.ts';
import { createExchangeSummary } from '../../../src/extension/traffic-summary.ts';
import { createLoweredRequest, customCall, functionCall, grammarWarning } from '../../support/traffic-events.ts';

/** A lowered request encoded for the host as the bridge's worker encodes a start event's. */
function encodeLowered(request: ChatRequest, redactText: (text: string) => string): EncodedRequestParts {
  return encodeRequestParts(splitChatRequest(request), redactText);
}

function record(id: string, sequence: number, fields: Partial<ExchangeRecord> = {}): ExchangeRecord {
  return { summary: createExchangeSummary(id, sequence, '2026-11-29T12:00:00.000Z'), tools: [], toolChoice: null, inputItems: null, backendUrl: null, request: null, items: [], warnings: [], usage: null, ownBytes: 0, evicted: false, ...fields };
}

describe('searchRecords', () => {
  const pool = new RequestPool((text) => text);
  const shared = { role: 'user' as const, content: 'Refactor the Tokenizer\nnow' };
  const records = [
    record('resp_1', 1, { request: pool.storeEncoded(encodeLowered(createLoweredRequest([shared]), (text) => text)) }),
    record('resp_2', 2, { request: pool.storeEncoded(encodeLowered(createLoweredRequest([shared, { role: 'user', content: 'next' }]), (text) => text)), items: [customCall('call_1', '*** Begin Patch')] }),
    record('resp_3', 3, { items: [functionCall('call_2', '{"cmd":"make"}')], warnings: [grammarWarning('call_2', 'raw <i>')] }),
  ];
  const evicted = record('resp_4', 4);
  evicted.summary.error = { code: 'backend_unreachable', message: 'connect ECONNREFUSED 127.0.0.1:8000' };
  records.push(evicted);

  it('finds shared history in every request holding it, in the records’ order', () => {
    assert.deepEqual(searchRecords(records, 'tokenizer'), ['resp_1', 'resp_2']);
    assert.deepEqual(searchRecords(records, 'Tokenizer\nnow'), ['resp_1', 'resp_2'], 'a line break matches the JSON-escaped text');
  });

  it('finds items, tool names, warnings and errors; the query is text, not a pattern', () => {
    assert.deepEqual(searchRecords(records, 'begin patch'), ['resp_2']);
    assert.deepEqual(searchRecords(records, 'exec_command'), ['resp_3']);
    assert.deepEqual(searchRecords(records, '<i>'), ['resp_3']);
    assert.deepEqual(searchRecords(records, 'econnrefused'), ['resp_4']);
    assert.deepEqual(searchRecords(records, '.*'), []);
    assert.deepEqual(searchRecords(records, ''), []);
  });
});
