import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { capSummaryError, countOutputInto, createExchangeSummary } from '../../../src/extension/traffic-summary.ts';
import { customCall, functionCall, grammarWarning } from '../../support/traffic-events.ts';

describe('traffic summaries', () => {
  it('counts lifted and function calls, warning kinds once, and tool names from calls and warnings', () => {
    const summary = createExchangeSummary('resp_1', 7, '2026-11-29T12:00:00.000Z');
    assert.equal(summary.sequence, 7);
    assert.equal(summary.status, 'running');
    assert.deepEqual(summary.roundTrip, { kind: 'unlabelled', agentName: null, text: 'unlabelled' });
    const dropped = { kind: 'hosted_tool_dropped' as const, tool: 'web_search', callId: null, detail: 'dropped' };
    countOutputInto(summary, [customCall('call_1', 'a'), customCall('call_2', 'b'), functionCall('call_3', '{}')], [grammarWarning('call_1', 'a'), grammarWarning('call_2', 'b'), dropped]);
    assert.equal(summary.liftedCallCount, 2);
    assert.equal(summary.functionCallCount, 1);
    assert.equal(summary.warningCount, 3);
    assert.deepEqual(summary.warningKinds, ['grammar_mismatch', 'hosted_tool_dropped']);
    assert.deepEqual(summary.toolNames, ['apply_patch', 'exec_command', 'web_search']);
  });

  it('redacts an error message and cuts it at 2000 characters', () => {
    assert.equal(capSummaryError('token sk-1 refused', (text) => text.replace('sk-1', '[redacted]')), 'token [redacted] refused');
    const long = capSummaryError('e'.repeat(5000), (text) => text);
    assert.equal(long, `${'e'.repeat(2000)} …`);
  });
});
