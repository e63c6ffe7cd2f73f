import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What a test file creates outside itself, undone when its process ends, on every path: a passing
 * run, a failed assertion, a timeout, or the runner stopping the file. Each test file runs in a
 * process of its own, so the process's 'exit' is the last moment that is always reached.
 */
const temporaryFolders = new Set<string>();
const children = new Set<ChildProcess>();
const groupLeaders = new WeakSet<ChildProcess>();

function cleanUp(): void {
  for (const child of children) stopChildNow(child);
  for (const folder of temporaryFolders) rmSync(folder, { recursive: true, force: true });
}
process.once('exit', cleanUp);
// scripts/run-tests.mjs stops a file over its time limit with SIGTERM; without a handler the process
// would die without 'exit', leaving behind every process group this file started.
process.once('SIGTERM', () => {
  cleanUp();
  process.exit(143);
});

/** A new empty folder under the system temp folder, removed when the test process exits. */
export function makeTempDir(prefix: string): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  temporaryFolders.add(folder);
  return folder;
}

/** Removes a temp folder now (it is also forgotten by the exit cleanup). */
export function removeTempDir(folder: string): void {
  temporaryFolders.delete(folder);
  rmSync(folder, { recursive: true, force: true });
}

/**
 * Registers a started process to be killed when the test process exits. A child spawned with
 * `detached: true` leads its own process group; the whole group is killed, so what it started in
 * turn (npm → sh → node, codex → its tools) goes too.
 */
export function trackChild<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function stopChildNow(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    if (groupLeaders.has(child)) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    // already gone
  }
}


/** As trackChild, for a child spawned with `detached: true`: its whole process group is killed. */
export function trackProcessGroup<T extends ChildProcess>(child: T): T {
  groupLeaders.add(child);
  return trackChild(child);
}

/**
 * Whether a process of the group `groupId` is still running. Zombies do not count: in a container
 * whose first process does not reap orphans, a finished grandchild stays a zombie for good.
 */
function groupIsRunning(groupId: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the command name, which is in parentheses and may itself contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === groupId && fields[0] !== 'Z') return true;
  }
  return false;
}

/** Resolves once every process of the group led by `pid` has ended; rejects after `timeoutMs`. */
export async function waitForProcessGroupExit(pid: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (groupIsRunning(pid)) {
    if (Date.now() > deadline) throw new Error(`process group ${pid} still has processes after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
