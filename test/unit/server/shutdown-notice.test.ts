import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ShutdownNotice } from '../../../src/server/shutdown-notice.ts';

describe('ShutdownNotice: one listener on the stop signal for every exchange in flight', () => {
  it('tells each subscriber once when the bridge stops, and none that stopped listening', () => {
    const stop = new AbortController();
    const notice = new ShutdownNotice(stop.signal);
    const told: string[] = [];
    notice.subscribe(() => told.push('first'));
    const unsubscribe = notice.subscribe(() => told.push('gone'));
    // A listener that subscribes another while being told must not be called again in the same stop.
    notice.subscribe(() => {
      told.push('third');
      notice.subscribe(() => told.push('late'));
    });
    unsubscribe();
    stop.abort();
    assert.deepEqual(told, ['first', 'third']);
    stop.abort();
    assert.deepEqual(told, ['first', 'third'], 'a stop is told once');
  });

  it('does not tell a subscriber that came after the stop, as an AbortSignal would not', () => {
    const stop = new AbortController();
    const notice = new ShutdownNotice(stop.signal);
    stop.abort();
    let told = false;
    notice.subscribe(() => (told = true));
    assert.equal(told, false);
  });
});
