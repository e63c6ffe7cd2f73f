import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { withTimeLimit } from '../../../src/server/time-limit.ts';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Resolves with the signal's reason once it aborts; the work a time limit guards, reduced to waiting. */
function waitForAbort(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

describe('withTimeLimit', () => {
  it('aborts the work at the limit with the TimeoutError AbortSignal.timeout gives, through garbage collections', async () => {
    const caller = new AbortController();
    const collector = setInterval(collectGarbage, 5);
    try {
      const reason = await withTimeLimit(100, caller.signal, waitForAbort);
      assert.ok(reason instanceof DOMException);
      assert.equal(reason.name, 'TimeoutError');
      assert.equal(reason.message, 'The operation was aborted due to timeout');
    } finally {
      clearInterval(collector);
    }
  });

  it("passes the caller's abort through with the caller's reason, also when it came before the work started", async () => {
    const caller = new AbortController();
    const stop = new Error('shutting down');
    const pending = withTimeLimit(60_000, caller.signal, waitForAbort);
    caller.abort(stop);
    assert.equal(await pending, stop);
    assert.equal(await withTimeLimit(60_000, caller.signal, waitForAbort), stop);
  });

  it("lets go of the caller's signal when the work ends, and the work's own failure is what it throws", async () => {
    const caller = new AbortController();
    let seen: AbortSignal | null = null;
    assert.equal(
      await withTimeLimit(60_000, caller.signal, async (signal) => {
        seen = signal;
        return 'done';
      }),
      'done',
    );
    await assert.rejects(
      withTimeLimit(60_000, caller.signal, () => Promise.reject(new Error('engine said no'))),
      /engine said no/,
    );
    // No listener stays on the caller's signal: aborting it now reaches no finished work.
    caller.abort();
    assert.equal((seen as AbortSignal | null)?.aborted, false);
  });
});
