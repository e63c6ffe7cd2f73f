import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatTrafficLine } from '../../../src/extension/traffic-line.ts';
import { endEvent, functionCall } from '../../support/traffic-events.ts';

describe('formatTrafficLine', () => {
  it('names what the round trip was for Codex: a turn, a compaction, a sub-agent by name', () => {
    const turn = formatTrafficLine(endEvent('resp_1', [functionCall('call_1', '{}')]));
    assert.match(turn, /^\S+ {2}resp_1 {2}turn {2}completed 200, 0\.9 s, 1 items, 1 tool calls$/);
    const compaction = formatTrafficLine({ ...endEvent('resp_2', []), roundTrip: { kind: 'compaction', agentName: '/root', text: 'compaction' } });
    assert.match(compaction, / {2}resp_2 {2}compaction {2}completed 200/);
    const child = formatTrafficLine({ ...endEvent('resp_3', []), roundTrip: { kind: 'subagent', agentName: '/root/calc', text: 'sub-agent /root/calc' } });
    assert.match(child, / {2}resp_3 {2}sub-agent \/root\/calc {2}completed 200/);
  });

  it('keeps a rejected request as it was (no label: nothing was read from it)', () => {
    const line = formatTrafficLine({ type: 'exchange-rejected', exchangeId: 'resp_4', startedAt: '2026-11-29T12:00:00.000Z', httpStatus: 401, error: { code: null, message: 'missing token' } });
    assert.equal(line, '2026-11-29T12:00:00.000Z  resp_4  rejected 401: missing token');
  });
});
