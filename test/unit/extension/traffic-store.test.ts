import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactSecrets } from '../../../src/core/redact-secrets.ts';
import { TrafficStore } from '../../../src/extension/traffic-store.ts';
import { TEXT_VIEW_LIMIT } from '../../../src/shared/webview-protocol.ts';
import { createLoweredRequest, customCall, deltaEvent, encodedStartEvent, endEvent, functionCall, grammarWarning, HTML_PAYLOAD } from '../../support/traffic-events.ts';

describe('TrafficStore: one round trip', () => {
  it('summarises a running exchange, then its end', () => {
    const store = new TrafficStore({ getBackendUrl: () => 'http://127.0.0.1:8000/v1' });
    const started = store.apply(encodedStartEvent('resp_1'));
    assert.equal(started.upserted.length, 1);
    assert.deepEqual(started.removedIds, []);
    const running = started.upserted[0];
    assert.equal(running?.status, 'running');
    assert.equal(running?.httpStatus, null);
    assert.equal(running?.stream, true);
    assert.equal(running?.loweredRequestBytes, Buffer.byteLength(JSON.stringify(createLoweredRequest([{ role: 'user', content: 'hello' }]))));

    const call = customCall('call_1', HTML_PAYLOAD);
    const warning = grammarWarning('call_1', HTML_PAYLOAD);
    const delta = store.apply(deltaEvent('resp_1', [call], [warning]));
    assert.equal(delta.upserted[0]?.liftedCallCount, 1);
    assert.equal(delta.upserted[0]?.warningCount, 1);

    const lowering = { kind: 'hosted_tool_dropped' as const, tool: 'web_search', callId: null, detail: 'dropped' };
    const ended = store.apply(endEvent('resp_1', [call, functionCall('call_2', '{"cmd":"ls"}')], [lowering, warning]));
    assert.deepEqual(ended.upserted[0], {
      id: 'resp_1',
      sequence: 1,
      startedAt: '2026-11-29T12:00:00.000Z',
      roundTrip: { kind: 'turn', agentName: '/root', text: 'turn' },
      model: 'qwen3-coder',
      upstreamModel: 'qwen3-coder',
      stream: true,
      status: 'completed',
      httpStatus: 200,
      durationMs: 900,
      firstTokenMs: 120,
      upstreamHeadersMs: 40,
      inputTokens: 100,
      outputTokens: 20,
      liftedCallCount: 1,
      functionCallCount: 1,
      warningCount: 2,
      warningKinds: ['hosted_tool_dropped', 'grammar_mismatch'],
      toolNames: ['apply_patch', 'exec_command', 'web_search'],
      callOutcomes: { valid: 1, repaired: 0, warned: 1, refused: 0, leftAsText: 0 },
      error: null,
      requestBytes: 2048,
      loweredRequestBytes: running?.loweredRequestBytes ?? -1,
      bodyRetained: true,
    });
  });

  it('labels each round trip as Codex did (turn, compaction, a sub-agent by name); a request refused before its body was read is unlabelled; search finds the label', () => {
    const store = new TrafficStore();
    const compaction = { kind: 'compaction' as const, agentName: '/root', text: 'compaction' };
    const child = { kind: 'subagent' as const, agentName: '/root/calc', text: 'sub-agent /root/calc' };
    store.apply({ ...encodedStartEvent('resp_1'), roundTrip: compaction });
    store.apply({ ...encodedStartEvent('resp_2'), roundTrip: child });
    store.apply({ ...endEvent('resp_2', []), roundTrip: child });
    store.apply({ type: 'exchange-rejected', exchangeId: 'resp_3', startedAt: '2026-11-29T12:00:00.000Z', httpStatus: 401, error: { code: null, message: 'missing token' } });
    store.apply({ type: 'exchange-rejected', exchangeId: 'resp_4', startedAt: '2026-11-29T12:00:00.000Z', httpStatus: 400, error: { code: 'unsupported_feature', message: 'remote compaction' }, roundTrip: compaction });
    assert.deepEqual(
      store.getSummaries().map((summary) => [summary.id, summary.roundTrip]),
      [
        ['resp_1', compaction],
        ['resp_2', child],
        ['resp_3', { kind: 'unlabelled', agentName: null, text: 'unlabelled' }],
        ['resp_4', compaction],
      ],
    );
    assert.deepEqual(store.getDetail('resp_2')?.summary.roundTrip, child);
    assert.deepEqual(store.search('/root/calc'), ['resp_2']);
  });

  it('details every item and warning, linking a warning to what was delivered for its call', () => {
    const store = new TrafficStore({ getBackendUrl: () => 'http://backend/v1' });
    store.apply(encodedStartEvent('resp_1'));
    const truncated = { kind: 'truncated' as const, tool: 'exec_command', callId: 'call_lost', detail: 'call not delivered', raw: '{"cmd": "ls' };
    store.apply(endEvent('resp_1', [customCall('call_1', HTML_PAYLOAD)], [grammarWarning('call_1', HTML_PAYLOAD), truncated]));
    const detail = store.getDetail('resp_1');
    assert.ok(detail);
    assert.equal(detail.backendUrl, 'http://backend/v1');
    assert.deepEqual(detail.items, [
      { kind: 'custom_tool_call', index: 0, name: 'apply_patch', namespace: null, callId: 'call_1', input: { text: HTML_PAYLOAD, totalLength: HTML_PAYLOAD.length, truncated: false }, status: 'completed' },
    ]);
    assert.equal(detail.warnings[0]?.deliveredIndex, 0);
    assert.equal(detail.warnings[0]?.raw?.text, HTML_PAYLOAD);
    assert.equal(detail.warnings[1]?.deliveredIndex, null, 'a truncated call was not delivered');
    assert.deepEqual(detail.toolChoice, {
      original: '{"type":"custom","name":"apply_patch"}',
      sent: '{"type":"function","function":{"name":"apply_patch"}}',
      rewritten: true,
    });
    assert.deepEqual(
      detail.tools.map((tool) => [tool.name, tool.disposition, tool.namespace]),
      [
        ['apply_patch', 'bridged', null],
        ['close_agent', 'lowered', 'multi_agent_v1'],
        ['web_search', 'dropped', null],
      ],
    );
  });

  it('serves the lowered request once, rebuilt in its original key order, with lowered tools marked', () => {
    const store = new TrafficStore();
    const request = createLoweredRequest([{ role: 'system', content: 'be brief' }, { role: 'user', content: 'patch it' }]);
    store.apply(encodedStartEvent('resp_1', request));
    assert.deepEqual(store.getLoweredRequestValue('resp_1'), request);
    assert.equal(JSON.stringify(store.getLoweredRequestValue('resp_1')), JSON.stringify(request), 'same key order');
    const content = store.getBodyContent({ kind: 'loweredRequest', exchangeId: 'resp_1' });
    assert.ok(content);
    assert.equal(content.text.text, JSON.stringify(request, null, 2));
    assert.deepEqual(
      content.loweredTools?.map(({ wireName, name, kind, disposition }) => ({ wireName, name, kind, disposition })),
      [{ wireName: 'apply_patch', name: 'apply_patch', kind: 'custom', disposition: 'bridged' }],
    );
    assert.equal(content.toolChoice?.rewritten, true);
  });

  it('copies a lifted input and a raw payload verbatim, and opens bodies as JSON', () => {
    const store = new TrafficStore();
    store.apply(encodedStartEvent('resp_1'));
    store.apply(endEvent('resp_1', [customCall('call_1', HTML_PAYLOAD)], [grammarWarning('call_1', '  raw\twith\r\nwhitespace  ')]));
    assert.equal(store.getCopyText({ kind: 'item', exchangeId: 'resp_1', index: 0 }), HTML_PAYLOAD);
    assert.equal(store.getCopyText({ kind: 'warningRaw', exchangeId: 'resp_1', index: 0 }), '  raw\twith\r\nwhitespace  ');
    const document = store.getDocumentText({ kind: 'exchange', exchangeId: 'resp_1' });
    assert.ok(document);
    const parsed = JSON.parse(document) as { loweredRequest: unknown; output: Array<{ input: string }> };
    assert.equal(parsed.output[0]?.input, HTML_PAYLOAD);
    assert.deepEqual(parsed.loweredRequest, createLoweredRequest([{ role: 'user', content: 'hello' }]));
    assert.equal(store.getCopyText({ kind: 'item', exchangeId: 'resp_1', index: 5 }), null);
    assert.equal(store.getCopyText({ kind: 'item', exchangeId: 'resp_unknown', index: 0 }), null);
  });

  it('cuts a huge payload for the panel but keeps it whole for copy', () => {
    const store = new TrafficStore();
    store.apply(encodedStartEvent('resp_1'));
    const huge = 'x'.repeat(TEXT_VIEW_LIMIT + 10);
    store.apply(endEvent('resp_1', [customCall('call_1', huge)]));
    const item = store.getDetail('resp_1')?.items[0];
    assert.equal(item?.kind, 'custom_tool_call');
    if (item?.kind !== 'custom_tool_call') return;
    assert.deepEqual({ length: item.input.text.length, totalLength: item.input.totalLength, truncated: item.input.truncated }, { length: TEXT_VIEW_LIMIT, totalLength: TEXT_VIEW_LIMIT + 10, truncated: true });
    assert.equal(store.getCopyText({ kind: 'item', exchangeId: 'resp_1', index: 0 }), huge);
  });

  it('records a rejected request without a body', () => {
    const store = new TrafficStore();
    const change = store.apply({ type: 'exchange-rejected', exchangeId: 'resp_bad', startedAt: '2026-11-29T12:00:00.000Z', httpStatus: 400, error: { code: 'invalid_json', message: 'not JSON' } });
    assert.equal(change.upserted[0]?.status, 'rejected');
    assert.equal(change.upserted[0]?.bodyRetained, false);
    assert.deepEqual(change.upserted[0]?.error, { code: 'invalid_json', message: 'not JSON' });
    assert.equal(store.getLoweredRequestValue('resp_bad'), null);
    assert.equal(store.getStats().evictedBodyCount, 0);
  });

  it('ignores deltas and ends of round trips it no longer holds (after a clear)', () => {
    const store = new TrafficStore();
    store.apply(encodedStartEvent('resp_1'));
    store.clear();
    assert.deepEqual(store.apply(deltaEvent('resp_1', [customCall('call_1', 'x')])), { upserted: [], removedIds: [] });
    assert.deepEqual(store.apply(endEvent('resp_1', [])), { upserted: [], removedIds: [] });
    assert.deepEqual(store.getSummaries(), []);
    assert.equal(store.getStats().retainedBodyBytes, 0);
  });

  it('redacts secrets from everything it keeps', () => {
    const secret = 'sk-live-0123456789';
    const redact = (text: string): string => redactSecrets(text, [secret]);
    const store = new TrafficStore({ redactText: redact });
    // The request arrives redacted by the bridge's worker thread; the store redacts what it adds itself.
    store.apply(encodedStartEvent('resp_1', createLoweredRequest([{ role: 'user', content: `my key is ${secret}` }]), redact));
    store.apply(endEvent('resp_1', [customCall('call_1', `echo ${secret}`)], [grammarWarning('call_1', secret)], { error: { code: 'x', message: `bad key ${secret}` } }));
    const everything = JSON.stringify([store.getSummaries(), store.getDetail('resp_1'), store.getDocumentText({ kind: 'exchange', exchangeId: 'resp_1' })]);
    assert.ok(!everything.includes(secret), everything);
    assert.ok(everything.includes('[redacted]'));
  });
});

describe('TrafficStore: bounds', () => {
  it('keeps the newest round trips within the ring buffer size', () => {
    const store = new TrafficStore({ capacity: 10 });
    const removed: string[] = [];
    for (let index = 1; index <= 13; index += 1) removed.push(...store.apply(encodedStartEvent(`resp_${index}`)).removedIds);
    assert.deepEqual(removed, ['resp_1', 'resp_2', 'resp_3']);
    assert.deepEqual(store.getSummaries().map((summary) => summary.id), Array.from({ length: 10 }, (_, index) => `resp_${index + 4}`));
    assert.deepEqual(store.resize(10.5), []);
    assert.equal(store.getCapacity(), 10);
    assert.deepEqual(store.resize(1), [], 'clamped to the minimum of 10');
  });

  it('shrinking the ring buffer drops the oldest round trips and frees their bodies', () => {
    const store = new TrafficStore({ capacity: 20 });
    for (let index = 1; index <= 20; index += 1) store.apply(encodedStartEvent(`resp_${index}`, createLoweredRequest([{ role: 'user', content: `turn ${index}` }])));
    const before = store.getStats().retainedBodyBytes;
    assert.equal(store.resize(10).length, 10);
    assert.ok(store.getStats().retainedBodyBytes < before);
  });

  it('keeps shared history once: a growing conversation costs about one copy', () => {
    const store = new TrafficStore({ capacity: 100 });
    const history: Array<{ role: 'user'; content: string }> = [];
    for (let turn = 0; turn < 50; turn += 1) {
      history.push({ role: 'user', content: `turn ${turn} ${'y'.repeat(10_000)}` });
      store.apply(encodedStartEvent(`resp_${turn}`, createLoweredRequest([...history])));
    }
    const oneCopy = history.reduce((total, message) => total + JSON.stringify(message).length * 2, 0);
    const retained = store.getStats().retainedBodyBytes;
    assert.ok(retained < oneCopy * 1.1, `retained ${retained} bytes for ${oneCopy} bytes of history`);
    assert.deepEqual(store.getLoweredRequestValue('resp_49'), createLoweredRequest(history));
  });

  it('evicts the bodies of the oldest round trips beyond the byte budget, keeping their summaries', () => {
    const store = new TrafficStore({ capacity: 100, maxBodyBytes: 1_000_000 });
    const changes = [];
    for (let turn = 0; turn < 10; turn += 1) {
      changes.push(store.apply(encodedStartEvent(`resp_${turn}`, createLoweredRequest([{ role: 'user', content: `${turn} ${'z'.repeat(200_000)}` }]))));
    }
    const stats = store.getStats();
    assert.ok(stats.retainedBodyBytes <= 1_000_000, `retained ${stats.retainedBodyBytes}`);
    assert.equal(stats.exchangeCount, 10);
    assert.ok(stats.evictedBodyCount >= 7, `evicted ${stats.evictedBodyCount}`);
    const summaries = store.getSummaries();
    assert.equal(summaries[0]?.bodyRetained, false);
    assert.equal(summaries[9]?.bodyRetained, true);
    assert.equal(store.getLoweredRequestValue('resp_0'), null);
    assert.equal(store.getBodyContent({ kind: 'loweredRequest', exchangeId: 'resp_0' }), null);
    assert.ok(
      changes.some((change) => change.upserted.some((summary) => summary.id === 'resp_0' && !summary.bodyRetained)),
      'the eviction is announced as an upsert so the panel can say so',
    );
    // An end after eviction keeps the counts but not the payloads.
    store.apply(endEvent('resp_0', [customCall('call_1', 'x')], [grammarWarning('call_1', 'x')]));
    assert.equal(store.getSummaries()[0]?.liftedCallCount, 1);
    assert.deepEqual(store.getDetail('resp_0')?.items, []);
  });

  it('encoded starts (a bridge in a worker): a session\'s history kept once, evicted bodies free their parts, clear frees all', () => {
    const store = new TrafficStore({ capacity: 100, maxBodyBytes: 2_000_000 });
    const history: Array<{ role: 'user' | 'assistant'; content: string }> = [];
    for (let turn = 0; turn < 30; turn += 1) {
      history.push({ role: turn % 2 === 0 ? 'user' : 'assistant', content: `${turn} ${'h'.repeat(20_000)}` });
      store.apply(encodedStartEvent(`resp_${turn}`, createLoweredRequest([...history])));
    }
    const oneCopy = history.reduce((total, message) => total + JSON.stringify(message).length * 2, 0);
    const retained = store.getStats().retainedBodyBytes;
    assert.ok(retained < oneCopy * 1.1, `retained ${retained} bytes for ${oneCopy} bytes of history`);
    assert.deepEqual(store.getLoweredRequestValue('resp_29'), createLoweredRequest(history));
    assert.equal(store.getStats().evictedBodyCount, 0);

    // Turns of a new, unrelated size push the budget: the oldest bodies go, and their parts with them.
    for (let turn = 30; turn < 40; turn += 1) store.apply(encodedStartEvent(`resp_${turn}`, createLoweredRequest([{ role: 'user', content: `${turn} ${'z'.repeat(300_000)}` }])));
    const stats = store.getStats();
    assert.ok(stats.retainedBodyBytes <= 2_000_000, `retained ${stats.retainedBodyBytes}`);
    assert.ok(stats.evictedBodyCount >= 30, `evicted ${stats.evictedBodyCount}`);
    assert.equal(store.getLoweredRequestValue('resp_29'), null);
    store.clear();
    assert.equal(store.getStats().retainedBodyBytes, 0);
  });

  it('always keeps the newest request, even one larger than the budget', () => {
    const store = new TrafficStore({ maxBodyBytes: 1000 });
    store.apply(encodedStartEvent('resp_1', createLoweredRequest([{ role: 'user', content: 'a'.repeat(5000) }])));
    assert.notEqual(store.getLoweredRequestValue('resp_1'), null);
    store.apply(encodedStartEvent('resp_2', createLoweredRequest([{ role: 'user', content: 'b'.repeat(5000) }])));
    assert.equal(store.getLoweredRequestValue('resp_1'), null);
    assert.notEqual(store.getLoweredRequestValue('resp_2'), null);
  });
});

describe('TrafficStore.search', () => {
  it('finds round trips by payload text, case-insensitively, in the request too', () => {
    const store = new TrafficStore();
    store.apply(encodedStartEvent('resp_1', createLoweredRequest([{ role: 'user', content: 'Fix the Parser\nplease' }])));
    store.apply(endEvent('resp_1', [customCall('call_1', HTML_PAYLOAD)]));
    store.apply(encodedStartEvent('resp_2'));
    store.apply(endEvent('resp_2', [functionCall('call_2', '{"cmd":"ls -la"}')], [grammarWarning('call_9', 'garbage <b>')]));
    assert.deepEqual(store.search('ONERROR=alert'), ['resp_1']);
    assert.deepEqual(store.search('fix the parser'), ['resp_1']);
    assert.deepEqual(store.search('parser\nplease'), ['resp_1'], 'a line break matches the JSON-escaped text');
    assert.deepEqual(store.search('ls -la'), ['resp_2']);
    assert.deepEqual(store.search('<b>'), ['resp_2']);
    assert.deepEqual(store.search('grammar_mismatch'), ['resp_2']);
    assert.deepEqual(store.search('.*'), [], 'the query is text, not a regular expression');
    assert.deepEqual(store.search(''), []);
  });
});

describe('TrafficStore.exportValues', () => {
  it('yields one complete value per round trip, oldest first', () => {
    const store = new TrafficStore();
    store.apply(encodedStartEvent('resp_1'));
    store.apply(endEvent('resp_1', [customCall('call_1', HTML_PAYLOAD)], [grammarWarning('call_1', HTML_PAYLOAD)]));
    store.apply({ type: 'exchange-rejected', exchangeId: 'resp_2', startedAt: '2026-11-29T12:00:01.000Z', httpStatus: 401, error: { code: null, message: 'missing token' } });
    const values = [...store.exportValues()] as Array<{ exchange: { id: string }; loweredRequest: unknown; output: unknown[]; warnings: unknown[]; toolChoice: unknown }>;
    assert.deepEqual(values.map((value) => value.exchange.id), ['resp_1', 'resp_2']);
    assert.equal(values[0]?.output.length, 1);
    assert.equal(values[0]?.warnings.length, 1);
    assert.deepEqual(values[0]?.toolChoice, { original: { type: 'custom', name: 'apply_patch' }, sent: { type: 'function', function: { name: 'apply_patch' } } });
    assert.equal(values[1]?.loweredRequest, null);
  });
});
