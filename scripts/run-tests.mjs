// Runs node's test runner over test tiers, one process group per test file, each with a time limit.
//
// Why not one `node --test` over every file: a file that hangs (a process it started and never
// stopped, a server left listening) then holds the whole run with no word of which file it is. Here
// each file runs alone in a process group of its own; a file over its limit is stopped with everything
// it started and reported by name, and whatever a file leaves running after it ends is killed and
// reported as a failure. Node 20's `--test` does not expand globs itself, so the files are collected here.
//
// usage: node scripts/run-tests.mjs [--file-timeout-seconds N] <test folder or file>...
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';

const DEFAULT_FILE_TIMEOUT_SECONDS = 600;
/** After SIGTERM, a file gets this long to stop its own children (test/support/cleanup.ts) before SIGKILL. */
const TERM_GRACE_MS = 5_000;

const args = process.argv.slice(2);
let fileTimeoutSeconds = DEFAULT_FILE_TIMEOUT_SECONDS;
const timeoutFlag = args.indexOf('--file-timeout-seconds');
if (timeoutFlag !== -1) {
  fileTimeoutSeconds = Number(args[timeoutFlag + 1]);
  args.splice(timeoutFlag, 2);
  if (!Number.isFinite(fileTimeoutSeconds) || fileTimeoutSeconds <= 0) {
    console.error('run-tests: --file-timeout-seconds needs a positive number');
    process.exit(2);
  }
}
if (args.length === 0) {
  console.error('usage: node scripts/run-tests.mjs [--file-timeout-seconds N] <test folder or file>...');
  process.exit(2);
}

function collect(path) {
  if (!statSync(path).isDirectory()) return path.endsWith('.test.ts') ? [path] : [];
  return readdirSync(path).flatMap((entry) => collect(join(path, entry)));
}

const files = args.flatMap(collect).sort();
if (files.length === 0) {
  console.error(`run-tests: no *.test.ts files under ${args.join(', ')}`);
  process.exit(1);
}

/** Processes of the group `groupId` that are still running (zombies excluded), read from /proc. */
function runningInGroup(groupId) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === groupId && fields[0] !== 'Z') found.push(`${entry} ${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}`);
  }
  return found;
}

function killGroup(groupId, signal) {
  try {
    process.kill(-groupId, signal);
  } catch {
    // nothing left in the group
  }
}

/** The spec reporter's closing counts ("ℹ pass 12"), or null when the file never got that far. */
function readCounts(output) {
  const count = (label) => {
    const match = new RegExp(`^ℹ ${label} (\\d+)$`, 'm').exec(output);
    return match ? Number(match[1]) : null;
  };
  const passed = count('pass');
  const failed = count('fail');
  if (passed === null || failed === null) return null;
  return { passed, failed: failed + (count('cancelled') ?? 0), skipped: (count('skipped') ?? 0) + (count('todo') ?? 0) };
}

function runFile(file) {
  return new Promise((resolve) => {
    const startedAt = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid, 'SIGTERM');
      setTimeout(() => killGroup(child.pid, 'SIGKILL'), TERM_GRACE_MS).unref();
    }, fileTimeoutSeconds * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const leftovers = runningInGroup(child.pid);
      if (leftovers.length > 0) killGroup(child.pid, 'SIGKILL');
      const problems = [];
      if (timedOut) problems.push(`exceeded its time limit of ${fileTimeoutSeconds} s: stopped it and everything it started`);
      if (leftovers.length > 0) problems.push(`left processes running after it ended (now killed): ${leftovers.join(', ')}`);
      const counts = readCounts(output);
      if (counts === null && !timedOut) problems.push(`ended (exit ${code ?? signal}) without the test runner's summary`);
      if (counts !== null && counts.failed === 0 && code !== 0 && !timedOut) problems.push(`exited with ${code ?? signal}`);
      resolve({ file, output, counts, problems, seconds: (Date.now() - startedAt) / 1000 });
    });
  });
}

const concurrency = Math.max(1, availableParallelism() - 1);
const totals = { passed: 0, failed: 0, skipped: 0 };
const failedFiles = [];
let next = 0;
async function worker() {
  while (next < files.length) {
    const result = await runFile(files[next++]);
    process.stdout.write(`\n▶ ${result.file} (${result.seconds.toFixed(1)} s)\n${result.output}`);
    if (result.counts) {
      totals.passed += result.counts.passed;
      totals.failed += result.counts.failed;
      totals.skipped += result.counts.skipped;
    }
    if (result.problems.length > 0) {
      totals.failed += 1;
      for (const problem of result.problems) process.stdout.write(`✖ ${result.file} ${problem}\n`);
    }
    if (result.problems.length > 0 || (result.counts?.failed ?? 0) > 0) failedFiles.push(result.file);
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));

if (failedFiles.length > 0) process.stdout.write(`\nFiles with failures:\n${failedFiles.map((file) => `  ${file}`).join('\n')}\n`);
process.stdout.write(`\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
process.exit(totals.failed > 0 ? 1 : 0);
