import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  createInitialState,
  DEFAULT_UI_STATE,
  KIND_FILTERS,
  reducePanelState,
  restoreUiState,
  selectToolNames,
  selectVisibleExchanges,
  type PanelAction,
  type PanelState,
} from '../../../media/traffic-panel-state.ts';
import type { ExchangeDetail, ExchangeSummary, HostToWebviewMessage, TrafficStats } from '../../../src/shared/webview-protocol.ts';

const STATS: TrafficStats = { exchangeCount: 0, capacity: 200, retainedBodyBytes: 0, maxBodyBytes: 64 * 1024 * 1024, evictedBodyCount: 0 };

function summary(sequence: number, overrides: Partial<ExchangeSummary> = {}): ExchangeSummary {
  return {
    id: `resp_${sequence}`,
    sequence,
    startedAt: '2026-11-29T12:00:00.000Z',
    roundTrip: { kind: 'turn', agentName: '/root', text: 'turn' },
    model: 'qwen3-coder',
    upstreamModel: 'qwen3-coder',
    stream: true,
    status: 'completed',
    httpStatus: 200,
    durationMs: 900,
    firstTokenMs: 100,
    upstreamHeadersMs: 40,
    inputTokens: 10,
    outputTokens: 5,
    liftedCallCount: 0,
    functionCallCount: 0,
    warningCount: 0,
    warningKinds: [],
    toolNames: [],
    callOutcomes: { valid: 0, repaired: 0, warned: 0, refused: 0, leftAsText: 0 },
    error: null,
    requestBytes: 100,
    loweredRequestBytes: 200,
    bodyRetained: true,
    ...overrides,
  };
}

function host(message: HostToWebviewMessage): PanelAction {
  return { type: 'host', message };
}

function apply(state: PanelState, ...actions: PanelAction[]): PanelState {
  return actions.reduce(reducePanelState, state);
}

function ids(state: PanelState): string[] {
  return selectVisibleExchanges(state).map((exchange) => exchange.id);
}

function connected(...exchanges: ExchangeSummary[]): PanelState {
  return apply(createInitialState(), host({ type: 'traffic/snapshot', exchanges, stats: STATS }));
}

function detailOf(exchange: ExchangeSummary): ExchangeDetail {
  return { summary: exchange, tools: [], toolChoice: null, inputItems: 1, items: [], warnings: [], usage: null, backendUrl: null };
}

describe('panel state: snapshot and appends', () => {
  it('starts disconnected and empty, then takes the snapshot whole, sorted by arrival', () => {
    const initial = createInitialState();
    assert.equal(initial.connected, false);
    const state = apply(initial, host({ type: 'traffic/snapshot', exchanges: [summary(2), summary(1)], stats: STATS }));
    assert.equal(state.connected, true);
    assert.deepEqual(state.exchanges.map((exchange) => exchange.id), ['resp_1', 'resp_2']);
    assert.deepEqual(ids(state), ['resp_2', 'resp_1'], 'newest first by default');
  });

  it('appends new round trips and updates running ones in place', () => {
    let state = connected(summary(1));
    state = apply(state, host({ type: 'traffic/exchange/upsert', exchange: summary(2, { status: 'running', httpStatus: null }), stats: { ...STATS, exchangeCount: 2 } }));
    assert.deepEqual(ids(state), ['resp_2', 'resp_1']);
    state = apply(state, host({ type: 'traffic/exchange/upsert', exchange: summary(2, { status: 'incomplete', warningCount: 2 }), stats: STATS }));
    assert.equal(state.exchanges.length, 2);
    assert.equal(state.exchanges[1]?.status, 'incomplete');
    assert.equal(state.stats?.exchangeCount, 0, 'stats are replaced by the latest');
  });

  it('a new snapshot (after clear or reload) replaces everything and drops a selection it no longer has', () => {
    let state = apply(connected(summary(1), summary(2)), { type: 'exchange/select', exchangeId: 'resp_1' }, host({ type: 'traffic/exchange/detail', exchangeId: 'resp_1', detail: detailOf(summary(1)) }));
    assert.ok(state.detail);
    state = apply(state, host({ type: 'traffic/snapshot', exchanges: [], stats: STATS }));
    assert.deepEqual(state.exchanges, []);
    assert.equal(state.ui.selectedId, null);
    assert.equal(state.detail, null);
  });

  it('removes evicted round trips, and closes the detail if it showed one of them', () => {
    let state = apply(connected(summary(1), summary(2), summary(3)), { type: 'exchange/select', exchangeId: 'resp_1' });
    state = apply(state, host({ type: 'traffic/exchange/remove', exchangeIds: ['resp_1', 'resp_2'], stats: STATS }));
    assert.deepEqual(ids(state), ['resp_3']);
    assert.equal(state.ui.selectedId, null);
  });
});

describe('panel state: pause', () => {
  it('holds updates while paused and applies them on resume', () => {
    let state = apply(connected(summary(1)), { type: 'pause/toggle' });
    assert.equal(state.ui.paused, true);
    state = apply(
      state,
      host({ type: 'traffic/exchange/upsert', exchange: summary(2, { status: 'running' }), stats: STATS }),
      host({ type: 'traffic/exchange/upsert', exchange: summary(2, { status: 'completed' }), stats: STATS }),
      host({ type: 'traffic/exchange/upsert', exchange: summary(1, { warningCount: 3 }), stats: STATS }),
    );
    assert.deepEqual(ids(state), ['resp_1']);
    assert.equal(state.exchanges[0]?.warningCount, 0, 'the frozen list does not change');
    assert.deepEqual(state.pending.map((exchange) => [exchange.id, exchange.status]), [['resp_1', 'completed'], ['resp_2', 'completed']]);
    state = apply(state, { type: 'pause/toggle' });
    assert.equal(state.ui.paused, false);
    assert.deepEqual(state.pending, []);
    assert.deepEqual(ids(state), ['resp_2', 'resp_1']);
    assert.equal(state.exchanges[0]?.warningCount, 3);
  });
});

describe('panel state: filters, order and search', () => {
  const exchanges = [
    summary(1, { warningCount: 2, warningKinds: ['grammar_mismatch'], toolNames: ['apply_patch'] }),
    summary(2, { status: 'failed', httpStatus: 503, error: { code: 'backend_unreachable', message: 'down' } }),
    summary(3, { toolNames: ['exec_command'], functionCallCount: 1 }),
    summary(4, { status: 'running', httpStatus: null }),
  ];

  it('filters to round trips with warnings or errors', () => {
    assert.deepEqual(ids(apply(connected(...exchanges), { type: 'filter/warnings/set', warningsOnly: true })), ['resp_2', 'resp_1']);
  });

  it('filters by tool name and lists the tools seen', () => {
    const state = apply(connected(...exchanges), { type: 'filter/tool/set', tool: 'exec_command' });
    assert.deepEqual(ids(state), ['resp_3']);
    assert.deepEqual(selectToolNames(state), ['apply_patch', 'exec_command']);
  });

  it('filters by status', () => {
    assert.deepEqual(ids(apply(connected(...exchanges), { type: 'filter/status/set', status: 'running' })), ['resp_4']);
    assert.deepEqual(ids(apply(connected(...exchanges), { type: 'filter/status/set', status: 'failed' })), ['resp_2']);
  });

  it('filters by round-trip kind: turns, compactions, sub-agents, unlabelled', () => {
    const kinds = [
      summary(1),
      summary(2, { roundTrip: { kind: 'compaction', agentName: '/root', text: 'compaction' } }),
      summary(3, { roundTrip: { kind: 'subagent', agentName: '/root/calc', text: 'sub-agent /root/calc' } }),
      summary(4, { roundTrip: { kind: 'unlabelled', agentName: null, text: 'unlabelled' } }),
    ];
    const filtered = (kind: (typeof KIND_FILTERS)[number]): string[] => ids(apply(connected(...kinds), { type: 'filter/kind/set', kind }));
    assert.deepEqual(filtered('all'), ['resp_4', 'resp_3', 'resp_2', 'resp_1']);
    assert.deepEqual(filtered('turn'), ['resp_1']);
    assert.deepEqual(filtered('compaction'), ['resp_2']);
    assert.deepEqual(filtered('subagent'), ['resp_3']);
    assert.deepEqual(filtered('unlabelled'), ['resp_4']);
    assert.deepEqual(KIND_FILTERS, ['all', 'turn', 'compaction', 'subagent', 'unlabelled']);
  });

  it('toggles the order between newest first and newest last', () => {
    const state = apply(connected(...exchanges), { type: 'order/toggle' });
    assert.equal(state.ui.order, 'newest-last');
    assert.deepEqual(ids(state), ['resp_1', 'resp_2', 'resp_3', 'resp_4']);
  });

  it('shows everything until the host answers a search, then only the matches; stale answers are ignored', () => {
    let state = apply(connected(...exchanges), { type: 'query/set', query: 'onerror' });
    assert.equal(ids(state).length, 4);
    state = apply(state, host({ type: 'traffic/search/result', query: 'onerr', exchangeIds: ['resp_2'] }));
    assert.equal(state.searchMatches, null, 'an answer for an older query is dropped');
    state = apply(state, host({ type: 'traffic/search/result', query: 'onerror', exchangeIds: ['resp_1', 'resp_3'] }));
    assert.deepEqual(ids(state), ['resp_3', 'resp_1']);
    state = apply(state, { type: 'query/set', query: '' });
    assert.equal(ids(state).length, 4);
  });
});

describe('panel state: keyboard cursor and selection', () => {
  it('moves through the visible rows in display order and stops at the ends', () => {
    let state = connected(summary(1), summary(2), summary(3));
    state = apply(state, { type: 'cursor/move', to: 'next' });
    assert.equal(state.ui.activeId, 'resp_3', 'the first row shown (newest first)');
    state = apply(state, { type: 'cursor/move', to: 'next' }, { type: 'cursor/move', to: 'next' }, { type: 'cursor/move', to: 'next' });
    assert.equal(state.ui.activeId, 'resp_1');
    state = apply(state, { type: 'cursor/move', to: 'first' });
    assert.equal(state.ui.activeId, 'resp_3');
    state = apply(state, { type: 'cursor/move', to: 'previous' });
    assert.equal(state.ui.activeId, 'resp_3');
    state = apply(state, { type: 'cursor/move', to: 'page-down' });
    assert.equal(state.ui.activeId, 'resp_1');
    state = apply(state, { type: 'cursor/move', to: 'last' }, { type: 'cursor/move', to: 'page-up' });
    assert.equal(state.ui.activeId, 'resp_3');
  });

  it('does nothing on an empty list', () => {
    const state = connected();
    assert.equal(reducePanelState(state, { type: 'cursor/move', to: 'next' }), state);
  });

  it('selecting clears the previous detail; only the selected round trip\'s detail and body are taken', () => {
    let state = apply(connected(summary(1), summary(2)), { type: 'exchange/select', exchangeId: 'resp_1' });
    assert.equal(state.ui.activeId, 'resp_1');
    state = apply(state, host({ type: 'traffic/exchange/detail', exchangeId: 'resp_2', detail: detailOf(summary(2)) }));
    assert.equal(state.detail, null, 'a late answer for another round trip is dropped');
    state = apply(state, host({ type: 'traffic/exchange/detail', exchangeId: 'resp_1', detail: detailOf(summary(1)) }));
    assert.equal(state.detail?.summary.id, 'resp_1');
    const content = { text: { text: '{}', totalLength: 2, truncated: false }, loweredTools: [], toolChoice: null };
    state = apply(state, host({ type: 'traffic/body/show', body: { kind: 'loweredRequest', exchangeId: 'resp_2' }, content }));
    assert.equal(state.loweredRequest, null);
    state = apply(state, host({ type: 'traffic/body/show', body: { kind: 'loweredRequest', exchangeId: 'resp_1' }, content }));
    assert.deepEqual(state.loweredRequest, { exchangeId: 'resp_1', content });
    state = apply(state, { type: 'exchange/select', exchangeId: 'resp_2' });
    assert.equal(state.detail, null);
    assert.equal(state.loweredRequest, null);
  });

  it('keeps notices until cleared', () => {
    let state = apply(connected(), host({ type: 'traffic/notice/show', level: 'error', message: 'evicted' }));
    assert.deepEqual(state.notice, { level: 'error', message: 'evicted' });
    state = apply(state, { type: 'notice/clear' });
    assert.equal(state.notice, null);
  });
});

describe('panel state: persisted UI state', () => {
  it('restores what setState stored', () => {
    const saved = { ...DEFAULT_UI_STATE, order: 'newest-last', warningsOnly: true, toolFilter: 'apply_patch', statusFilter: 'failed', kindFilter: 'subagent', query: 'x', paused: true, selectedId: 'resp_1', activeId: 'resp_1', showWhitespace: false };
    assert.deepEqual(restoreUiState(saved), saved);
  });

  it('falls back field by field on anything malformed', () => {
    assert.deepEqual(restoreUiState(undefined), DEFAULT_UI_STATE);
    assert.deepEqual(restoreUiState('junk'), DEFAULT_UI_STATE);
    assert.deepEqual(restoreUiState({ order: 'sideways', statusFilter: 'exploded', kindFilter: 'subagents', selectedId: 7, warningsOnly: 'yes', toolFilter: null }), DEFAULT_UI_STATE);
  });
});
