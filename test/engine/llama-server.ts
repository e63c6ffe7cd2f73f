/**
 * The real-engine tier's access to a llama.cpp `llama-server` build and its models.
 *
 * The kit is a folder named by the environment variable `FREEFORM_BRIDGE_ENGINE_KIT` with the layout
 * `bin/llama-server`, `models/tiny-hermes.gguf` (a Qwen2.5 template: Hermes JSON tool calls) and
 * `models/tiny-qwen3coder.gguf` (the Qwen3-Coder template: XML tool calls). It is the only place the
 * tests read outside the repository. Without the variable the tier does not run, and says so with a
 * failing test rather than a silent pass.
 *
 * Every server started here runs in its own process group and is killed on every path: by `stop()`
 * from an `after` hook, and by a `process.on('exit')` handler when a test file ends any other way.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { findFreePort } from '../support/bridge-harness.ts';

export const ENGINE_KIT_VARIABLE = 'FREEFORM_BRIDGE_ENGINE_KIT';

export type ToolCallFormat = 'hermes' | 'qwen3coder';

export const TOOL_CALL_FORMATS: readonly ToolCallFormat[] = ['hermes', 'qwen3coder'];

export interface EngineKit {
  /** The folder the variable names (read only; nothing is written there). */
  folder: string;
  binary: string;
  model(format: ToolCallFormat): string;
}

export type EngineKitLookup = { kit: EngineKit; missing: null } | { kit: null; missing: string };

const temporaryCopies: string[] = [];
const runningServers = new Set<ChildProcess>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

function killEverything(): void {
  for (const child of runningServers) killGroup(child, 'SIGKILL');
  for (const folder of temporaryCopies) rmSync(folder, { recursive: true, force: true });
}

// The last resort: a test file that ends on an uncaught error still leaves no server behind.
process.on('exit', killEverything);
// The servers run in their own process groups, so a Ctrl-C or the runner's SIGTERM never reaches them:
// kill them, then let the signal do what it would have done (the listener is gone once it ran).
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killEverything();
    process.kill(process.pid, signal);
  });
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

let lookup: EngineKitLookup | null = null;

/** Finds the kit, or says plainly why the tier cannot run. */
export function findEngineKit(): EngineKitLookup {
  if (lookup !== null) return lookup;
  const named = process.env[ENGINE_KIT_VARIABLE];
  if (named === undefined || named.trim() === '') {
    lookup = {
      kit: null,
      missing: `the real-engine tier did NOT run: ${ENGINE_KIT_VARIABLE} is not set (point it at a folder with bin/llama-server, models/tiny-hermes.gguf and models/tiny-qwen3coder.gguf)`,
    };
    return lookup;
  }
  const given = resolve(named);
  const required = ['bin/llama-server', 'models/tiny-hermes.gguf', 'models/tiny-qwen3coder.gguf'];
  const absent = required.filter((relative) => !existsSync(join(given, relative)));
  if (absent.length > 0) {
    lookup = { kit: null, missing: `the real-engine tier did NOT run: ${ENGINE_KIT_VARIABLE}=${given} lacks ${absent.join(', ')}` };
    return lookup;
  }
  let folder = given;
  if (!isExecutable(join(given, 'bin', 'llama-server'))) {
    // A copy that lost its run bit (or a read-only mount): run a private copy, removed at exit.
    folder = mkdtempSync(join(tmpdir(), 'freeform-bridge-engine-kit-'));
    temporaryCopies.push(folder);
    cpSync(given, folder, { recursive: true });
    chmodSync(join(folder, 'bin', 'llama-server'), 0o755);
  }
  lookup = {
    kit: {
      folder,
      binary: join(folder, 'bin', 'llama-server'),
      model: (format) => join(folder, 'models', `tiny-${format}.gguf`),
    },
    missing: null,
  };
  return lookup;
}

/** A missing kit never counts as a pass: one failing test that says why the tier did not run. */
export function reportMissingEngineKit(title: string, reason: string): void {
  console.error(reason);
  describe(title, () => {
    it('did not run', () => assert.fail(reason));
  });
}

export interface LlamaServerOptions {
  format: ToolCallFormat;
  /** Context size in tokens (`-c`); Codex's own requests need about 32768. */
  contextSize?: number;
  /** Number of slots (`-np`); the server's default when absent. */
  slots?: number;
  /** Resolve as soon as the process is spawned instead of waiting for /health 200. */
  waitUntilReady?: boolean;
  /** More llama-server arguments after the usual ones (e.g. `--chat-template chatml`, `--no-jinja`). */
  extraArguments?: readonly string[];
}

export interface RunningLlamaServer {
  format: ToolCallFormat;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** `http://127.0.0.1:PORT/v1`, what the bridge is pointed at. */
  backendUrl: string;
  pid: number;
  /** What the server printed (its log), for assertion messages. */
  output(): string;
  waitUntilHealthy(): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process is gone. */
  stop(): Promise<void>;
}

const HEALTH_DEADLINE_MS = 20_000;

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolvePromise) => setTimeout(resolvePromise, milliseconds));
}

export async function startLlamaServer(kit: EngineKit, options: LlamaServerOptions): Promise<RunningLlamaServer> {
  const port = await findFreePort();
  const serverArguments = [
    '-m',
    kit.model(options.format),
    '--jinja',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '-c',
    String(options.contextSize ?? 8192),
    '-t',
    '2',
    ...(options.slots === undefined ? [] : ['-np', String(options.slots)]),
    ...(options.extraArguments ?? []),
  ];
  const child = spawn(kit.binary, serverArguments, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  runningServers.add(child);
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolvePromise) => {
    child.once('exit', () => {
      runningServers.delete(child);
      resolvePromise();
    });
  });
  await new Promise<void>((resolvePromise, reject) => {
    child.once('spawn', resolvePromise);
    child.once('error', reject);
  });
  const origin = `http://127.0.0.1:${port}`;

  const stop = async (): Promise<void> => {
    killGroup(child, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  const waitUntilHealthy = async (): Promise<void> => {
    const deadline = Date.now() + HEALTH_DEADLINE_MS;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`llama-server exited before it was healthy:\n${output.slice(-4_000)}`);
      const status = await fetch(`${origin}/health`).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) return;
      await sleep(50);
    }
    await stop();
    throw new Error(`llama-server was not healthy after ${HEALTH_DEADLINE_MS} ms:\n${output.slice(-4_000)}`);
  };

  const server: RunningLlamaServer = {
    format: options.format,
    origin,
    backendUrl: `${origin}/v1`,
    pid: child.pid ?? -1,
    output: () => output,
    waitUntilHealthy,
    stop,
  };
  if (options.waitUntilReady !== false) {
    try {
      await waitUntilHealthy();
    } catch (error) {
      await stop();
      throw error;
    }
  }
  return server;
}

export interface SlotState {
  id: number;
  is_processing: boolean;
}

/** The server's slots (`GET /slots`, on by default in this build). */
export async function readSlots(server: RunningLlamaServer): Promise<SlotState[]> {
  const response = await fetch(`${server.origin}/slots`);
  if (response.status !== 200) throw new Error(`GET /slots answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as SlotState[];
}

/** Polls until `predicate` holds; fails with `what` after `limitMs` (a bound, not a speed check). */
export async function waitFor(what: string, predicate: () => Promise<boolean>, limitMs = 15_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await sleep(20);
  }
  throw new Error(`gave up waiting for ${what} after ${limitMs} ms`);
}
