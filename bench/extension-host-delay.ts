/**
 * The extension host's event-loop delay while the bridge relays Codex traffic: what every other
 * extension in the window feels. A child process plays the extension host (bench/children/
 * extension-host-child.ts: a real TrafficStore on its main thread, fed by the bridge), once with the
 * bridge on that thread (as the extension ran it before) and once with the bridge in a worker thread
 * (as it runs now). Two scenarios per mode:
 *
 *   a 10 MB session: several turns one after the other, each resending the whole history plus a new
 *     message, as Codex does;
 *   8 streaming sessions: 8 different 2 MB sessions at once, each streaming 2000 events at one per ms.
 *
 * The delay is monitorEventLoopDelay({ resolution: 1 }) over the scenario's window: each sample
 * includes its 1 ms timer interval, so an idle loop reads about 1.1 ms, and a long stall counts as one
 * sample, so the max and the share of the window the thread was busy (eventLoopUtilization) sit beside
 * the p99.
 */
import { readProcessStatus, startChild, type ChildBundles, type RunningChild } from './child-process.ts';
import type { EventLoopDelayReply } from './child-protocol.ts';
import { createClientAgent, postTimed, type Endpoint } from './http-client.ts';
import { formatMegabytes, formatMilliseconds, type ReportRow } from './report.ts';
import { createCodexRequest, MEGABYTE } from './workloads.ts';

export type HostMode = 'in-process' | 'worker';
const MODES: readonly HostMode[] = ['in-process', 'worker'];

export interface ExtensionHostDelaySettings {
  sessionTurns: number;
  streamingSessions: number;
  streamingRounds: number;
}

export interface DelayWindow {
  p50: number;
  p99: number;
  max: number;
  samples: number;
  /** Share of the window the host's thread was busy. */
  busy: number;
  seconds: number;
  roundTrips: number;
}

/** What starting the bridge added to the host's RSS, read from /proc with the bridge idle. */
export interface BridgeResidentMemory {
  /** Started, before any request. */
  idleBytes: number;
  /** After both scenarios, idle again for a second. */
  idleAfterWorkBytes: number;
}

export interface ExtensionHostDelayResult {
  settings: ExtensionHostDelaySettings;
  session: Record<HostMode, DelayWindow>;
  streaming: Record<HostMode, DelayWindow>;
  bridgeMemory: Record<HostMode, BridgeResidentMemory>;
}

/** The p99 every other extension may see at most while the bridge works (the product requirement). */
const TARGET_P99_MS = 10;

/** Turn `turn` of one long session: the history so far plus one new message per earlier turn, before the ask. */
function createSessionTurns(turns: number): Buffer[] {
  const request = createCodexRequest({ targetBytes: 10 * MEGABYTE, label: '10 MB session', answer: 'short', stream: true });
  const input = request.body.input as unknown[];
  const ask = input.at(-1);
  const history = input.slice(0, -1);
  return Array.from({ length: turns }, (_, turn) => {
    const added = Array.from({ length: turn }, (_unused, index) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `turn ${index + 1}: and one more thing` }] }));
    return Buffer.from(JSON.stringify({ ...request.body, input: [...history, ...added, ask] }));
  });
}

/** Different sessions (their call ids and file names differ), so one session's history is no help to another's. */
function createStreamingSessions(count: number): Buffer[] {
  const request = createCodexRequest({ targetBytes: 2 * MEGABYTE, label: '2 MB streaming session', answer: 'events-2000-paced', stream: true });
  return Array.from({ length: count }, (_, session) => Buffer.from(request.text.replaceAll('call_bench_', `call_s${session}_`).replaceAll('module-', `module${session}-`)));
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

async function measureWindow(host: RunningChild, roundTrips: number, work: () => Promise<void>): Promise<DelayWindow> {
  const before = await host.ask<EventLoopDelayReply>({ type: 'event-loop-delay', id: host.nextId(), action: 'start' });
  const started = performance.now();
  await work();
  // The ends cross from the worker after the answer's last byte: give them a moment to reach the store.
  await sleep(100);
  const reply = await host.ask<EventLoopDelayReply>({ type: 'event-loop-delay', id: host.nextId(), action: 'take' });
  const seen = reply.store.completed - before.store.completed;
  if (seen !== roundTrips) throw new Error(`the extension host's traffic store saw ${seen} of ${roundTrips} round trips complete`);
  return { p50: reply.delay.p50, p99: reply.delay.p99, max: reply.delay.max, samples: reply.delay.count, busy: reply.busy, seconds: (performance.now() - started) / 1000, roundTrips };
}

async function post(endpoint: Endpoint, body: Buffer): Promise<void> {
  const result = await postTimed(endpoint, body);
  if (result.status !== 200) throw new Error(`extension host bridge answered HTTP ${result.status}`);
}

export async function measureExtensionHostDelay(bundles: ChildBundles, mockUrl: string, settings: ExtensionHostDelaySettings): Promise<ExtensionHostDelayResult> {
  const turns = createSessionTurns(settings.sessionTurns);
  const sessions = createStreamingSessions(settings.streamingSessions);
  const result = { settings, session: {}, streaming: {}, bridgeMemory: {} } as ExtensionHostDelayResult;
  for (const mode of MODES) {
    const host = await startChild(`extension host (${mode})`, bundles.extensionHost, ['--backend', mockUrl, '--mode', mode, '--worker', bundles.bridgeWorker], []);
    const agent = createClientAgent(settings.streamingSessions);
    const endpoint: Endpoint = { url: `${host.url}/v1/responses`, dispatcher: agent };
    const bridgeResident = async (): Promise<number> => {
      await sleep(1000);
      return readProcessStatus(host.pid).residentBytes - (host.ready.residentBytesBeforeBridge ?? 0);
    };
    try {
      const idleBytes = await bridgeResident();
      // Warm-up: code compiled on both threads before anything is measured.
      await post(endpoint, sessions[0] as Buffer);
      await sleep(100);
      result.session[mode] = await measureWindow(host, turns.length, async () => {
        for (const body of turns) await post(endpoint, body);
      });
      result.streaming[mode] = await measureWindow(host, settings.streamingRounds * sessions.length, async () => {
        for (let round = 0; round < settings.streamingRounds; round++) await Promise.all(sessions.map((body) => post(endpoint, body)));
      });
      result.bridgeMemory[mode] = { idleBytes, idleAfterWorkBytes: await bridgeResident() };
    } finally {
      await agent.close();
      await host.stop();
    }
  }
  return result;
}

export function buildExtensionHostDelayRows(result: ExtensionHostDelayResult): ReportRow[] {
  const section = 'extension host event loop';
  const describe = (window: DelayWindow): string =>
    `${formatMilliseconds(window.p99)} (p50 ${formatMilliseconds(window.p50)}, max ${formatMilliseconds(window.max)}; thread busy ${(window.busy * 100).toFixed(0)} %; ${window.roundTrips} round trips in ${window.seconds.toFixed(1)} s)`;
  const scenarios = [
    { name: `10 MB session, ${result.settings.sessionTurns} turns`, windows: result.session },
    { name: `${result.settings.streamingSessions} sessions of 2 MB streaming at once, ${result.settings.streamingRounds} rounds`, windows: result.streaming },
  ];
  const memory = result.bridgeMemory.worker;
  const memoryRow: ReportRow = {
    section,
    measurement: "RSS the bridge adds to the extension host, idle: started in its worker / after the scenarios (the traffic store's records included)",
    target: null,
    actual: `${formatMegabytes(memory.idleBytes)} / ${formatMegabytes(memory.idleAfterWorkBytes)} (on the host's thread: ${formatMegabytes(result.bridgeMemory['in-process'].idleBytes)} / ${formatMegabytes(result.bridgeMemory['in-process'].idleAfterWorkBytes)})`,
    passed: null,
  };
  return [memoryRow, ...scenarios.flatMap(({ name, windows }) => [
    { section, measurement: `p99 event-loop delay, ${name}: bridge in a worker`, target: `≤ ${TARGET_P99_MS} ms`, actual: describe(windows.worker), passed: windows.worker.p99 <= TARGET_P99_MS },
    { section, measurement: `p99 event-loop delay, ${name}: bridge on the host's thread (before)`, target: null, actual: describe(windows['in-process']), passed: null },
  ])];
}
