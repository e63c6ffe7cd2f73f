import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLiveView, type LiveViewOptions } from '../../../src/cli/live-view.ts';
import { renderTerminalText } from '../../../src/core/terminal-text.ts';
import { customCall, deltaEvent, endEvent, grammarWarning, startEvent } from '../../support/traffic-events.ts';

function watch(overrides: Partial<LiveViewOptions> = {}): { lines: string[]; listener: ReturnType<typeof createLiveView> } {
  const lines: string[] = [];
  const listener = createLiveView({ write: (line) => lines.push(renderTerminalText(line, { colour: false })), roundTrips: true, warnings: true, detailed: false, now: () => new Date(2026, 10, 29, 12, 0, 1), ...overrides });
  return { lines, listener };
}

function playExchange(listener: ReturnType<typeof createLiveView>): void {
  listener(startEvent('resp_1'));
  listener(deltaEvent('resp_1', [customCall('call_1', '*** Begin Patch')], [grammarWarning('call_1', 'x')]));
  listener(endEvent('resp_1', [customCall('call_1', '*** Begin Patch')], [grammarWarning('call_1', 'x')]));
  listener({ type: 'exchange-rejected', exchangeId: 'resp_2', startedAt: '2026-11-29T12:00:00.000Z', httpStatus: 401, error: { code: null, message: 'missing token' } });
}

describe('createLiveView', () => {
  it('prints the round trip with its model when it ends, then each warning on its own line', () => {
    const { lines, listener } = watch();
    playExchange(listener);
    assert.deepEqual(lines, [
      '12:00:01  turn  qwen3-coder  200 completed  0.9 s  calls: apply_patch  1 warning',
      '12:00:01    warning grammar_mismatch  apply_patch call_1: input does not match the apply_patch grammar at line 3, column 1',
    ]);
  });

  it('prints only the warnings without round-trip lines (--quiet, --log-level warn), and nothing at error', () => {
    const quiet = watch({ roundTrips: false });
    playExchange(quiet.listener);
    assert.deepEqual(quiet.lines, ['12:00:01    warning grammar_mismatch  apply_patch call_1: input does not match the apply_patch grammar at line 3, column 1']);
    const errorsOnly = watch({ roundTrips: false, warnings: false });
    playExchange(errorsOnly.listener);
    assert.deepEqual(errorsOnly.lines, []);
  });

  it('forgets a start once its end is printed (the next exchange with that id has no model)', () => {
    const { lines, listener } = watch();
    listener(startEvent('resp_1'));
    listener(endEvent('resp_1', []));
    listener(endEvent('resp_1', []));
    assert.deepEqual(lines, ['12:00:01  turn  qwen3-coder  200 completed  0.9 s', '12:00:01  turn  ?  200 completed  0.9 s']);
  });
});
