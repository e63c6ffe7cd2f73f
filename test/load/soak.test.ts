import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { makeBundleAscii } from '../../scripts/ascii-bundle.mjs';
import { Agent, request } from 'undici';
import type { ExchangeOutcome, TrafficEvent } from '../../src/core/traffic/traffic-event.ts';
import { startBridgeServer, type RunningBridge } from '../../src/server/start-server.ts';
import { disconnectAndWait, forkSoakBridge, readyUrl, startSoakBackend } from '../../harness/soak-backend.ts';
import { DEFAULT_SEED, runSessions, SESSIONS, warmUp } from '../../harness/soak-sessions.ts';
import { makeTempDir, trackChild } from '../support/cleanup.ts';

/*
 * Load: a bounded soak on loopback. 16 concurrent simulated Codex sessions send a mix of
 * streaming and JSON requests for SOAK_SECONDS (default 45), with faults injected by the backend
 * (mid-stream errors, socket cuts, 429/503, context overflow, headers that never come, truncated
 * calls) and by the clients (disconnects during prefill, malformed JSON). Afterwards: every exchange
 * ended as its scenario requires, every one is in the JSONL log and the panel feed, the backend saw
 * every abort, no socket or timer is left over, the heap is back to its baseline, and /healthz answers.
 * The figures go to the test's diagnostics.
 *
 * The bridge runs in this process (so its handles and timers are visible); the backend runs in a child.
 */

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 45);
/**
 * The second run, against the bridge bundled in a process of its own, as a user runs it (default 20 s).
 * Its memory (peak RSS through this load) and what its GCs promote of ended exchanges are figures of
 * `npm run bench` (bench/soak-memory.ts), not of this test: a test asserts behaviour, never a speed or
 * a size that a busy machine or another Node can move.
 */
const SOAK_PROCESS_SECONDS = Number(process.env.SOAK_MEMORY_SECONDS ?? 20);
const SEED = Number(process.env.SOAK_SEED ?? DEFAULT_SEED);

// ---------- measuring ----------

function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
}

interface ResourceSnapshot {
  resources: Record<string, number>;
  fileDescriptors: number;
  rssBytes: number;
  heapUsedBytes: number;
}

function takeSnapshot(): ResourceSnapshot {
  collectGarbage();
  const resources: Record<string, number> = {};
  for (const name of process.getActiveResourcesInfo()) resources[name] = (resources[name] ?? 0) + 1;
  const memory = process.memoryUsage();
  return { resources, fileDescriptors: readdirSync('/proc/self/fd').length, rssBytes: memory.rss, heapUsedBytes: memory.heapUsed };
}

/** A process's resident memory now (VmRSS) or at its peak so far (VmHWM), from /proc. */
function readResidentBytes(pid: number | 'self', field: 'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`${field} is missing from /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

function describeResources(snapshot: ResourceSnapshot): string {
  return Object.entries(snapshot.resources)
    .sort(([left], [right]) => left.localeCompare(right))
    .map(([name, count]) => `${name}×${count}`)
    .join(' ');
}

/** Waits (guard: 15 s) until the handles match `target`: pooled keep-alive sockets close within ≈5 s of idling. */
async function waitForResources(target: ResourceSnapshot, what: string): Promise<ResourceSnapshot> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const snapshot = takeSnapshot();
    if (describeResources(snapshot) === describeResources(target) && snapshot.fileDescriptors === target.fileDescriptors) return snapshot;
    if (Date.now() > deadline) {
      assert.fail(`${what}: handles ${describeResources(snapshot)} (fds ${snapshot.fileDescriptors}) never returned to ${describeResources(target)} (fds ${target.fileDescriptors})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** The bridge in a process of its own (soak-bridge-child.ts), bundled like dist/cli.js: what it holds is the bridge's as a user runs it, without a TypeScript loader. */
async function forkBridgeProcess(backendUrl: string): Promise<ChildProcess> {
  const bundle = join(makeTempDir('freeform-bridge-soak-child-'), 'soak-bridge-child.cjs');
  await build({ entryPoints: [resolve(process.cwd(), 'harness/soak-bridge-child.ts')], outfile: bundle, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'error' });
  makeBundleAscii(bundle);
  return trackChild(forkSoakBridge(bundle, backendUrl));
}

describe('soak: 16 concurrent Codex sessions with injected faults', { timeout: (SOAK_SECONDS + SOAK_PROCESS_SECONDS + 150) * 1000 }, () => {
  it('accounts for every exchange and leaves no socket, timer or memory behind', async (context) => {
    const backend = await startSoakBackend();
    const logFile = join(makeTempDir('freeform-bridge-soak-'), 'exchanges.jsonl');
    const panelOutcomes = new Map<string, number>();
    const countOutcome = (event: TrafficEvent): void => {
      const outcome = event.type === 'exchange-end' ? event.outcome : event.type === 'exchange-rejected' ? 'rejected' : null;
      if (outcome !== null) panelOutcomes.set(outcome, (panelOutcomes.get(outcome) ?? 0) + 1);
    };
    let bridge: RunningBridge | null = null;
    try {
      const beforeBridge = takeSnapshot();
      bridge = await startBridgeServer({
        backendUrl: backend.url,
        logFile,
        onTraffic: countOutcome,
        keepaliveSeconds: 1,
        // Short enough for a soak, long enough that a loaded machine never mistakes the 1.3 s prefill for it.
        upstreamIdleTimeoutSeconds: 5,
      });
      const bridgeUrl = bridge.url;

      // Warm-up: load the code paths once, then let pooled sockets close before the baseline.
      await warmUp(bridgeUrl);
      // An idle bridge holds its listening socket and its log file's one open stream, nothing else (no
      // pooled sockets, no timers).
      const idleBridge = { ...beforeBridge, resources: { ...beforeBridge.resources, TCPServerWrap: (beforeBridge.resources.TCPServerWrap ?? 0) + 1 }, fileDescriptors: beforeBridge.fileDescriptors + 2 };
      const baseline = await waitForResources(idleBridge, 'after the warm-up');
      const backendBefore = await backend.stats();
      const panelBefore = [...panelOutcomes.values()].reduce((sum, count) => sum + count, 0);

      // ---- the load ----
      const { sent, expectedLogOutcomes, problems, streamed, keepalives, elapsedSeconds } = await runSessions(bridgeUrl, SOAK_SECONDS, SEED);
      const total = [...sent.values()].reduce((sum, count) => sum + count, 0);
      assert.deepEqual(problems, [], 'every exchange ends as its scenario requires');

      // ---- afterwards ----
      const afterLoad = await waitForResources(baseline, 'after the load');
      const peakResidentBytes = readResidentBytes('self', 'VmHWM');
      const healthAgent = new Agent();
      const health = await request(`${bridgeUrl}/healthz`, { dispatcher: healthAgent });
      assert.equal(health.statusCode, 200);
      assert.equal(((await health.body.json()) as { status: string }).status, 'ok');
      await healthAgent.close();

      const backendAfter = await backend.stats();
      const backendCalls = backendAfter.requests - backendBefore.requests;
      const backendAborts = backendAfter.aborted - backendBefore.aborted;
      const faults = total - (sent.get('text') ?? 0) - (sent.get('custom-call') ?? 0) - (sent.get('parallel-calls') ?? 0) - (sent.get('slow-chunks') ?? 0) - (sent.get('silent-prefill') ?? 0);
      // Every request but the malformed ones reached the backend; the bridge aborted exactly the calls of
      // the clients that walked away and of the backends that never sent their headers.
      assert.equal(backendCalls, total - (sent.get('malformed-json') ?? 0));
      assert.equal(backendAborts, (sent.get('client-abort') ?? 0) + (sent.get('headers-never') ?? 0));

      await bridge.close();
      bridge = null;
      const afterClose = await waitForResources(beforeBridge, 'after the bridge stopped');

      const records = readFileSync(logFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { exchangeId: string; outcome: ExchangeOutcome });
      const warmupRecords = panelBefore;
      const loadRecords = records.slice(warmupRecords);
      assert.equal(loadRecords.length, total, 'one JSONL line per exchange');
      assert.equal(new Set(records.map((record) => record.exchangeId)).size, records.length, 'exchange ids are unique');
      const loggedOutcomes = new Map<ExchangeOutcome, number>();
      for (const record of loadRecords) loggedOutcomes.set(record.outcome, (loggedOutcomes.get(record.outcome) ?? 0) + 1);
      assert.deepEqual(Object.fromEntries([...loggedOutcomes].sort()), Object.fromEntries([...expectedLogOutcomes].sort()));
      const panelTotal = [...panelOutcomes.values()].reduce((sum, count) => sum + count, 0) - panelBefore;
      assert.equal(panelTotal, total, 'the panel feed saw every exchange end');

      // The heap holds nothing per exchange: back to the warm baseline (allowing for allocator noise).
      const heapGrowth = afterLoad.heapUsedBytes - baseline.heapUsedBytes;
      assert.ok(heapGrowth < 16 * 1024 * 1024, `heap grew by ${megabytes(heapGrowth)} over the soak`);

      const figures = [
        `soak: ${SOAK_SECONDS} s, ${SESSIONS} sessions, ${total} requests in ${elapsedSeconds.toFixed(1)} s (${(total / elapsedSeconds).toFixed(0)}/s), ${streamed} streamed, ${total - streamed} JSON`,
        `faults injected: ${faults} (${[...sent].filter(([scenario]) => !['text', 'custom-call', 'parallel-calls', 'slow-chunks', 'silent-prefill'].includes(scenario)).map(([scenario, count]) => `${scenario} ${count}`).join(', ')})`,
        `log outcomes: ${JSON.stringify(Object.fromEntries([...loggedOutcomes].sort()))}; backend calls ${backendCalls}, aborted by the bridge ${backendAborts}; keepalives sent during prefills ${keepalives}`,
        `heap after GC: baseline ${megabytes(baseline.heapUsedBytes)} → after load ${megabytes(afterLoad.heapUsedBytes)}; RSS ${megabytes(baseline.rssBytes)} → ${megabytes(afterLoad.rssBytes)}, peak ${megabytes(peakResidentBytes)} (bridge and clients in one process)`,
        `handles: before the bridge [${describeResources(beforeBridge)}] fds ${beforeBridge.fileDescriptors}; idle bridge [${describeResources(baseline)}] fds ${baseline.fileDescriptors}; after load [${describeResources(afterLoad)}] fds ${afterLoad.fileDescriptors}; after stop [${describeResources(afterClose)}] fds ${afterClose.fileDescriptors}`,
      ];
      for (const line of figures) context.diagnostic(line);
    } finally {
      await bridge?.close();
      await backend.stop();
    }
  });

  it('serves the same load from the bundled bridge in a process of its own, every exchange as its scenario requires', async (context) => {
    const backend = await startSoakBackend();
    const child = await forkBridgeProcess(backend.url);
    try {
      const bridgeUrl = await readyUrl(child, 'soak bridge');
      await warmUp(bridgeUrl);
      const { sent, problems, elapsedSeconds } = await runSessions(bridgeUrl, SOAK_PROCESS_SECONDS, SEED);
      assert.deepEqual(problems, [], 'every exchange ends as its scenario requires');
      const total = [...sent.values()].reduce((sum, count) => sum + count, 0);
      assert.ok(total > 0, 'the sessions sent requests');
      context.diagnostic(`bridge process: ${total} requests in ${elapsedSeconds.toFixed(1)} s; Node ${process.version}`);
    } finally {
      await disconnectAndWait(child);
      await backend.stop();
    }
  });
});
