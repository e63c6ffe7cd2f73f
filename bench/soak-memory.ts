/**
 * Target 4 ("the bridge's RSS stays ≤ 150 MB through the soak test's load") in the bench, in two loads,
 * and what the young-generation GCs move to the old generation of an ended exchange:
 *
 * - The soak test's own: the soak's bridge process (harness/soak-bridge-child.ts, as the soak test
 *   starts it) and its 16 sessions with every scenario, faults included (harness/soak-sessions.ts),
 *   for the same 20 s after the same warm-up, so the bench reads what the soak test asserts. Each
 *   turn is checked as in the test; a turn that ends otherwise fails the row.
 * - A harder reference beside the bare hop: the same sessions sending only the scenarios a bare hop
 *   can relay, on both sides. A hop cannot end the backend call of a client that walked away
 *   (client-abort), has no watchdog for headers that never come (headers-never) and would forward
 *   malformed JSON. Without those long turns the sessions send about three times the soak test's
 *   requests a second. The hop is sent each turn's lowered Chat request, the bridge the Responses
 *   request, as in the other phases, each a fresh child after a warm-up under the same load.
 *
 * Every side's RSS is sampled every 100 ms and its peak read as VmHWM, reset when the measured load
 * starts.
 *
 * - Promotion: the soak's bridge process serves exchanges one after another, each over in about a
 *   millisecond, so nothing of one should be alive at the next young-generation GC unless something
 *   long-lived still points at it. Node's GC profiler in that process (soak-bridge-child.ts) reads what
 *   those GCs added to the old generation.
 */
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'undici';
import { createRandom } from '../harness/deterministic-random.ts';
import { disconnectAndWait, forkSoakBridge, readyUrl, startSoakBackend } from '../harness/soak-backend.ts';
import type { GcProfileMessage } from '../harness/soak-bridge-child.ts';
import { CHECKS, DEFAULT_SEED, exchange, runSessions as runSoakSessions, SESSIONS, warmUp } from '../harness/soak-sessions.ts';
import { createRequestBody, pickScenario, SCENARIO_WEIGHTS, type Scenario } from '../harness/soak-workload.ts';
import { readProcessStatus, resetPeakResident, startChild, type ChildBundles } from './child-process.ts';
import { lowerRequestBody } from './core-conversion.ts';
import { formatMegabytes, type ReportRow } from './report.ts';

const SAMPLE_INTERVAL_MS = 100;
const UNRELAYABLE: ReadonlySet<Scenario> = new Set(['client-abort', 'headers-never', 'malformed-json']);
const WEIGHTS = SCENARIO_WEIGHTS.filter(([scenario]) => !UNRELAYABLE.has(scenario));

export interface SoakMemorySettings {
  seconds: number;
  /** Of the reference load, per side: the same load before the peak is reset. */
  warmupSeconds: number;
}

export interface ResidentMemory {
  medianResidentBytes: number;
  peakResidentBytes: number;
}

/** Target 4's row: the soak test's load through the soak test's bridge process. */
export interface SoakTestLoadResult extends ResidentMemory {
  requests: number;
  elapsedSeconds: number;
  /** Turns that did not end as their scenario requires (the soak test's checks), the first 20. */
  problems: string[];
}

export interface SoakMemorySide extends ResidentMemory {
  requests: number;
  /** Turns whose request failed on the client's side (a connection error, not an HTTP status). */
  failures: number;
}

export interface SoakMemoryResult {
  sessions: number;
  seconds: number;
  soakTest: SoakTestLoadResult;
  /** The reference load's scenarios, and each side through it. */
  scenarios: Scenario[];
  bridge: SoakMemorySide;
  hop: SoakMemorySide;
  promotion: PromotionResult;
}

export interface PromotionResult {
  exchanges: number;
  scavenges: number;
  fullGcs: number;
  promotedBytes: number;
  /** Turns that did not end as their scenario requires, the first 20. */
  problems: string[];
}

/** Exchanges before the measurement (code paths loaded and optimised), and measured. */
const PROMOTION_WARMUP_EXCHANGES = 300;
const PROMOTION_EXCHANGES = 1500;

/** Samples a process's RSS while `load` runs; its peak (VmHWM) counts from the load's start. */
async function sampleResident<Result>(pid: number, load: () => Promise<Result>): Promise<Result & ResidentMemory> {
  resetPeakResident(pid);
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(readProcessStatus(pid).residentBytes), SAMPLE_INTERVAL_MS);
  let result: Result;
  try {
    result = await load();
  } finally {
    clearInterval(sampler);
  }
  const peakResidentBytes = readProcessStatus(pid).peakResidentBytes;
  samples.sort((left, right) => left - right);
  return { ...result, medianResidentBytes: samples[Math.floor(samples.length / 2)] ?? 0, peakResidentBytes };
}

async function measureSoakTestLoad(bundles: ChildBundles, backendUrl: string, seconds: number): Promise<SoakTestLoadResult> {
  const child = forkSoakBridge(bundles.soakBridge, backendUrl);
  try {
    const url = await readyUrl(child, 'soak bridge');
    await warmUp(url);
    const pid = child.pid;
    if (pid === undefined) throw new Error('the soak bridge has no pid');
    return await sampleResident(pid, async () => {
      const { sent, problems, elapsedSeconds } = await runSoakSessions(url, seconds, DEFAULT_SEED);
      return { requests: [...sent.values()].reduce((sum, count) => sum + count, 0), elapsedSeconds, problems };
    });
  } finally {
    await disconnectAndWait(child);
  }
}

/** SESSIONS sessions for `seconds`, each sending its turns one after another; every body is read to its end. */
async function runRelayableSessions(url: string, side: 'bridge' | 'hop', seconds: number): Promise<{ requests: number; failures: number }> {
  const agent = new Agent({ connections: SESSIONS * 2 });
  const deadline = Date.now() + seconds * 1000;
  let requests = 0;
  let failures = 0;
  try {
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, session) => {
        const random = createRandom(DEFAULT_SEED * 1000 + session);
        for (let turn = 1; Date.now() < deadline; turn++) {
          const scenario = pickScenario(random, WEIGHTS);
          const text = createRequestBody(scenario, random() < 0.6, session + 1, turn);
          const body = side === 'hop' ? JSON.stringify(lowerRequestBody(text).chatRequest) : text;
          try {
            const response = await request(url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body });
            await response.body.text();
          } catch {
            // A backend's cut socket reaches the hop's client as a broken body; the bridge answers it as an event.
            failures += 1;
          }
          requests += 1;
        }
      }),
    );
  } finally {
    await agent.close();
  }
  return { requests, failures };
}

async function measureSide(side: 'bridge' | 'hop', module: string, backendUrl: string, settings: SoakMemorySettings): Promise<SoakMemorySide> {
  // No --expose-gc here: nothing collects garbage on request, as in a user's `serve`.
  const child = await startChild(side === 'bridge' ? 'soak-memory bridge' : 'soak-memory hop', module, ['--backend', backendUrl, '--quiet'], []);
  const url = side === 'bridge' ? `${child.url}/v1/responses` : `${child.url}/v1/chat/completions`;
  try {
    await runRelayableSessions(url, side, settings.warmupSeconds);
    return await sampleResident(child.pid, () => runRelayableSessions(url, side, settings.seconds));
  } finally {
    await child.stop();
  }
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

async function measurePromotion(bundles: ChildBundles, backendUrl: string): Promise<PromotionResult> {
  const child = forkSoakBridge(bundles.soakBridge, backendUrl);
  const agent = new Agent();
  const problems: string[] = [];
  let url = '';
  const run = async (count: number): Promise<void> => {
    for (let turn = 0; turn < count; turn++) {
      const scenario = turn % 2 === 0 ? 'text' : 'custom-call';
      const stream = turn % 4 < 2;
      const problem = CHECKS[scenario].check(await exchange(agent, url, scenario, stream, createRequestBody(scenario, stream, 1, turn)), stream);
      if (problem !== null && problems.length < 20) problems.push(`turn ${turn} ${scenario} (${stream ? 'stream' : 'JSON'}): ${problem}`);
    }
  };
  try {
    url = await readyUrl(child, 'soak bridge');
    await run(PROMOTION_WARMUP_EXCHANGES);
    await askChild(child, { type: 'gc-profile-start' }, 'gc-profile-started');
    await run(PROMOTION_EXCHANGES);
    const profile = await askChild<GcProfileMessage>(child, { type: 'gc-profile-stop' }, 'gc-profile');
    return { exchanges: PROMOTION_EXCHANGES, scavenges: profile.scavenges, fullGcs: profile.fullGcs, promotedBytes: profile.promotedBytes, problems };
  } finally {
    await agent.close();
    await disconnectAndWait(child);
  }
}

export async function measureSoakMemory(bundles: ChildBundles, settings: SoakMemorySettings): Promise<SoakMemoryResult> {
  const backend = await startSoakBackend();
  try {
    const soakTest = await measureSoakTestLoad(bundles, backend.url, settings.seconds);
    const bridge = await measureSide('bridge', bundles.bridge, backend.url, settings);
    const hop = await measureSide('hop', bundles.floor, backend.url, settings);
    const promotion = await measurePromotion(bundles, backend.url);
    return { sessions: SESSIONS, seconds: settings.seconds, soakTest, scenarios: WEIGHTS.map(([scenario]) => scenario), bridge, hop, promotion };
  } finally {
    await backend.stop();
  }
}

/** What the bridge may hold at its busiest: a user feels memory, not how it is collected. */
const TARGET_PEAK_BYTES = 150 * 1024 * 1024;

function describeMemory(memory: ResidentMemory): string {
  return `${formatMegabytes(memory.peakResidentBytes)} (median ${formatMegabytes(memory.medianResidentBytes)}`;
}

export function buildSoakMemoryRows(result: SoakMemoryResult): ReportRow[] {
  const { soakTest, bridge, hop } = result;
  const describe = (side: SoakMemorySide): string => `${side.requests} requests${side.failures > 0 ? `, ${side.failures} cut` : ''}, ${(side.requests / result.seconds).toFixed(0)}/s`;
  const unexpected = soakTest.problems.length > 0 ? `; turns that did not end as their scenario requires, the first: ${soakTest.problems[0]}` : '';
  return [
    {
      section: 'memory',
      measurement: `peak RSS through the soak test's load (its ${result.sessions} sessions, every scenario with its faults, ${result.seconds} s): the soak's bridge process`,
      target: '≤ 150 MB',
      actual: `${describeMemory(soakTest)}; ${soakTest.requests} requests, ${(soakTest.requests / soakTest.elapsedSeconds).toFixed(0)}/s)${unexpected}`,
      passed: soakTest.peakResidentBytes <= TARGET_PEAK_BYTES && soakTest.problems.length === 0,
    },
    {
      section: 'memory',
      measurement: `peak RSS, the soak's relayable scenarios without the faults' long turns, as fast as ${result.sessions} sessions go: bridge (reference: minimal Node hop)`,
      target: null,
      actual: `${describeMemory(bridge)}; ${describe(bridge)}) against the hop's ${describeMemory(hop)}; ${describe(hop)}): ${(bridge.peakResidentBytes / hop.peakResidentBytes).toFixed(2)}× at the peak, ${(bridge.medianResidentBytes / hop.medianResidentBytes).toFixed(2)}× at the median`,
      passed: null,
    },
    promotionRow(result.promotion),
  ];
}

function promotionRow(promotion: PromotionResult): ReportRow {
  const perExchange = promotion.promotedBytes / promotion.exchanges;
  // Too few GCs measure nothing: the row then says so rather than give a figure.
  const measured = promotion.scavenges >= 5;
  const unexpected = promotion.problems.length > 0 ? `; turns that did not end as their scenario requires, the first: ${promotion.problems[0]}` : '';
  return {
    section: 'memory',
    measurement: `bytes of an ended exchange the young-generation GCs move to the old generation, ${promotion.exchanges} exchanges one after another: the soak's bridge process`,
    target: null,
    actual: `${measured ? perExchange.toFixed(0) : 'too few GCs to tell:'} bytes per exchange (${formatMegabytes(promotion.promotedBytes)} in ${promotion.scavenges} young-generation GCs; full GCs: ${promotion.fullGcs})${unexpected}`,
    passed: promotion.problems.length === 0 ? null : false,
  };
}
