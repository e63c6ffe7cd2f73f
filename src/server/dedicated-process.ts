import { setFlagsFromString } from 'node:v8';

/*
 * V8 settings for a process that runs the bridge and nothing else: `freeform-bridge serve`, and the
 * bench's and the soak test's bridge processes, which stand for it. Never for VS Code's extension
 * host: V8's flags belong to the whole process, and there every extension shares them (the bridge's
 * worker thread included).
 *
 * `--no-liftoff`: WebAssembly compiled by TurboFan up front. undici parses HTTP/1.1 with llhttp, a
 * WebAssembly module it compiles when the first backend connection opens. By default V8 compiles it
 * with its baseline compiler (Liftoff) and, once the parser's functions are hot, compiles them again
 * with TurboFan. In the soak test's bridge process that second compile held 29–37 MB of compiler
 * memory at once during the first requests (V8's malloc'd memory, sampled every 50 ms; 1.5 MB at most
 * with this setting) and left about 10 MB resident in a background thread's glibc arena for the life
 * of the process. Compiled by TurboFan from the start (about 3 ms for llhttp), nothing is compiled
 * again. Measured through the soak's load, four runs each way: about 4 MB less RSS at the median and
 * at the peak with V8's default heap sizes, and with the young generation capped
 * (`NODE_OPTIONS=--max-semi-space-size=4`) a peak of 95–101 MB where it was 111 MB, since the first
 * requests' compile no longer sets it. CPU per request under the bench's load did not change
 * (`npm run bench:ab`).
 *
 * Node 20 and 24 both take the flag at run time. A module compiled before this runs keeps its
 * tiers, so it runs before the bridge starts.
 */

/** The flags `configureDedicatedProcess` sets, for the start-up log. */
export const DEDICATED_PROCESS_V8_FLAGS: readonly string[] = ['--no-liftoff'];

export function configureDedicatedProcess(): void {
  for (const flag of DEDICATED_PROCESS_V8_FLAGS) setFlagsFromString(flag);
}
