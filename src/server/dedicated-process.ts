import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/*
 * V8 settings for a process that runs the bridge and nothing else: `freeform-bridge serve`, and the
 * bench's and the soak test's bridge processes, which stand for it. Never for VS Code's extension
 * host: V8's flags belong to the whole process, and there every extension shares them (the bridge's
 * worker thread included; it has its young generation capped through the worker's resourceLimits,
 * start-bridge-in-worker.ts).
 *
 * `--no-wasm-tier-up --no-wasm-dynamic-tiering`: WebAssembly runs on the code of V8's baseline
 * compiler (Liftoff) and is never compiled again by its optimising compiler (TurboFan). undici parses
 * HTTP/1.1 with llhttp, a WebAssembly module it compiles when the first backend connection opens, and
 * TurboFan's compile of llhttp's one large parsing function takes about 36 MB of compiler memory at
 * once (V8's `peak_malloced_memory`). By default that compile comes once the parser is hot, and it
 * left about 10 MB resident in a background thread's glibc arena; compiled by TurboFan up front
 * (`--no-liftoff`, a setting before), it runs on the main thread during the first requests and left
 * glibc's main arena at 14.1 MB instead of 5.2 MB in 9 of 16 starts (the freed memory stayed below a
 * later allocation, so glibc could not give it back): the 97–102 MB peaks of the soak test's bridge
 * process, where the others read 92–94 MB. With Liftoff code only, the main arena read 5.4 MB in 16
 * of 16 starts and nothing is ever compiled again. CPU per request under the bench's load
 * (`npm run bench:ab`, eight rounds against `--no-liftoff`): 0.520 against 0.512 ms, within the
 * noise; the parser is a small part of a request's work.
 *
 * Both flags, in this order: without dynamic tiering but with tier-up, V8 compiles every function
 * with TurboFan in the background. `--liftoff-only` (V8's flag for testing, this setting's previous
 * form) says the same in one flag, but Node 24's V8 reads it only at start-up and tiered up anyway
 * when it was set at run time; these two hold when set at run time on Node 20, 22 and 24. A module
 * compiled before they are set keeps its tiers, so they are set before the bridge starts.
 */

/** The flags `configureDedicatedProcess` sets, for the start-up log. */
export const DEDICATED_PROCESS_V8_FLAGS: readonly string[] = ['--no-wasm-tier-up', '--no-wasm-dynamic-tiering'];

/**
 * The young generation's new space (its two semi-spaces) stops growing at this size: 16 MB.
 *
 * V8 starts the new space small and doubles it each time the bytes that survived young-generation
 * GCs since the last doubling exceed its size. Under a steady load those survivors are the requests
 * in flight at each GC, so any busy server reaches V8's maximum in time: 32 MB with Node 20, up to
 * 128 MB with Node 24, mostly garbage between two GCs but all of it resident. The maximum is fixed when the
 * process starts (`--max-semi-space-size`, which the CLI cannot set for itself), but V8 reads its
 * growth factor each time it grows the space, so `serve` sets the factor to 1 once the space reaches
 * this size, and back to V8's 2 if V8 shrinks it (after a quiet spell) below.
 *
 * Measured through the soak's load (test/load/soak.test.ts, Node 20): over 60 s, peak RSS 120 → 109
 * MB; over the 20 s the test runs, 92.4–92.5 MB without the cap and 92.9–93.4 MB with it (the space
 * reached 32 MB only after about 22 s). Under the bench's heavy load (`npm run bench:ab`, 32 clients)
 * peak RSS 170.6 → 148.2 MB, CPU per request 0.527 → 0.520 ms.
 */
export const DEDICATED_PROCESS_NEW_SPACE_CAP_BYTES = 16 * 1024 * 1024;

/** V8's default `--semi-space-growth-factor`, restored when the new space is below the cap. */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2;

function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * Holds the new space at `capBytes` for the life of the process: after each GC (the only time V8
 * resizes it), growth is switched off at or above the cap and back on below it.
 */
function capNewSpace(capBytes: number): void {
  let holding = false;
  const adjust = (): void => {
    const hold = newSpaceBytes() >= capBytes;
    if (hold === holding) return;
    holding = hold;
    setFlagsFromString(`--semi-space-growth-factor=${hold ? 1 : V8_SEMI_SPACE_GROWTH_FACTOR}`);
  };
  const observer = new PerformanceObserver(adjust);
  observer.observe({ entryTypes: ['gc'] });
  adjust();
}

export function configureDedicatedProcess(): void {
  for (const flag of DEDICATED_PROCESS_V8_FLAGS) setFlagsFromString(flag);
  capNewSpace(DEDICATED_PROCESS_NEW_SPACE_CAP_BYTES);
}
