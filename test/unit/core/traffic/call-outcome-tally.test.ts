import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countCallOutcomes, formatCallOutcomeLine } from '../../../../src/core/traffic/call-outcome-tally.ts';
import type { ResponsesOutputItem } from '../../../../src/core/responses/responses-output.ts';
import { createWarning } from '../../../../src/core/warnings.ts';
import { createCallTallyListener } from '../../../../src/cli/call-tally.ts';
import { customCall, endEvent, startEvent } from '../../../support/traffic-events.ts';

const call = (callId: string): ResponsesOutputItem => ({ type: 'custom_tool_call', id: `ctc_${callId}`, call_id: callId, name: 'apply_patch', input: 'x', status: 'completed' });

describe('countCallOutcomes', () => {
  it('counts each call once: valid, repaired, delivered with a warning, refused', () => {
    const warnings = [
      createWarning('grammar_repaired', 'fence removed', { callId: 'b' }),
      createWarning('grammar_mismatch', 'Codex will reject', { callId: 'c' }),
      createWarning('truncated', 'cut by length', { callId: 'd' }),
      createWarning('duplicate_call_id', 'renamed', { callId: 'a' }),
      createWarning('finish_reason_unusual', 'not about a call'),
    ];
    assert.deepEqual(countCallOutcomes([call('a'), call('b'), call('c')], warnings), { valid: 1, repaired: 1, warned: 1, refused: 1, leftAsText: 0 });
  });

  it('counts a call the engine left as text: recovered, it is delivered with a warning; not recovered, it is left as text', () => {
    const warnings = [
      createWarning('tool_call_as_text', 'recovered from the text', { tool: 'apply_patch', callId: 'a' }),
      createWarning('tool_call_as_text', 'markup within prose, delivered as a message', { tool: 'apply_patch' }),
    ];
    assert.deepEqual(countCallOutcomes([call('a')], warnings), { valid: 0, repaired: 0, warned: 1, refused: 0, leftAsText: 1 });
  });
});

describe('the terminal tally line', () => {
  it('keeps running counts per model from the traffic events and prints a line after each round trip with calls', () => {
    const lines: string[] = [];
    const listen = createCallTallyListener((line) => lines.push(line));
    listen(startEvent('resp_1'));
    listen(endEvent('resp_1', [customCall('a', 'x'), customCall('b', 'y')], [createWarning('grammar_repaired', 'fence removed', { callId: 'b' })]));
    listen(startEvent('resp_2'));
    listen(endEvent('resp_2', []));
    listen(startEvent('resp_3'));
    listen(endEvent('resp_3', [customCall('c', 'z')], [createWarning('grammar_mismatch', 'Codex will reject', { callId: 'c' }), createWarning('truncated', 'cut', { callId: 'd' })]));
    assert.deepEqual(lines, [
      'qwen3-coder: 2 tool calls, 1 valid, 1 repaired, 0 with a warning, 0 refused, 0 left as text\n',
      'qwen3-coder: 4 tool calls, 1 valid, 1 repaired, 1 with a warning, 1 refused, 0 left as text\n',
    ]);
    assert.equal(formatCallOutcomeLine('', { valid: 1, repaired: 0, warned: 0, refused: 0, leftAsText: 0 }), 'unknown model: 1 tool call, 1 valid, 0 repaired, 0 with a warning, 0 refused, 0 left as text');
    listen(startEvent('resp_4'));
    listen(endEvent('resp_4', [], [createWarning('tool_call_as_text', 'markup within prose', { tool: 'apply_patch' })]));
    assert.equal(lines.at(-1), 'qwen3-coder: 5 tool calls, 1 valid, 1 repaired, 1 with a warning, 1 refused, 1 left as text\n', 'a round trip whose only call was left as text prints the tally');
  });
});
