import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CALLS_COLUMN_TITLE, describeCallsCell, describeCallTally } from '../../../media/traffic-panel-call-tally.ts';
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
      'qwen3-coder: 1 valid, 1 repaired, 0 with a warning, 0 refused, 0 left as text · gemma4: 0 valid, 0 repaired, 1 with a warning, 1 refused, 0 left as text',
    );
  });

  it('says nothing before any tool call', () => {
    assert.equal(describeCallTally([roundTrip(1, 'qwen3-coder', [], [])]), '');
  });

  it('names each model by its short name, and two models by their full ids where the short names would read alike', () => {
    const exchanges = [
      roundTrip(1, '/models/Qwen3-Coder-30B-A3B-Instruct-Q4_K_M.gguf', [patchCall('a')], []),
      roundTrip(2, 'unsloth/gpt-oss-20b-GGUF:F16', [patchCall('b')], []),
      roundTrip(3, 'ggml-org/gpt-oss-20b-GGUF:F16', [patchCall('c')], []),
    ];
    assert.equal(
      describeCallTally(exchanges),
      'Qwen3-Coder-30B-A3B-Instruct-Q4_K_M: 1 valid, 0 repaired, 0 with a warning, 0 refused, 0 left as text · unsloth/gpt-oss-20b-GGUF:F16: 1 valid, 0 repaired, 0 with a warning, 0 refused, 0 left as text · ggml-org/gpt-oss-20b-GGUF:F16: 1 valid, 0 repaired, 0 with a warning, 0 refused, 0 left as text',
    );
  });
});

describe('the hover texts of the list\'s Calls column ("1 + 0")', () => {
  it('the header says what the two numbers are', () => {
    assert.match(CALLS_COLUMN_TITLE, /^Tool calls .*: custom tool calls lifted back to Codex .* \+ function calls passed through/);
  });

  it('a row says its two counts in words and how its calls arrived', () => {
    const repaired = roundTrip(1, 'qwen3-coder', [patchCall('a'), patchCall('b')], [createWarning('grammar_repaired', 'fence removed', { callId: 'b' })]);
    assert.equal(describeCallsCell(repaired), '2 custom tool calls lifted + 0 function calls: 1 valid, 1 repaired, 0 with a warning, 0 refused, 0 left as text');
    const functionCall: ResponsesOutputItem = { type: 'function_call', id: 'fc_1', call_id: 'x', name: 'exec_command', arguments: '{"cmd":"ls"}', status: 'completed' };
    assert.equal(describeCallsCell(roundTrip(2, 'qwen3-coder', [functionCall], [])), '0 custom tool calls lifted + 1 function call: 1 valid, 0 repaired, 0 with a warning, 0 refused, 0 left as text');
    assert.equal(describeCallsCell(roundTrip(3, 'qwen3-coder', [], [])), '0 custom tool calls lifted + 0 function calls');
  });
});
