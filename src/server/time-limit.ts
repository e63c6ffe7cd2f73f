/**
 * A time limit on a piece of work: a plain timer that aborts the signal the work is given, and the
 * caller's own signal (a shutdown, a closed client) passed through by listening to it.
 *
 * Not `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: on Node 20 the combined signal holds the
 * timeout signal only weakly, so after a garbage collection the limit silently never fires and a
 * backend that keeps a connection open without answering holds the work forever. Here the timer holds
 * the controller, and both are released as soon as the work ends.
 */

/** What `AbortSignal.timeout` aborts with, so callers keep telling a time limit by `name === 'TimeoutError'`. */
function timeoutReason(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

/**
 * Runs `work` with a signal that aborts after `ms` (reason: a `TimeoutError` DOMException) or when
 * `signal` aborts (reason: its reason), whichever comes first. The timer and the listener go when
 * `work` settles.
 */
export async function withTimeLimit<T>(ms: number, signal: AbortSignal | undefined, work: (limited: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => controller.abort(timeoutReason()), ms);
  try {
    return await work(controller.signal);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
