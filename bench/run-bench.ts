/**
 * `npm run bench`: the bridge against the project's mock backend on loopback, side by side with
 * direct Chat Completions calls in the same run (interleaved, so machine noise hits both sides).
 *
 *   direct = this process posts the lowered Chat request straight to the mock;
 *   bridge = this process posts the Responses request to the bridge, which posts to the same mock.
 *   added  = bridge − direct, per interleaved pair (p50/p99 of the differences).
 *
 * A third side, hop, is a reference: the lowered Chat request through a minimal Node proxy
 * (bench/children/floor-child.ts: parse, stringify, forward with undici, relay; no bridge logic) to the
 * same mock. It runs in the non-streaming (every size), time-to-first-delta and throughput phases,
 * interleaved with the other two (the order rotates through all six per iteration or round). It is
 * the yardstick of the targets: what the bridge adds (latency, CPU, lost throughput) is compared with
 * what the hop adds in the same run, since a bare Node proxy's cost on this machine is the floor.
 *
 * The bridge, the hop and the mock each run in a child process of their own, bundled like dist/cli.js,
 * so the bridge's CPU and memory are its alone: CPU time and RSS are read from /proc/<pid>/{stat,status} by
 * this process. For the memory figures the bridge child runs with --expose-gc and collects garbage
 * when asked over IPC (bench/children/bridge-child.ts), so "after" is live memory, not garbage that
 * V8 has simply not collected yet; the product has no such hook.
 *
 * Per-event latency is measured from the moment the mock wrote each event (its child timestamps its
 * writes on the system-wide monotonic clock) to the moment this process read it.
 *
 * Results go to bench/results/latest.json; the exit code is 0 even when a target is missed (this is
 * a report). Options: --quick (fewer iterations, for a fast look), --cpu-prof (V8 CPU profiles of the
 * bridge children in bench/results/profiles/, summarised by bench/summarize-profile.ts),
 * --no-validate (the mock skips its vLLM request validation).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseJson } from '../src/core/parse-json.ts';
import { LONG_ANSWER_EVENTS, type AnswerName } from './answers.ts';
import { bundleChildren, readProcessCpuMilliseconds, readProcessStatus, RESULTS_DIRECTORY, startChild, type RunningChild } from './child-process.ts';
import type { MemoryReply, WritesReply } from './child-protocol.ts';
import { buildExtensionHostDelayRows, measureExtensionHostDelay, type ExtensionHostDelayResult } from './extension-host-delay.ts';
import { buildSoakMemoryRows, measureSoakMemory, type SoakMemoryResult } from './soak-memory.ts';
import { lowerRequestBody, measureCalibration, measureCoreConversion, measureLiftPerEvent, measurePrefixReuse, type CoreTimings, type PrefixReuse } from './core-conversion.ts';
import { createClientAgent, postForText, postStreamTimed, postTimed, type Endpoint, type TimedStream } from './http-client.ts';
import { formatBytes, formatMegabytes, formatMilliseconds, renderTable, type ReportRow } from './report.ts';
import { roundSummary, summarize, threeSideOrder as rotateSides, type Summary } from './statistics.ts';
import { createCodexRequest, KILOBYTE, MEGABYTE } from './workloads.ts';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    'cpu-prof': { type: 'boolean' },
    'no-validate': { type: 'boolean' },
  },
});
const quick = flags.quick === true;

/** Iteration counts: bounded so the whole run stays under three minutes on a busy 2-core machine. */
const settings = {
  nonStreamPairs: { '50 kB': quick ? 150 : 600, '2 MB': quick ? 10 : 30, '10 MB': quick ? 4 : 8 },
  nonStreamWarmup: { '50 kB': 100, '2 MB': 4, '10 MB': 2 },
  firstDeltaPairs: quick ? 150 : 400,
  burstPairs: quick ? 6 : 20,
  pacedPairs: quick ? 1 : 2,
  throughputClients: 32,
  /** Short windows, alternating sides, so a busy moment of the machine does not land on one side only. */
  throughputWindowSeconds: quick ? 0.5 : 1,
  /**
   * Load on each side before its windows count. The bridge has more code for V8 to optimise than the
   * hop: after a 0.5 s warm-up its first window read 0.89 ms per request and the five after it
   * 0.58–0.75, where the hop's read 0.59 and then 0.49–0.50. bench/HISTORY.md has the
   * curve on fresh processes.
   */
  throughputWarmupSeconds: quick ? 0.5 : 3,
  throughputRounds: quick ? 4 : 6,
  memoryRequests: quick ? 100 : 500,
  /**
   * Target 4 (bench/soak-memory.ts): the soak test's load for `seconds`, and the faster reference load
   * per side, a warm-up then the measured seconds. --quick cuts the soak test's 20 s to 5.
   */
  soakMemory: { seconds: quick ? 5 : 20, warmupSeconds: quick ? 1 : 2 },
  memoryConcurrency: 4,
  coreIterations: { '50 kB': quick ? 100 : 400, '2 MB': quick ? 5 : 20, '10 MB': quick ? 3 : 8 },
  extensionHost: { sessionTurns: quick ? 3 : 6, streamingSessions: 8, streamingRounds: quick ? 1 : 2 },
} as const;

type SizeLabel = '50 kB' | '2 MB' | '10 MB';
const SIZES: ReadonlyArray<{ label: SizeLabel; bytes: number }> = [
  { label: '50 kB', bytes: 50 * KILOBYTE },
  { label: '2 MB', bytes: 2 * MEGABYTE },
  { label: '10 MB', bytes: 10 * MEGABYTE },
];

const runStartedAt = performance.now();
/** Seconds since the start of the run at which each phase began, for the JSON report. */
const phaseStarts: Record<string, number> = {};

function progress(text: string): void {
  const seconds = (performance.now() - runStartedAt) / 1000;
  phaseStarts[text] = Math.round(seconds * 10) / 10;
  process.stderr.write(`[bench ${seconds.toFixed(0).padStart(3)} s] ${text}\n`);
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, milliseconds));
}

// ---------- the sides of one workload ----------

interface Workload {
  label: string;
  /** The Responses request (to the bridge). */
  bridgeBody: Buffer;
  /** The lowered Chat request (to the mock directly): what the bridge itself would send upstream. */
  directBody: Buffer;
  requestBytes: number;
}

function createWorkload(label: string, targetBytes: number, answer: AnswerName, stream: boolean): Workload {
  const request = createCodexRequest({ targetBytes, label, answer, stream });
  const lowered = lowerRequestBody(request.text);
  // Non-streaming direct calls ask the backend for one JSON body, as a plain Chat client would.
  const chatRequest = stream ? lowered.chatRequest : { ...lowered.chatRequest, stream: false, stream_options: undefined };
  return { label, bridgeBody: Buffer.from(request.text), directBody: Buffer.from(JSON.stringify(chatRequest)), requestBytes: request.bytes };
}

interface Sides {
  direct: Endpoint;
  bridge: Endpoint;
  /** The reference minimal Node hop; it is sent the direct side's body (the lowered Chat request). */
  hop: Endpoint;
}

/** Runs `count` pairs after `warmup` unrecorded ones, alternating which side goes first. */
async function measurePairs<T>(count: number, warmup: number, direct: () => Promise<T>, bridge: () => Promise<T>): Promise<Array<{ direct: T; bridge: T }>> {
  const pairs: Array<{ direct: T; bridge: T }> = [];
  for (let index = 0; index < warmup + count; index++) {
    let directResult: T;
    let bridgeResult: T;
    if (index % 2 === 0) {
      directResult = await direct();
      bridgeResult = await bridge();
    } else {
      bridgeResult = await bridge();
      directResult = await direct();
    }
    if (index >= warmup) pairs.push({ direct: directResult, bridge: bridgeResult });
  }
  return pairs;
}

type Side = 'direct' | 'bridge' | 'hop';

const SIDES: readonly [Side, Side, Side] = ['direct', 'bridge', 'hop'];

/** The order of the sides per iteration (or throughput round): statistics.ts's rotation. */
function threeSideOrder(index: number): readonly [Side, Side, Side] {
  return rotateSides(SIDES, index);
}

/** Runs `count` triples after `warmup` unrecorded ones, rotating the order of the sides. */
async function measureTriples<T>(count: number, warmup: number, calls: Record<Side, () => Promise<T>>): Promise<Array<Record<Side, T>>> {
  const triples: Array<Record<Side, T>> = [];
  for (let index = 0; index < warmup + count; index++) {
    const results: Partial<Record<Side, T>> = {};
    for (const side of threeSideOrder(index)) results[side] = await calls[side]();
    if (index >= warmup) triples.push(results as Record<Side, T>);
  }
  return triples;
}

function expectOk(status: number, what: string): void {
  if (status !== 200) throw new Error(`${what} answered HTTP ${status}`);
}

interface AddedLatency {
  direct: Summary;
  bridge: Summary;
  /** Per pair: bridge − direct. */
  added: Summary;
}

function compare(directValues: number[], bridgeValues: number[]): AddedLatency {
  return {
    direct: summarize(directValues),
    bridge: summarize(bridgeValues),
    added: summarize(bridgeValues.map((value, index) => value - (directValues[index] as number))),
  };
}

/** The reference hop's figures for one workload (informational; no target). */
interface HopReference {
  hop: Summary;
  /** Per interleaved triple: hop − direct, against the same direct calls the bridge is compared with. */
  added: Summary;
}

function compareTriples(triples: ReadonlyArray<Record<Side, number>>): { latency: AddedLatency; hop: HopReference } {
  const direct = triples.map((triple) => triple.direct);
  const hop = triples.map((triple) => triple.hop);
  return {
    latency: compare(direct, triples.map((triple) => triple.bridge)),
    hop: { hop: summarize(hop), added: summarize(hop.map((value, index) => value - (direct[index] as number))) },
  };
}

// ---------- checks before timing anything ----------

async function checkAnswers(sides: Sides, workloads: { nonStream: Workload; stream: Workload; long: Workload }): Promise<Buffer> {
  const direct = await postForText(sides.direct, workloads.nonStream.directBody);
  expectOk(direct.status, `direct check (${direct.text.slice(0, 300)})`);
  const bridge = await postForText(sides.bridge, workloads.nonStream.bridgeBody);
  expectOk(bridge.status, `bridge check (${bridge.text.slice(0, 300)})`);
  const parsed = parseJson(bridge.text);
  const output = parsed.success ? (parsed.value as { status?: string; output?: Array<{ type?: string; name?: string }> }) : null;
  if (output?.status !== 'completed' || !output.output?.some((item) => item.type === 'custom_tool_call' && item.name === 'apply_patch')) {
    throw new Error(`the bridge did not lift apply_patch into a custom_tool_call: ${bridge.text.slice(0, 500)}`);
  }
  const streamed = await postForText(sides.bridge, workloads.stream.bridgeBody);
  if (!streamed.text.includes('"type":"response.completed"') || !streamed.text.includes('"type":"custom_tool_call"')) {
    throw new Error(`the bridge's stream did not complete with a custom_tool_call: ${streamed.text.slice(-500)}`);
  }
  const long = await postStreamTimed(sides.bridge, workloads.long.bridgeBody, 'bridge', true);
  const missing = long.tokenArrivals.filter((value) => Number.isNaN(value)).length;
  if (missing > 0) throw new Error(`the bridge's long stream lost ${missing} of ${LONG_ANSWER_EVENTS} events`);
  // The backend's own stream for the short answer, kept for the core lift benchmark.
  const answer = await postForText(sides.direct, workloads.stream.directBody);
  expectOk(answer.status, 'direct stream check');
  // The reference hop must relay the backend's answers whole, or its timings would mean nothing.
  // (Ids in the mock's answers are random, so the check is on shape, not bytes.)
  const hop = await postForText(sides.hop, workloads.nonStream.directBody);
  expectOk(hop.status, `hop check (${hop.text.slice(0, 300)})`);
  const hopParsed = parseJson(hop.text);
  const hopChoices = hopParsed.success ? (hopParsed.value as { choices?: unknown[] }).choices : undefined;
  if (!Array.isArray(hopChoices) || hopChoices.length === 0) throw new Error(`the hop did not relay a Chat completion: ${hop.text.slice(0, 500)}`);
  const hopStream = await postForText(sides.hop, workloads.stream.directBody);
  expectOk(hopStream.status, 'hop stream check');
  if (!/"content":"[^"]/.test(hopStream.text) || !hopStream.text.trimEnd().endsWith('data: [DONE]')) {
    throw new Error(`the hop did not relay the whole Chat stream: ${hopStream.text.slice(-500)}`);
  }
  return Buffer.from(answer.text);
}

// ---------- phases ----------

/** A non-streaming phase, with the reference hop as a third side. */
async function measureNonStreamWithHop(sides: Sides, workload: Workload, count: number, warmup: number): Promise<{ latency: AddedLatency; hop: HopReference }> {
  const triples = await measureTriples(count, warmup, {
    direct: () => postTimed(sides.direct, workload.directBody),
    bridge: () => postTimed(sides.bridge, workload.bridgeBody),
    hop: () => postTimed(sides.hop, workload.directBody),
  });
  for (const triple of triples) {
    expectOk(triple.direct.status, `direct ${workload.label}`);
    expectOk(triple.bridge.status, `bridge ${workload.label}`);
    expectOk(triple.hop.status, `hop ${workload.label}`);
  }
  return compareTriples(triples.map((triple) => ({ direct: triple.direct.elapsedMs, bridge: triple.bridge.elapsedMs, hop: triple.hop.elapsedMs })));
}

/** Time to first delta with the reference hop as a third side. */
async function measureFirstDeltaWithHop(sides: Sides, workload: Workload, count: number, warmup: number): Promise<{ latency: AddedLatency; hop: HopReference }> {
  const triples = await measureTriples(count, warmup, {
    direct: () => postStreamTimed(sides.direct, workload.directBody, 'direct', false),
    bridge: () => postStreamTimed(sides.bridge, workload.bridgeBody, 'bridge', false),
    // The hop relays the backend's Chat stream unchanged, so its first delta looks like the direct one.
    hop: () => postStreamTimed(sides.hop, workload.directBody, 'direct', false),
  });
  for (const triple of triples) {
    expectOk(triple.direct.status, `direct stream ${workload.label}`);
    expectOk(triple.bridge.status, `bridge stream ${workload.label}`);
    expectOk(triple.hop.status, `hop stream ${workload.label}`);
  }
  return compareTriples(triples.map((triple) => ({ direct: triple.direct.firstDeltaMs, bridge: triple.bridge.firstDeltaMs, hop: triple.hop.firstDeltaMs })));
}

async function measureStreams(sides: Sides, workload: Workload, count: number, warmup: number): Promise<Array<{ direct: TimedStream; bridge: TimedStream }>> {
  const pairs = await measurePairs(
    count,
    warmup,
    () => postStreamTimed(sides.direct, workload.directBody, 'direct', false),
    () => postStreamTimed(sides.bridge, workload.bridgeBody, 'bridge', false),
  );
  for (const pair of pairs) {
    expectOk(pair.direct.status, `direct stream ${workload.label}`);
    expectOk(pair.bridge.status, `bridge stream ${workload.label}`);
  }
  return pairs;
}

interface PacedResult {
  direct: Summary;
  bridge: Summary;
  /** Per event index of paired runs: bridge latency − direct latency. */
  added: Summary;
}

/** Each event's latency from the mock's write() to this process's read, direct and through the bridge. */
async function measurePacedEvents(sides: Sides, mock: RunningChild, workload: Workload, count: number): Promise<PacedResult> {
  const run = async (side: 'direct' | 'bridge'): Promise<Float64Array> => {
    await mock.ask({ type: 'record-writes', id: mock.nextId(), enabled: true });
    const stream = await postStreamTimed(sides[side], side === 'direct' ? workload.directBody : workload.bridgeBody, side, true);
    expectOk(stream.status, `${side} paced stream`);
    const reply = await mock.ask<WritesReply>({ type: 'take-writes', id: mock.nextId() });
    await mock.ask({ type: 'record-writes', id: mock.nextId(), enabled: false });
    const latencies = new Float64Array(LONG_ANSWER_EVENTS).fill(Number.NaN);
    for (const [index, writtenAt] of reply.writes) latencies[index] = (stream.tokenArrivals[index] as number) - writtenAt;
    return latencies;
  };
  const pairs = await measurePairs(count, 0, () => run('direct'), () => run('bridge'));
  const direct: number[] = [];
  const bridge: number[] = [];
  const added: number[] = [];
  for (const pair of pairs) {
    for (let index = 0; index < LONG_ANSWER_EVENTS; index++) {
      const directLatency = pair.direct[index] as number;
      const bridgeLatency = pair.bridge[index] as number;
      if (Number.isNaN(directLatency) || Number.isNaN(bridgeLatency)) continue;
      direct.push(directLatency);
      bridge.push(bridgeLatency);
      added.push(bridgeLatency - directLatency);
    }
  }
  return { direct: summarize(direct), bridge: summarize(bridge), added: summarize(added) };
}

interface LoadWindow {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  latency: Summary;
  /** CPU milliseconds per request, per process, over the window. */
  cpuPerRequest: { bridge: number; hop: number; mock: number; client: number };
  /** Share of one core each process used over the window. */
  coreShare: { bridge: number; hop: number; mock: number; client: number };
}

interface ChildPids {
  bridge: number;
  hop: number;
  mock: number;
}

async function runLoad(endpoint: Endpoint, body: Buffer, clients: number, seconds: number, pids: ChildPids): Promise<LoadWindow> {
  const latencies: number[] = [];
  const cpuBefore = {
    bridge: readProcessCpuMilliseconds(pids.bridge),
    hop: readProcessCpuMilliseconds(pids.hop),
    mock: readProcessCpuMilliseconds(pids.mock),
    client: process.cpuUsage(),
  };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const result = await postTimed(endpoint, body);
      expectOk(result.status, `load on ${endpoint.url}`);
      latencies.push(result.elapsedMs);
    }
  };
  await Promise.all(Array.from({ length: clients }, worker));
  const elapsedSeconds = (performance.now() - started) / 1000;
  const clientCpu = process.cpuUsage(cpuBefore.client);
  const used = {
    bridge: readProcessCpuMilliseconds(pids.bridge) - cpuBefore.bridge,
    hop: readProcessCpuMilliseconds(pids.hop) - cpuBefore.hop,
    mock: readProcessCpuMilliseconds(pids.mock) - cpuBefore.mock,
    client: (clientCpu.user + clientCpu.system) / 1000,
  };
  const requests = latencies.length;
  const milliseconds = elapsedSeconds * 1000;
  return {
    requests,
    seconds: elapsedSeconds,
    requestsPerSecond: requests / elapsedSeconds,
    latency: summarize(latencies),
    cpuPerRequest: { bridge: used.bridge / requests, hop: used.hop / requests, mock: used.mock / requests, client: used.client / requests },
    coreShare: { bridge: used.bridge / milliseconds, hop: used.hop / milliseconds, mock: used.mock / milliseconds, client: used.client / milliseconds },
  };
}

interface ThroughputResult {
  direct: LoadWindow[];
  bridge: LoadWindow[];
  /** The reference hop's windows (informational). */
  hop: LoadWindow[];
  /** Each side's warm-up before its windows (informational: what a side costs before it settles). */
  warmup: Record<Side, LoadWindow>;
  directRequestsPerSecond: number;
  bridgeRequestsPerSecond: number;
  hopRequestsPerSecond: number;
  /** bridge / direct: the figure with a target. */
  ratio: number;
  /** hop / direct: what a minimal Node hop keeps of the direct rate on this machine. */
  hopRatio: number;
}

async function measureThroughput(sides: Sides, workload: Workload, pids: ChildPids): Promise<ThroughputResult> {
  const { throughputClients: clients, throughputWindowSeconds: seconds, throughputRounds: rounds } = settings;
  const bodies: Record<Side, Buffer> = { direct: workload.directBody, bridge: workload.bridgeBody, hop: workload.directBody };
  // Warm every path (JIT, sockets, GC) under the same load; recorded apart from the windows.
  const warmup = {} as Record<Side, LoadWindow>;
  for (const side of threeSideOrder(0)) warmup[side] = await runLoad(sides[side], bodies[side], clients, settings.throughputWarmupSeconds, pids);
  const windows: Record<Side, LoadWindow[]> = { direct: [], bridge: [], hop: [] };
  for (let round = 0; round < rounds; round++) {
    // Rotate the order per round so a slow moment of the machine does not favour one side.
    for (const side of threeSideOrder(round)) windows[side].push(await runLoad(sides[side], bodies[side], clients, seconds, pids));
  }
  const rate = (list: LoadWindow[]): number => list.reduce((sum, window) => sum + window.requests, 0) / list.reduce((sum, window) => sum + window.seconds, 0);
  const directRequestsPerSecond = rate(windows.direct);
  const bridgeRequestsPerSecond = rate(windows.bridge);
  const hopRequestsPerSecond = rate(windows.hop);
  return {
    direct: windows.direct,
    bridge: windows.bridge,
    hop: windows.hop,
    warmup,
    directRequestsPerSecond,
    bridgeRequestsPerSecond,
    hopRequestsPerSecond,
    ratio: bridgeRequestsPerSecond / directRequestsPerSecond,
    hopRatio: hopRequestsPerSecond / directRequestsPerSecond,
  };
}

interface MemoryReading {
  residentBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
}

interface MemoryResult {
  requests: number;
  requestBytes: number;
  before: MemoryReading;
  /** After the first fifth of the requests: the allocator has reached its working size by then. */
  middle: MemoryReading;
  after: MemoryReading;
  /** VmHWM of the bridge process (it started fresh for this phase). */
  peakResidentBytes: number;
  growthBytes: number;
  /**
   * Growth over the last four fifths only. A leak grows with every request; memory the allocator
   * keeps after its first large blocks (glibc does not hand every freed block back) mostly does not.
   */
  laterGrowthBytes: number;
}

async function measureMemory(bridgeModule: string, execArgv: string[], mockUrl: string, workload: Workload): Promise<MemoryResult> {
  // A fresh bridge, so VmHWM is this phase's peak and nothing earlier is counted.
  const bridge = await startChild('bridge (memory)', bridgeModule, ['--backend', mockUrl], execArgv);
  const agent = createClientAgent(settings.memoryConcurrency);
  const endpoint: Endpoint = { url: `${bridge.url}/v1/responses`, dispatcher: agent };
  const reading = async (): Promise<MemoryReading> => {
    const reply = await bridge.ask<MemoryReply>({ type: 'memory', id: bridge.nextId(), collectGarbage: true });
    // Let freed pages go back before /proc is read.
    await sleep(200);
    return { residentBytes: readProcessStatus(bridge.pid).residentBytes, heapUsedBytes: reply.memory.heapUsed, externalBytes: reply.memory.external };
  };
  const send = async (count: number): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        next += 1;
        expectOk((await postTimed(endpoint, workload.bridgeBody)).status, 'memory load');
      }
    };
    await Promise.all(Array.from({ length: settings.memoryConcurrency }, worker));
  };
  try {
    // Warm-up: code compiled, sockets pooled, buffers sized, as in a session already under way.
    for (let index = 0; index < 10; index++) expectOk((await postTimed(endpoint, workload.bridgeBody)).status, 'memory warm-up');
    const before = await reading();
    const firstPart = Math.round(settings.memoryRequests / 5);
    await send(firstPart);
    const middle = await reading();
    await send(settings.memoryRequests - firstPart);
    const peakResidentBytes = readProcessStatus(bridge.pid).peakResidentBytes;
    const after = await reading();
    return {
      requests: settings.memoryRequests,
      requestBytes: workload.requestBytes,
      before,
      middle,
      after,
      peakResidentBytes,
      growthBytes: after.residentBytes - before.residentBytes,
      laterGrowthBytes: after.residentBytes - middle.residentBytes,
    };
  } finally {
    await agent.close();
    await bridge.stop();
  }
}

// ---------- main ----------

interface Results {
  core: Record<SizeLabel, CoreTimings>;
  prefixReuse: Record<SizeLabel, PrefixReuse>;
  liftPerEvent: Summary;
  nonStream: Record<SizeLabel, AddedLatency>;
  firstDelta: AddedLatency;
  burst: { firstDelta: AddedLatency; total: AddedLatency; addedPerEvent: Summary };
  paced: PacedResult;
  throughput: ThroughputResult;
  memory: MemoryResult;
  soakMemory: SoakMemoryResult;
  extensionHostDelay: ExtensionHostDelayResult;
  /** The reference minimal hop's figures for every request size and time to first delta. */
  hop: { nonStream: Record<SizeLabel, HopReference>; firstDelta: HopReference };
}

/**
 * What a 49 kB turn may add, to the whole answer and to its first token: well under what a user can
 * tell apart next to an engine's own time to first token (tens of milliseconds at best).
 */
const TURN_ADDED_MS = 5;

/** The share of a turn's lowered request the next turn must send again unchanged, for the engine's prefix cache. */
const PREFIX_REUSE_PERCENT = 95;

/** Appended to a measurement's name for the reference hop's informational rows. */
const HOP_REFERENCE = ' — reference: minimal Node hop';

/** Mean over the windows of one process's CPU milliseconds per request. */
function averageCpuPerRequest(windows: LoadWindow[], owner: keyof LoadWindow['cpuPerRequest']): number {
  return windows.reduce((sum, window) => sum + window.cpuPerRequest[owner], 0) / Math.max(1, windows.length);
}

function buildRows(results: Results, requestBytes: Record<SizeLabel, number>): ReportRow[] {
  const rows: ReportRow[] = [];
  const row = (section: string, measurement: string, target: string | null, actual: string, passed: boolean | null): void => {
    rows.push({ section, measurement, target, actual, passed });
  };
  const added = (value: number): string => formatMilliseconds(value);
  const sides = (latency: AddedLatency, key: 'p50' | 'p99'): string => `${added(latency.added[key])} (direct ${formatMilliseconds(latency.direct[key])}, bridge ${formatMilliseconds(latency.bridge[key])})`;

  /** hop − direct, with the same direct calls as the bridge's row beside it. */
  const hopSides = (latency: AddedLatency, hop: HopReference, key: 'p50' | 'p99'): string =>
    `${added(hop.added[key])} (direct ${formatMilliseconds(latency.direct[key])}, hop ${formatMilliseconds(hop.hop[key])})`;

  /**
   * The targets are what a user feels: milliseconds added to a turn and to its first token, the
   * extension host's responsiveness, memory. Ratios to the reference hop measured in the same run are
   * information: what any Node proxy with a JSON body costs on this machine is the floor, and how far
   * above it the bridge sits says where its cost is, not whether a user notices it.
   */
  const ratio = (bridge: number, hop: number): number => (hop > 0 ? bridge / hop : Number.POSITIVE_INFINITY);
  const times = (value: number): string => `${value.toFixed(2)}×`;
  const addedAgainstHop = (latency: AddedLatency, hop: HopReference, key: 'p50' | 'p99'): string =>
    `${times(ratio(latency.added[key], hop.added[key]))} (bridge adds ${added(latency.added[key])}, hop ${added(hop.added[key])}; direct ${formatMilliseconds(latency.direct[key])})`;

  const small = results.nonStream['50 kB'];
  const smallHop = results.hop.nonStream['50 kB'];
  const smallLabel = `Codex request ${formatBytes(requestBytes['50 kB'])}`;
  row('non-streaming', `added p50, ${smallLabel}`, `≤ ${TURN_ADDED_MS} ms`, sides(small, 'p50'), small.added.p50 <= TURN_ADDED_MS);
  row('non-streaming', `added p50 / hop's added p50, ${smallLabel}`, null, addedAgainstHop(small, smallHop, 'p50'), null);
  row('non-streaming', `added p99 / hop's added p99, ${smallLabel}`, null, addedAgainstHop(small, smallHop, 'p99'), null);
  for (const label of ['2 MB', '10 MB'] as const) {
    const latency = results.nonStream[label];
    const hop = results.hop.nonStream[label];
    const target = label === '10 MB' ? '≤ 100 ms' : null;
    row('non-streaming', `added p50, session ${formatBytes(requestBytes[label])}`, target, sides(latency, 'p50'), target ? latency.added.p50 <= 100 : null);
    row('non-streaming', `added p99, session ${formatBytes(requestBytes[label])} (${latency.added.count} pairs)`, null, sides(latency, 'p99'), null);
    row('non-streaming', `added p50, session ${formatBytes(requestBytes[label])}${HOP_REFERENCE}`, null, hopSides(latency, hop, 'p50'), null);
  }

  const firstDelta = results.firstDelta;
  const firstDeltaHop = results.hop.firstDelta;
  row('streaming', `added time to first delta p50, ${smallLabel}`, `≤ ${TURN_ADDED_MS} ms`, sides(firstDelta, 'p50'), firstDelta.added.p50 <= TURN_ADDED_MS);
  row('streaming', "added time to first delta p50 / hop's", null, addedAgainstHop(firstDelta, firstDeltaHop, 'p50'), null);
  row('streaming', "added time to first delta p99 / hop's", null, addedAgainstHop(firstDelta, firstDeltaHop, 'p99'), null);
  const paced = results.paced;
  row(
    'streaming',
    `added per-event latency p50 (${LONG_ANSWER_EVENTS} events, 1 per ms)`,
    '≤ 0.2 ms',
    `${added(paced.added.p50)} (direct ${formatMilliseconds(paced.direct.p50)}, bridge ${formatMilliseconds(paced.bridge.p50)})`,
    paced.added.p50 <= 0.2,
  );
  row('streaming', 'added per-event latency p99', null, `${added(paced.added.p99)} (direct ${formatMilliseconds(paced.direct.p99)}, bridge ${formatMilliseconds(paced.bridge.p99)})`, null);
  row(
    'streaming',
    `added stream time per event, burst of ${LONG_ANSWER_EVENTS} (p50)`,
    null,
    `${added(results.burst.addedPerEvent.p50)} (whole stream: direct ${formatMilliseconds(results.burst.total.direct.p50)}, bridge ${formatMilliseconds(results.burst.total.bridge.p50)})`,
    null,
  );

  const throughput = results.throughput;
  const throughputToHop = throughput.bridgeRequestsPerSecond / throughput.hopRequestsPerSecond;
  row(
    'throughput',
    `bridge / hop, ${settings.throughputClients} concurrent clients`,
    null,
    `${throughputToHop.toFixed(2)} (${throughput.bridgeRequestsPerSecond.toFixed(0)} vs ${throughput.hopRequestsPerSecond.toFixed(0)} req/s; direct ${throughput.directRequestsPerSecond.toFixed(0)}, bridge / direct ${throughput.ratio.toFixed(2)}, hop / direct ${throughput.hopRatio.toFixed(2)})`,
    null,
  );
  const bridgeCpu = averageCpuPerRequest(throughput.bridge, 'bridge');
  const hopCpu = averageCpuPerRequest(throughput.hop, 'hop');
  // Reported without a target: the straight request path (one JSON.stringify, zod's safeParse, no
  // caches) spends more CPU than the hop by design, and what users feel is held by the latency and
  // throughput targets above.
  row(
    'throughput',
    'CPU per request under load, bridge / hop',
    null,
    `${times(ratio(bridgeCpu, hopCpu))} (bridge ${formatMilliseconds(bridgeCpu)}, hop ${formatMilliseconds(hopCpu)}; mock ${formatMilliseconds(averageCpuPerRequest(throughput.direct, 'mock'))}, client ${formatMilliseconds(averageCpuPerRequest(throughput.direct, 'client'))})`,
    null,
  );
  const warmupBridgeCpu = throughput.warmup.bridge.cpuPerRequest.bridge;
  const warmupHopCpu = throughput.warmup.hop.cpuPerRequest.hop;
  row(
    'throughput',
    `CPU per request in the ${settings.throughputWarmupSeconds} s warm-up before the windows, bridge / hop`,
    null,
    `${times(ratio(warmupBridgeCpu, warmupHopCpu))} (bridge ${formatMilliseconds(warmupBridgeCpu)}, hop ${formatMilliseconds(warmupHopCpu)})`,
    null,
  );
  // The conversion itself (lower + lift, which the hop does not do), measured alone in this process:
  // with a server around it that cost no more than the hop, the ratio would still be about
  // hop + conversion over hop, so this row says how much of the gap is the conversion's.
  const conversion = results.core['50 kB'].lowerAndLift.p50;
  row(
    'throughput',
    'CPU per request under load: bridge − hop, against the core conversion alone',
    null,
    `${formatMilliseconds(bridgeCpu - hopCpu)} more than the hop; lower + lift of the ${formatBytes(requestBytes['50 kB'])} turn in process (p50) ${formatMilliseconds(conversion)}, and hop + conversion alone would be ${times(ratio(hopCpu + conversion, hopCpu))} the hop`,
    null,
  );

  for (const { label } of SIZES) {
    const core = results.core[label];
    const detail = `lower ${formatMilliseconds(core.lower.p50)} + lift ${formatMilliseconds(core.lift.p50)}`;
    row('core conversion (p50)', `${formatBytes(requestBytes[label])} request: lower + lift`, null, `${formatMilliseconds(core.lowerAndLift.p50)} (${detail})`, null);
    row('core conversion (p50)', `${formatBytes(requestBytes[label])} request: JSON parse, serialise (server side)`, null, `${formatMilliseconds(core.parse.p50)}, ${formatMilliseconds(core.serialise.p50)}`, null);
  }
  row('core conversion (p50)', 'lift per event (SSE decode, chunk parse, translate, encode)', null, formatMilliseconds(results.liftPerEvent.p50), null);
  for (const { label } of SIZES) {
    const reuse = results.prefixReuse[label];
    row(
      'engine prefix cache',
      `the next turn's lowered request sends this one's again from the start, ${formatBytes(requestBytes[label])} request`,
      `≥ ${PREFIX_REUSE_PERCENT} %`,
      `${(reuse.fraction * 100).toFixed(2)} % (${formatBytes(reuse.sharedBytes)} of ${formatBytes(reuse.firstBytes)})`,
      reuse.fraction * 100 >= PREFIX_REUSE_PERCENT,
    );
  }

  const memory = results.memory;
  row('memory', `RSS growth after ${memory.requests} × ${formatBytes(memory.requestBytes)} (after GC)`, null, `${formatMegabytes(memory.growthBytes)} (${formatMegabytes(memory.before.residentBytes)} → ${formatMegabytes(memory.after.residentBytes)})`, null);
  const live = (reading: MemoryReading): number => reading.heapUsedBytes + reading.externalBytes;
  row(
    'memory',
    'live JS memory (heap used + external) before → after GC (leak check)',
    null,
    `${formatMegabytes(live(memory.before))} → ${formatMegabytes(live(memory.after))}`,
    null,
  );
  row('memory', 'peak RSS during those requests', null, formatMegabytes(memory.peakResidentBytes), null);
  rows.push(...buildSoakMemoryRows(results.soakMemory));
  rows.push(...buildExtensionHostDelayRows(results.extensionHostDelay));
  return rows;
}

function roundLatency(latency: AddedLatency): AddedLatency {
  return { direct: roundSummary(latency.direct), bridge: roundSummary(latency.bridge), added: roundSummary(latency.added) };
}

/** The hop's keys beside `direct`, `bridge` and `added` in the JSON report. */
function roundHop(hop: HopReference): { hop: Summary; hopAdded: Summary } {
  return { hop: roundSummary(hop.hop), hopAdded: roundSummary(hop.added) };
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const loadBefore = loadavg();
  progress(`building workloads and child bundles${quick ? ' (quick mode)' : ''}`);
  const bundles = await bundleChildren();
  const profileDirectory = resolve(RESULTS_DIRECTORY, 'profiles');
  const bridgeExecArgv = ['--expose-gc'];
  if (flags['cpu-prof']) {
    mkdirSync(profileDirectory, { recursive: true });
    bridgeExecArgv.push('--cpu-prof', `--cpu-prof-dir=${profileDirectory}`);
  }

  const nonStream = Object.fromEntries(SIZES.map(({ label, bytes }) => [label, createWorkload(label, bytes, 'short', false)])) as Record<SizeLabel, Workload>;
  const stream = createWorkload('50 kB stream', 50 * KILOBYTE, 'short', true);
  const burst = createWorkload('50 kB stream, 2000 events', 50 * KILOBYTE, 'events-2000', true);
  const paced = createWorkload('50 kB stream, 2000 paced events', 50 * KILOBYTE, 'events-2000-paced', true);
  const sessionStream = createWorkload('2 MB stream', 2 * MEGABYTE, 'short', true);
  const requestBytes = Object.fromEntries(SIZES.map(({ label }) => [label, nonStream[label].requestBytes])) as Record<SizeLabel, number>;
  const calibrate = (): number => {
    // Median of three: the first pass also pays for compiling the workload.
    const samples = [0, 1, 2].map(() => measureCalibration(nonStream['50 kB'].bridgeBody.toString())).sort((left, right) => left - right);
    return samples[1] as number;
  };
  const calibrationBefore = calibrate();

  const mock = await startChild('mock backend', bundles.mock, flags['no-validate'] ? ['--no-validate'] : [], []);
  const bridge = await startChild('bridge', bundles.bridge, ['--backend', mock.url], bridgeExecArgv);
  // Not profiled with --cpu-prof: the profiles directory is for the bridge.
  const hop = await startChild('reference hop', bundles.floor, ['--backend', mock.url], ['--expose-gc']);
  let directAgent = createClientAgent(64);
  let bridgeAgent = createClientAgent(64);
  let hopAgent = createClientAgent(64);
  const sides: Sides = {
    direct: { url: `${mock.url}/chat/completions`, dispatcher: directAgent },
    bridge: { url: `${bridge.url}/v1/responses`, dispatcher: bridgeAgent },
    // The hop forwards whatever it is sent to the mock's /chat/completions; the path is for the reader.
    hop: { url: `${hop.url}/v1/chat/completions`, dispatcher: hopAgent },
  };
  const pids: ChildPids = { bridge: bridge.pid, hop: hop.pid, mock: mock.pid };

  try {
    progress('checking answers on every side');
    const shortAnswerSse = await checkAnswers(sides, { nonStream: nonStream['50 kB'], stream, long: burst });
    const longAnswerSse = Buffer.from((await postForText(sides.direct, burst.directBody)).text);

    progress('core conversion (in process)');
    const core = {} as Record<SizeLabel, CoreTimings>;
    const prefixReuse = {} as Record<SizeLabel, PrefixReuse>;
    for (const { label } of SIZES) {
      core[label] = measureCoreConversion(nonStream[label].bridgeBody.toString(), shortAnswerSse, settings.coreIterations[label], label === '50 kB' ? 50 : 2);
      prefixReuse[label] = measurePrefixReuse(nonStream[label].bridgeBody.toString());
    }
    const liftPerEvent = measureLiftPerEvent(longAnswerSse, lowerRequestBody(burst.bridgeBody.toString()), LONG_ANSWER_EVENTS, quick ? 5 : 20);
    // The core phase blocks this event loop for seconds: the agents' idle timers could not run, and a
    // pooled socket the mock has closed meanwhile (5 s idle, like vLLM) must not be reused. Fresh pools.
    await Promise.all([directAgent.close(), bridgeAgent.close(), hopAgent.close()]);
    directAgent = createClientAgent(64);
    bridgeAgent = createClientAgent(64);
    hopAgent = createClientAgent(64);
    sides.direct.dispatcher = directAgent;
    sides.bridge.dispatcher = bridgeAgent;
    sides.hop.dispatcher = hopAgent;

    const nonStreamResults = {} as Record<SizeLabel, AddedLatency>;
    const hopNonStream = {} as Record<SizeLabel, HopReference>;
    for (const { label } of SIZES) {
      // Every size also goes through the reference hop, interleaved with the other two.
      progress(`non-streaming latency, ${label} (${settings.nonStreamPairs[label]} triples with the reference hop)`);
      const measured = await measureNonStreamWithHop(sides, nonStream[label], settings.nonStreamPairs[label], settings.nonStreamWarmup[label]);
      nonStreamResults[label] = measured.latency;
      hopNonStream[label] = measured.hop;
    }

    progress(`streaming: time to first delta (${settings.firstDeltaPairs} triples with the reference hop)`);
    const { latency: firstDelta, hop: hopFirstDelta } = await measureFirstDeltaWithHop(sides, stream, settings.firstDeltaPairs, 50);

    progress(`streaming: ${LONG_ANSWER_EVENTS} events in a burst (${settings.burstPairs} pairs)`);
    const burstPairs = await measureStreams(sides, burst, settings.burstPairs, 2);
    const burstResult = {
      firstDelta: compare(burstPairs.map((pair) => pair.direct.firstDeltaMs), burstPairs.map((pair) => pair.bridge.firstDeltaMs)),
      total: compare(burstPairs.map((pair) => pair.direct.totalMs), burstPairs.map((pair) => pair.bridge.totalMs)),
      addedPerEvent: summarize(burstPairs.map((pair) => (pair.bridge.totalMs - pair.direct.totalMs) / LONG_ANSWER_EVENTS)),
    };

    progress(`streaming: ${LONG_ANSWER_EVENTS} paced events, per-event latency (${settings.pacedPairs} pairs)`);
    const pacedResult = await measurePacedEvents(sides, mock, paced, settings.pacedPairs);

    progress(`throughput: ${settings.throughputClients} concurrent clients, ${settings.throughputRounds} × ${settings.throughputWindowSeconds} s per side (3 sides)`);
    const throughput = await measureThroughput(sides, stream, pids);
    const bridgeStatus = readProcessStatus(bridge.pid);
    const hopStatus = readProcessStatus(hop.pid);

    progress(`memory: ${settings.memoryRequests} × ${formatBytes(sessionStream.requestBytes)} through a fresh bridge`);
    const memory = await measureMemory(bundles.bridge, bridgeExecArgv, mock.url, sessionStream);

    progress(`memory: the soak test's load, ${settings.soakMemory.seconds} s through the soak's bridge process; then its relayable scenarios at full speed through a fresh bridge and a fresh hop; then what GCs promote of ended exchanges`);
    const soakMemory = await measureSoakMemory(bundles, settings.soakMemory);

    progress('extension host event loop: a 10 MB session and 8 streaming sessions, bridge on the host\'s thread and in a worker');
    const extensionHostDelay = await measureExtensionHostDelay(bundles, mock.url, settings.extensionHost);

    const results: Results = {
      core,
      prefixReuse,
      liftPerEvent,
      nonStream: nonStreamResults,
      firstDelta,
      burst: burstResult,
      paced: pacedResult,
      throughput,
      memory,
      soakMemory,
      extensionHostDelay,
      hop: { nonStream: hopNonStream, firstDelta: hopFirstDelta },
    };
    const rows = buildRows(results, requestBytes);
    const loadAfter = loadavg();
    const calibrationAfter = calibrate();
    const table = renderTable(rows);
    const missed = rows.filter((row) => row.passed === false);

    const report = {
      command: `npm run bench${quick ? ' -- --quick' : ''}`,
      startedAt: startedAt.toISOString(),
      durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
      machine: {
        node: process.version,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? 'unknown',
        memoryBytes: totalmem(),
        loadAverageBefore: loadBefore.map((value) => Math.round(value * 100) / 100),
        loadAverageAfter: loadAfter.map((value) => Math.round(value * 100) / 100),
        /** The same fixed CPU workload before and after the run (bench/core-conversion.ts); lower is faster. */
        calibrationMs: { before: Math.round(calibrationBefore), after: Math.round(calibrationAfter) },
      },
      settings: { ...settings, mockProfile: 'vllm-hermes', mockValidates: flags['no-validate'] !== true, cpuProfile: flags['cpu-prof'] === true },
      /** What each side is; the hop's figures sit beside the bridge's under the keys `hop` and `hopAdded`. */
      sides: {
        direct: 'this process → mock: the lowered Chat request',
        bridge: 'this process → bridge child → mock: the Responses request',
        hop: 'this process → reference minimal Node hop child (parse, stringify, forward, relay) → mock: the lowered Chat request; in the non-streaming, time-to-first-delta and throughput phases',
      },
      phaseStartSeconds: phaseStarts,
      requests: Object.fromEntries(SIZES.map(({ label }) => [label, requestBytes[label]])),
      targets: rows,
      missed: missed.map((row) => row.measurement),
      core: Object.fromEntries(
        SIZES.map(({ label }) => [label, Object.fromEntries(Object.entries(core[label]).map(([key, summary]) => [key, roundSummary(summary)]))]),
      ),
      liftPerEventMs: roundSummary(liftPerEvent, 5),
      prefixReuse,
      nonStreamMs: Object.fromEntries(
        SIZES.map(({ label }) => [
          label,
          { ...roundLatency(nonStreamResults[label]), ...roundHop(hopNonStream[label]) },
        ]),
      ),
      firstDeltaMs: { ...roundLatency(firstDelta), ...roundHop(hopFirstDelta) },
      burstMs: { firstDelta: roundLatency(burstResult.firstDelta), total: roundLatency(burstResult.total), addedPerEvent: roundSummary(burstResult.addedPerEvent, 5) },
      pacedEventLatencyMs: { direct: roundSummary(pacedResult.direct), bridge: roundSummary(pacedResult.bridge), added: roundSummary(pacedResult.added) },
      throughput: {
        ratio: Math.round(throughput.ratio * 1000) / 1000,
        directRequestsPerSecond: Math.round(throughput.directRequestsPerSecond),
        bridgeRequestsPerSecond: Math.round(throughput.bridgeRequestsPerSecond),
        windows: { direct: throughput.direct, bridge: throughput.bridge, hop: throughput.hop },
        warmup: throughput.warmup,
        bridgeResidentBytesAfter: bridgeStatus.residentBytes,
        bridgePeakResidentBytes: bridgeStatus.peakResidentBytes,
        hopRatio: Math.round(throughput.hopRatio * 1000) / 1000,
        hopRequestsPerSecond: Math.round(throughput.hopRequestsPerSecond),
        bridgeToHopRatio: Math.round((throughput.bridgeRequestsPerSecond / throughput.hopRequestsPerSecond) * 1000) / 1000,
        cpuPerRequestMs: {
          bridge: Math.round(averageCpuPerRequest(throughput.bridge, 'bridge') * 1000) / 1000,
          hop: Math.round(averageCpuPerRequest(throughput.hop, 'hop') * 1000) / 1000,
        },
        hopResidentBytesAfter: hopStatus.residentBytes,
        hopPeakResidentBytes: hopStatus.peakResidentBytes,
      },
      memory,
      soakMemory,
      extensionHostDelay,
    };
    mkdirSync(RESULTS_DIRECTORY, { recursive: true });
    const output = resolve(RESULTS_DIRECTORY, 'latest.json');
    writeFileSync(output, `${JSON.stringify(report, null, 2)}\n`);

    process.stdout.write(
      `\nFreeform Bridge benchmark — ${report.command} — Node ${process.version}, ${cpus().length} CPUs, load average ${loadBefore[0]?.toFixed(2)} → ${loadAfter[0]?.toFixed(2)}, calibration ${Math.round(calibrationBefore)} → ${Math.round(calibrationAfter)} ms\n`,
    );
    process.stdout.write(`requests: Codex ${formatBytes(requestBytes['50 kB'])}, sessions ${formatBytes(requestBytes['2 MB'])} and ${formatBytes(requestBytes['10 MB'])}; mock vllm-hermes in its own process; added = bridge − direct per interleaved pair\n`);
    process.stdout.write('rows marked "reference: minimal Node hop" show hop − direct instead, hop being a bare Node proxy (parse, stringify, forward, relay) interleaved in the same run\n\n');
    process.stdout.write(`${table}\n\n`);
    if (Math.max(calibrationBefore, calibrationAfter) > 1.5 * Math.min(calibrationBefore, calibrationAfter)) {
      process.stdout.write('NOTE: the calibration workload ran at very different speeds before and after: the machine was busy with other work, so figures are noisy.\n');
    }
    if (missed.length > 0) process.stdout.write(`MISSED ${missed.length} target(s): ${missed.map((row) => row.measurement).join('; ')}\n`);
    else process.stdout.write('All targets met.\n');
    process.stdout.write(`Written to ${output} in ${report.durationSeconds} s.\n`);
    if (flags['cpu-prof']) process.stdout.write(`Bridge CPU profiles: ${profileDirectory}\n`);
  } finally {
    await directAgent.close();
    await bridgeAgent.close();
    await hopAgent.close();
    await bridge.stop();
    await hop.stop();
    await mock.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
