import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeToolCalls, formatClockTime, formatDuration, formatRoundTripLine, formatWarningLine } from '../../../src/cli/round-trip-line.ts';
import { renderTerminalText, type TerminalLine } from '../../../src/core/terminal-text.ts';
import { customCall, endEvent, functionCall, grammarWarning } from '../../support/traffic-events.ts';

const START = { model: 'qwen3-coder', upstreamModel: 'qwen3-coder' };
const PLAIN = { time: '12:00:01', detailed: false };

/** The line as a terminal writer renders it, with or without colours. */
function render(line: TerminalLine, colour = false): string {
  return renderTerminalText(line, { colour });
}

describe('formatRoundTripLine', () => {
  it('prints time, label, model, status, duration, the tool calls by name and the warning count', () => {
    const end = endEvent('resp_1', [customCall('call_1', '*** Begin Patch'), functionCall('call_2', '{}'), functionCall('call_3', '{}')], [grammarWarning('call_1', 'x')]);
    assert.equal(render(formatRoundTripLine(START, end, PLAIN)), '12:00:01  turn  qwen3-coder  200 completed  0.9 s  calls: apply_patch, exec_command ×2  1 warning');
  });

  it('says nothing of calls or warnings when there are none, and shows the model the backend was asked for when it differs', () => {
    const end = endEvent('resp_2', [], [], { roundTrip: { kind: 'compaction', agentName: '/root', text: 'compaction' } });
    assert.equal(render(formatRoundTripLine({ model: 'qwen3-coder', upstreamModel: '/models/q.gguf' }, end, PLAIN)), '12:00:01  compaction  qwen3-coder → /models/q.gguf  200 completed  0.9 s');
  });

  it('labels a sub-agent, a failure and a round trip whose start was not seen', () => {
    // Codex names each agent by its task path from the root agent, `/root` (round-trip-label.ts): an
    // agent's name as Codex sends it, not a folder on this machine.
    const end = endEvent('resp_3', [], [], {
      roundTrip: { kind: 'subagent', agentName: '/root/calc', text: 'sub-agent /root/calc' },
      outcome: 'failed',
      httpStatus: 503,
      timings: { upstreamHeadersMs: null, firstDeltaMs: null, totalMs: 12 },
      error: { code: 'backend_unreachable', message: 'backend unreachable' },
    });
    assert.equal(render(formatRoundTripLine(null, end, PLAIN)), '12:00:01  sub-agent /root/calc  ?  503 failed  0.0 s');
  });

  it('adds the exchange id and the backend timings when detailed', () => {
    assert.equal(render(formatRoundTripLine(START, endEvent('resp_4', []), { ...PLAIN, detailed: true })), '12:00:01  turn  qwen3-coder  200 completed  0.9 s  resp_4, backend headers 0.0 s, first delta 0.1 s');
  });

  it('colours the time, the label, the status and the warnings only when asked', () => {
    const line = render(formatRoundTripLine(START, endEvent('resp_5', [], [grammarWarning('call_1', 'x'), grammarWarning('call_2', 'y')]), PLAIN), true);
    assert.equal(line, '\u001b[2m12:00:01\u001b[0m  \u001b[36mturn\u001b[0m  qwen3-coder  \u001b[32m200 completed\u001b[0m  0.9 s  \u001b[33m2 warnings\u001b[0m');
  });
});

describe('formatWarningLine', () => {
  it('names the warning, the tool and the call', () => {
    assert.equal(
      render(formatWarningLine(grammarWarning('call_1', 'x'), PLAIN)),
      '12:00:01    warning grammar_mismatch  apply_patch call_1: input does not match the apply_patch grammar at line 3, column 1',
    );
  });

  it('calls a grammar the engine enforces a note, not a warning', () => {
    const line = render(formatWarningLine({ kind: 'grammar_enforced', tool: 'apply_patch', callId: null, detail: "custom tool 'apply_patch': grammar enforced by the engine (the engine self-test passed in the escaped-text form)" }, PLAIN));
    assert.equal(line, "12:00:01    note grammar_enforced  apply_patch (no call): custom tool 'apply_patch': grammar enforced by the engine (the engine self-test passed in the escaped-text form)");
  });

  it('says so when the warning concerns no tool or no call', () => {
    const line = render(formatWarningLine({ kind: 'tools_filtered', tool: null, callId: null, detail: 'two tools dropped' }, PLAIN));
    assert.equal(line, '12:00:01    warning tools_filtered  (no tool) (no call): two tools dropped');
  });
});

describe('the parts of the line', () => {
  it('formats local clock time with two digits each', () => {
    assert.equal(formatClockTime(new Date(2026, 0, 2, 3, 4, 5)), '03:04:05');
  });

  it('formats durations in seconds, and in minutes from one minute on', () => {
    assert.deepEqual([formatDuration(null), formatDuration(40), formatDuration(59_949), formatDuration(125_000)], ['? s', '0.0 s', '59.9 s', '2 min 05 s']);
  });

  it('names namespaced calls with their namespace and keeps the order of first appearance', () => {
    const namespaced = { ...functionCall('call_9', '{}'), name: 'spawn_agent', namespace: 'multi_agent_v1' };
    assert.equal(describeToolCalls([functionCall('call_1', '{}'), namespaced, functionCall('call_2', '{}')]), 'exec_command ×2, multi_agent_v1.spawn_agent');
    assert.equal(describeToolCalls([]), null);
  });
});
