/**
 * Starting the bench's child processes. All are bundled with esbuild the way `dist/cli.js` is
 * (CommonJS, node20, one file), so the bridge runs the same kind of code a user runs, without a
 * TypeScript loader in the process being measured.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { makeBundleAscii } from '../scripts/ascii-bundle.mjs';
import type { ChildMessage, ParentMessage, ReadyMessage } from './child-protocol.ts';

/** npm runs scripts from the package root, as the tests assume too. */
export const BENCH_DIRECTORY = resolve(process.cwd(), 'bench');
export const RESULTS_DIRECTORY = resolve(BENCH_DIRECTORY, 'results');
const BUILD_DIRECTORY = resolve(RESULTS_DIRECTORY, 'build');

export interface ChildBundles {
  bridge: string;
  mock: string;
  /** The reference minimal Node hop (bench/children/floor-child.ts). */
  floor: string;
  /** The extension host stand-in (bench/children/extension-host-child.ts) and the bridge's worker it starts. */
  extensionHost: string;
  bridgeWorker: string;
  /** The soak test's bridge process (harness/soak-bridge-child.ts), for target 4's load. */
  soakBridge: string;
}

const PYTHON_JSON_SCAN = 'export function findPythonJsonError(';

/**
 * The mock checks every body the way CPython's `json.loads` would, with a scanner that first spreads
 * the text into an array of characters: ~5 ms of CPU for a 50 kB request and seconds for 10 MB, which
 * would make the mock, not the bridge, the bottleneck. Python accepts every text `JSON.parse`
 * accepts (and NaN/Infinity besides), so in the bench's build of the mock the scan runs only when
 * `JSON.parse` fails: same answers, a fraction of the cost. The mock's source is not modified.
 */
const fastPythonJsonCheck: esbuild.Plugin = {
  name: 'bench-fast-python-json-check',
  setup(build) {
    build.onLoad({ filter: /mock-backend[\\/]python-text\.ts$/ }, (arguments_) => {
      const source = readFileSync(arguments_.path, 'utf8');
      if (!source.includes(PYTHON_JSON_SCAN)) {
        return { contents: source, loader: 'ts', warnings: [{ text: 'findPythonJsonError not found: the mock keeps its slow JSON check' }] };
      }
      const contents = `${source.replace(PYTHON_JSON_SCAN, 'function scanLikePythonJson(')}
export function findPythonJsonError(text: string): PythonJsonError | null {
  try {
    JSON.parse(text);
    return null;
  } catch {
    return scanLikePythonJson(text);
  }
}
`;
      return { contents, loader: 'ts' };
    });
  },
};

/** Maps for stack traces only: the sources they name are in the repository, so no copy is embedded. */
const COMMON_BUILD_OPTIONS: esbuild.BuildOptions = { platform: 'node', format: 'cjs', target: 'node20', bundle: true, sourcemap: true, sourcesContent: false, logLevel: 'warning' };

/**
 * The bench's bridge child of another checkout of this repository (another commit, its dependencies
 * installed), bundled the same way, for comparing two bridges in one run (bench/ab-throughput.ts).
 */
export async function bundleOtherBridgeChild(checkout: string): Promise<string> {
  mkdirSync(BUILD_DIRECTORY, { recursive: true });
  const outfile = resolve(BUILD_DIRECTORY, 'other-bridge-child.cjs');
  await esbuild.build({ ...COMMON_BUILD_OPTIONS, entryPoints: [resolve(checkout, 'bench/children/bridge-child.ts')], outfile });
  makeBundleAscii(outfile);
  return outfile;
}

export async function bundleChildren(): Promise<ChildBundles> {
  mkdirSync(BUILD_DIRECTORY, { recursive: true });
  const bundles: ChildBundles = {
    bridge: resolve(BUILD_DIRECTORY, 'bridge-child.cjs'),
    mock: resolve(BUILD_DIRECTORY, 'mock-child.cjs'),
    floor: resolve(BUILD_DIRECTORY, 'floor-child.cjs'),
    extensionHost: resolve(BUILD_DIRECTORY, 'extension-host-child.cjs'),
    bridgeWorker: resolve(BUILD_DIRECTORY, 'bridge-worker.js'),
    soakBridge: resolve(BUILD_DIRECTORY, 'soak-bridge-child.cjs'),
  };
  const common = COMMON_BUILD_OPTIONS;
  await Promise.all([
    esbuild.build({ ...common, entryPoints: [resolve(BENCH_DIRECTORY, 'children/bridge-child.ts')], outfile: bundles.bridge }),
    esbuild.build({ ...common, entryPoints: [resolve(BENCH_DIRECTORY, 'children/mock-child.ts')], outfile: bundles.mock, plugins: [fastPythonJsonCheck] }),
    esbuild.build({ ...common, entryPoints: [resolve(BENCH_DIRECTORY, 'children/floor-child.ts')], outfile: bundles.floor }),
    esbuild.build({ ...common, entryPoints: [resolve(BENCH_DIRECTORY, 'children/extension-host-child.ts')], outfile: bundles.extensionHost }),
    esbuild.build({ ...common, entryPoints: [resolve(BENCH_DIRECTORY, '../src/server/bridge-worker-entry.ts')], outfile: bundles.bridgeWorker }),
    esbuild.build({ ...common, entryPoints: [resolve(BENCH_DIRECTORY, '../harness/soak-bridge-child.ts')], outfile: bundles.soakBridge }),
  ]);
  // As scripts/build.mjs leaves dist/: ASCII, so V8 holds each source as one byte per character.
  for (const bundle of Object.values(bundles)) makeBundleAscii(bundle);
  return bundles;
}

export interface RunningChild {
  name: string;
  process: ChildProcess;
  pid: number;
  url: string;
  /** What the child said when it was ready. */
  ready: ReadyMessage;
  /** Sends a request and resolves with the child's reply carrying the same id. */
  ask<Reply extends ChildMessage>(message: ParentMessage & { id: number }): Promise<Reply>;
  nextId(): number;
  stop(): Promise<void>;
}

export async function startChild(name: string, modulePath: string, args: string[], execArgv: string[]): Promise<RunningChild> {
  const child = fork(modulePath, args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map<number, (message: ChildMessage) => void>();
  let counter = 0;
  const ready = await new Promise<ReadyMessage>((resolveReady, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`${name} exited with code ${code} before it was ready`));
    child.once('exit', onExit);
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        child.off('exit', onExit);
        resolveReady(message);
        return;
      }
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      waiter?.(message);
    });
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${name} has no pid`);
  return {
    name,
    process: child,
    pid,
    url: ready.url,
    ready,
    nextId: () => ++counter,
    ask<Reply extends ChildMessage>(message: ParentMessage & { id: number }): Promise<Reply> {
      return new Promise((resolveReply, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name} did not answer ${message.type}`)), 30_000);
        pending.set(message.id, (reply) => {
          clearTimeout(timer);
          resolveReply(reply as Reply);
        });
        child.send(message);
      });
    },
    stop(): Promise<void> {
      if (child.exitCode !== null) return Promise.resolve();
      return new Promise((resolveStop) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolveStop();
        });
        child.send({ type: 'stop' } satisfies ParentMessage);
      });
    },
  };
}

export interface ProcessStatus {
  /** Resident set size now, bytes (VmRSS). */
  residentBytes: number;
  /** Peak resident set size since the process started, bytes (VmHWM). */
  peakResidentBytes: number;
}

/** Read from the parent, so the reading costs the child nothing and covers all of its memory. */
export function readProcessStatus(pid: number): ProcessStatus {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kilobytes = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
    if (!match?.[1]) throw new Error(`no ${field} in /proc/${pid}/status`);
    return Number(match[1]) * 1024;
  };
  return { residentBytes: kilobytes('VmRSS'), peakResidentBytes: kilobytes('VmHWM') };
}

/**
 * Starts the process's VmHWM afresh from its RSS now (Linux: writing 5 to /proc/<pid>/clear_refs), so
 * a later reading is the peak of what ran in between and not of an earlier phase.
 */
export function resetPeakResident(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system) the process has used so far, milliseconds, from /proc/<pid>/stat. */
export function readProcessCpuMilliseconds(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const userTicks = Number(fields[11]);
  const systemTicks = Number(fields[12]);
  return ((userTicks + systemTicks) * 1000) / CLOCK_TICKS_PER_SECOND;
}
