import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeCallTally } from '../../../media/traffic-panel-call-tally.ts';
import { createExchangeSummary, countOutputInto } from '../../../src/extension/traffic-summary.ts';
import type { ResponsesOutputItem } from '../../../src/core/responses/responses-output.ts';
import { createWarning } from '../../../src/core/warnings.ts';

const patchCall = (callId: string): ResponsesOutputItem => ({ type: 'custom_tool_call', id: `ctc_${callId}`, call_id: callId, name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n', status: 'completed' });

function roundTrip(sequence: number, model: string, items: ResponsesOutputItem[], warnings: Parameters<typeof countOutputInto>[2]) {
  const summary = createExchangeSummary(`resp_${sequence}`, sequence, '2026-12-04T12:00:00.000Z');
  summary.model = model;
  countOutputInto(summary, items, warnings);
  return summary;
}

describe('the panel tally of tool calls per model', () => {
  it('sums each model over its round trips, from the counts the summaries carry', () => {
    const exchanges = [
      roundTrip(1, 'qwen3-coder', [patchCall('a')], []),
      roundTrip(2, 'qwen3-coder', [patchCall('b')], [createWarning('grammar_repaired', 'fence removed', { callId: 'b' })]),
      roundTrip(3, 'gemma4', [patchCall('c')], [createWarning('grammar_mismatch', 'Codex will reject', { callId: 'c' })]),
      roundTrip(4, 'gemma4', [], [createWarning('truncated', 'cut by length', { callId: 'd' })]),
      roundTrip(5, 'qwen3-coder', [], []),
    ];
    assert.equal(
      describeCallTally(exchanges),
      'qwen3-coder: 1 valid, 1 repaired, 0 with a warning, 0 refused · gemma4: 0 valid, 0 repaired, 1 with a warning, 1 refused',
    );
  });

  it('says nothing before any tool call', () => {
    assert.equal(describeCallTally([roundTrip(1, 'qwen3-coder', [], [])]), '');
  });
});
