import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { makeBundleAscii } from '../../scripts/ascii-bundle.mjs';
import { Agent, request } from 'undici';
import type { ExchangeOutcome, TrafficEvent } from '../../src/core/traffic-event.ts';
import { startBridgeServer, type RunningBridge } from '../../src/server/start-server.ts';
import { disconnectAndWait, forkSoakBridge, readyUrl, startSoakBackend } from './soak-backend.ts';
import { createRequestBody } from './soak-workload.ts';
import { CHECKS, DEFAULT_SEED, exchange, runSessions, SESSIONS, warmUp } from './soak-sessions.ts';
import type { GcProfileMessage } from './soak-bridge-child.ts';
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
/** The second run, against the bridge in a process of its own for its RSS alone (default 20 s). */
const SOAK_MEMORY_SECONDS = Number(process.env.SOAK_MEMORY_SECONDS ?? 20);
/**
 * The bridge's memory budget through this load: the performance target of 100 MB of RSS, set and
 * measured on Node 20. Measured peaks (Node 20, 2 cores): 92.3–94.1 MB in thirteen runs. Before V8
 * stopped compiling undici's HTTP parser with TurboFan (dedicated-process.ts), three runs of 29
 * peaked at 97–103 MB; see the note at the assertion.
 */
const MAX_BRIDGE_PEAK_RSS_BYTES = 100 * 1024 * 1024;
/**
 * About 44 MB of a Node 20 process's RSS is Node's own code, mapped from its binary; Node 22's binary
 * maps about 51 MB, Node 24's about 53 MB. What the bridge allocates is the rest, its anonymous memory,
 * and the target leaves it 56 MB on every Node: 100 MB less Node 20's own. Measured peaks: 50.5 MB
 * with Node 20 (49.9 in a second run), 48.1 MB with Node 22, 49.0–51.7 MB with Node 24.
 */
const MAX_BRIDGE_PEAK_ANONYMOUS_BYTES = MAX_BRIDGE_PEAK_RSS_BYTES - 44 * 1024 * 1024;
/** The Node whose RSS the target was set on; the CLI runs on 20.18.1 and newer (package.json engines). */
const TARGET_NODE_MAJOR = 20;
/** Exchanges before the young-generation measurement (code paths loaded and optimised), and measured. */
const PROMOTION_WARMUP_EXCHANGES = 300;
const PROMOTION_EXCHANGES = 1500;
const MAX_PROMOTED_BYTES_PER_EXCHANGE = 2048;
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
  await build({ entryPoints: [resolve(process.cwd(), 'test/load/soak-bridge-child.ts')], outfile: bundle, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'error' });
  makeBundleAscii(bundle);
  return trackChild(forkSoakBridge(bundle, backendUrl));
}

/** Sends `message` and waits (guard: 10 s) for the child's answer of type `answerType`. */
function askChild<Answer extends { type: string }>(child: ChildProcess, message: { type: string }, answerType: Answer['type']): Promise<Answer> {
  return new Promise<Answer>((resolveAnswer, reject) => {
    const timer = setTimeout(() => reject(new Error(`the soak bridge did not answer ${message.type}`)), 10_000);
    const onMessage = (answer: Answer): void => {
      if (answer.type !== answerType) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolveAnswer(answer);
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

describe('soak: 16 concurrent Codex sessions with injected faults', { timeout: (SOAK_SECONDS + SOAK_MEMORY_SECONDS + 150) * 1000 }, () => {
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
      // An idle bridge holds its listening socket and nothing else (no pooled sockets, no timers).
      const idleBridge = { ...beforeBridge, resources: { ...beforeBridge.resources, TCPServerWrap: (beforeBridge.resources.TCPServerWrap ?? 0) + 1 }, fileDescriptors: beforeBridge.fileDescriptors + 1 };
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

  it('keeps the bridge process\'s memory bounded through the same load, measured on its own', async (context) => {
    const backend = await startSoakBackend();
    const child = await forkBridgeProcess(backend.url);
    const samples: number[] = [];
    let sampler: NodeJS.Timeout | null = null;
    try {
      const bridgeUrl = await readyUrl(child, 'soak bridge');
      const pid = child.pid as number;
      await warmUp(bridgeUrl);
      // The peak is the load's, not the start's: Linux resets VmHWM to the current RSS on "5".
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      let peakAnonymous = 0;
      let fileAtPeakAnonymous = 0;
      sampler = setInterval(() => {
        samples.push(readResidentBytes(pid, 'VmRSS'));
        const anonymous = readResidentBytes(pid, 'RssAnon');
        if (anonymous > peakAnonymous) [peakAnonymous, fileAtPeakAnonymous] = [anonymous, readResidentBytes(pid, 'RssFile')];
      }, 100);
      const { sent, problems, elapsedSeconds } = await runSessions(bridgeUrl, SOAK_MEMORY_SECONDS, SEED);
      clearInterval(sampler);
      sampler = null;
      assert.deepEqual(problems, [], 'every exchange ends as its scenario requires');
      const peak = readResidentBytes(pid, 'VmHWM');
      const total = [...sent.values()].reduce((sum, count) => sum + count, 0);
      samples.sort((left, right) => left - right);
      const median = samples[Math.floor(samples.length / 2)] ?? 0;
      context.diagnostic(`bridge process: ${total} requests in ${elapsedSeconds.toFixed(1)} s; RSS median ${megabytes(median)}, peak (VmHWM) ${megabytes(peak)} over ${samples.length} samples; anonymous memory at most ${megabytes(peakAnonymous)} (file-backed then ${megabytes(fileAtPeakAnonymous)}); Node ${process.version}`);
      assert.ok(samples.length > 10, 'the RSS was sampled through the load');
      // Of this, about 44 MB is Node 20's own code mapped from its binary; most of the rest is V8's
      // heap: its new space, held at 16 MB as `serve` holds it (dedicated-process.ts), and an old
      // generation that grows with exchanges promoted while in flight until V8's first full GC (about
      // 10 MB at the start, 13–16 MB by the end of these 20 s; a 60 s run peaks near 109 MB for that
      // reason); glibc's main arena about 5 MB. The bounds catch a leak, a per-exchange buffer that
      // grows, a module that costs megabytes at load (zod's default API cost about 10 MB;
      // schema/zod.ts) or a compile that leaves its memory behind (dedicated-process.ts); the test
      // below catches ended exchanges kept through GCs. The anonymous memory is sampled every 100 ms;
      // on the target's Node the peak RSS (VmHWM) misses nothing in between.
      assert.ok(peakAnonymous <= MAX_BRIDGE_PEAK_ANONYMOUS_BYTES, `the bridge's anonymous memory reached ${megabytes(peakAnonymous)}`);
      const nodeMajor = Number(process.versions.node.split('.')[0]);
      if (nodeMajor === TARGET_NODE_MAJOR) assert.ok(peak <= MAX_BRIDGE_PEAK_RSS_BYTES, `the bridge's peak RSS was ${megabytes(peak)}`);
      else context.diagnostic(`Node ${nodeMajor} maps ${megabytes(fileAtPeakAnonymous)} of its own code where Node ${TARGET_NODE_MAJOR} maps about 44 MB: the RSS bound of ${megabytes(MAX_BRIDGE_PEAK_RSS_BYTES)} applies on Node ${TARGET_NODE_MAJOR}, the anonymous memory's everywhere`);
    } finally {
      if (sampler) clearInterval(sampler);
      await disconnectAndWait(child);
      await backend.stop();
    }
  });

  it('leaves the young-generation GC nothing of an ended exchange to move to the old generation', async (context) => {
    const backend = await startSoakBackend();
    const child = await forkBridgeProcess(backend.url);
    try {
      const bridgeUrl = await readyUrl(child, 'soak bridge');
      const agent = new Agent();
      const run = async (count: number): Promise<void> => {
        for (let turn = 0; turn < count; turn++) {
          const scenario = turn % 2 === 0 ? 'text' : 'custom-call';
          const stream = turn % 4 < 2;
          const problem = CHECKS[scenario].check(await exchange(agent, bridgeUrl, scenario, stream, createRequestBody(scenario, stream, 1, turn)), stream);
          assert.equal(problem, null, `turn ${turn} ${scenario} (${stream ? 'stream' : 'JSON'})`);
        }
      };
      try {
        await run(PROMOTION_WARMUP_EXCHANGES);
        await askChild(child, { type: 'gc-profile-start' }, 'gc-profile-started');
        await run(PROMOTION_EXCHANGES);
        const profile = await askChild<GcProfileMessage>(child, { type: 'gc-profile-stop' }, 'gc-profile');
        const perExchange = profile.promotedBytes / PROMOTION_EXCHANGES;
        context.diagnostic(`${PROMOTION_EXCHANGES} exchanges one after another: ${profile.scavenges} young-generation GCs moved ${megabytes(profile.promotedBytes)} to the old generation (${perExchange.toFixed(0)} bytes per exchange); full GCs: ${profile.fullGcs}`);
        assert.ok(profile.scavenges >= 5, `only ${profile.scavenges} young-generation GCs ran: too few to measure`);
        // One exchange at a time, each over in about a millisecond: nothing of one is alive at the next
        // GC unless something old still points at it. Measured (Node 20): about 400 bytes per exchange;
        // 7.4 kB when each response sink's getters lived in a hidden class of its own (response-sink.ts).
        assert.ok(perExchange < MAX_PROMOTED_BYTES_PER_EXCHANGE, `the young-generation GCs moved ${perExchange.toFixed(0)} bytes per ended exchange to the old generation`);
      } finally {
        await agent.close();
      }
    } finally {
      await disconnectAndWait(child);
      await backend.stop();
    }
  });
});
