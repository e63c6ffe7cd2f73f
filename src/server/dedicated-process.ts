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
 * with TurboFan. Under the soak test's load that second compile held up to 55 MB of compiler memory
 * during the first requests and left about 10 MB resident in a glibc arena for the life of the
 * process. Compiled by TurboFan from the start (about 3 ms for llhttp), nothing is compiled again: the
 * soak's bridge process went from 112.0 to 99.4 MB of RSS at the median and from 128.2 to 116.1 MB at
 * the peak, with no change in CPU per request under the bench's load (`npm run bench:ab`).
 *
 * Node 20 and 24 both take the flag at run time. A module compiled before this runs keeps its
 * tiers, so it runs before the bridge starts.
 */

/** The flags `configureDedicatedProcess` sets, for the start-up log. */
export const DEDICATED_PROCESS_V8_FLAGS: readonly string[] = ['--no-liftoff'];

export function configureDedicatedProcess(): void {
  for (const flag of DEDICATED_PROCESS_V8_FLAGS) setFlagsFromString(flag);
}
