/**
 * Target 4's load beside the bare hop: the soak's request mix (test/load/soak-workload.ts) from 16
 * sessions, against a fresh bridge child and then a fresh hop child, each with its RSS sampled every
 * 100 ms and its peak read as VmHWM, reset after a warm-up under the same load. The soak test
 * (test/load/soak.test.ts) holds the bridge to every scenario and measures its RSS alone; here both
 * sides get only the scenarios a bare hop can relay: it cannot end the backend call of a client that
 * walked away (client-abort), has no watchdog for headers that never come (headers-never) and would
 * forward malformed JSON. The hop is sent each turn's lowered Chat request, the bridge the Responses
 * request, as in the other phases.
 */
import { Agent, request } from 'undici';
import { createRandom } from '../test/support/deterministic-random.ts';
import { startSoakBackend } from '../test/load/soak-backend.ts';
import { createRequestBody, pickScenario, SCENARIO_WEIGHTS, type Scenario } from '../test/load/soak-workload.ts';
import { readProcessStatus, resetPeakResident, startChild, type ChildBundles } from './child-process.ts';
import { lowerRequestBody } from './core-conversion.ts';
import { formatMegabytes, type ReportRow } from './report.ts';

const SESSIONS = 16;
const SEED = 8;
const SAMPLE_INTERVAL_MS = 100;
const UNRELAYABLE: ReadonlySet<Scenario> = new Set(['client-abort', 'headers-never', 'malformed-json']);
const WEIGHTS = SCENARIO_WEIGHTS.filter(([scenario]) => !UNRELAYABLE.has(scenario));

export interface SoakMemorySettings {
  seconds: number;
  warmupSeconds: number;
}

export interface SoakMemorySide {
  requests: number;
  /** Turns whose request failed on the client's side (a connection error, not an HTTP status). */
  failures: number;
  medianResidentBytes: number;
  peakResidentBytes: number;
}

export interface SoakMemoryResult {
  sessions: number;
  seconds: number;
  scenarios: Scenario[];
  bridge: SoakMemorySide;
  hop: SoakMemorySide;
}

/** SESSIONS sessions for `seconds`, each sending its turns one after another; every body is read to its end. */
async function runSessions(url: string, side: 'bridge' | 'hop', seconds: number): Promise<{ requests: number; failures: number }> {
  const agent = new Agent({ connections: SESSIONS * 2 });
  const deadline = Date.now() + seconds * 1000;
  let requests = 0;
  let failures = 0;
  try {
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, session) => {
        const random = createRandom(SEED * 1000 + session);
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
  const samples: number[] = [];
  let sampler: NodeJS.Timeout | null = null;
  try {
    await runSessions(url, side, settings.warmupSeconds);
    resetPeakResident(child.pid);
    sampler = setInterval(() => samples.push(readProcessStatus(child.pid).residentBytes), SAMPLE_INTERVAL_MS);
    const { requests, failures } = await runSessions(url, side, settings.seconds);
    clearInterval(sampler);
    sampler = null;
    const peakResidentBytes = readProcessStatus(child.pid).peakResidentBytes;
    samples.sort((left, right) => left - right);
    return { requests, failures, medianResidentBytes: samples[Math.floor(samples.length / 2)] ?? 0, peakResidentBytes };
  } finally {
    if (sampler) clearInterval(sampler);
    await child.stop();
  }
}

export async function measureSoakMemory(bundles: ChildBundles, settings: SoakMemorySettings): Promise<SoakMemoryResult> {
  const backend = await startSoakBackend();
  try {
    const bridge = await measureSide('bridge', bundles.bridge, backend.url, settings);
    const hop = await measureSide('hop', bundles.floor, backend.url, settings);
    return { sessions: SESSIONS, seconds: settings.seconds, scenarios: WEIGHTS.map(([scenario]) => scenario), bridge, hop };
  } finally {
    await backend.stop();
  }
}

const TARGET_PEAK_BYTES = 100 * 1024 * 1024;

export function buildSoakMemoryRows(result: SoakMemoryResult): ReportRow[] {
  const { bridge, hop } = result;
  const describe = (side: SoakMemorySide): string => `${side.requests} requests${side.failures > 0 ? `, ${side.failures} cut` : ''}`;
  return [
    {
      section: 'memory',
      measurement: `peak RSS, the soak's relayable mix from ${result.sessions} sessions × ${result.seconds} s: bridge`,
      target: '≤ 100 MB',
      actual: `${formatMegabytes(bridge.peakResidentBytes)} (median ${formatMegabytes(bridge.medianResidentBytes)}; ${describe(bridge)}, ${(bridge.requests / result.seconds).toFixed(0)}/s)`,
      passed: bridge.peakResidentBytes <= TARGET_PEAK_BYTES,
    },
    {
      section: 'memory',
      measurement: 'the same, bridge / hop (reference: minimal Node hop)',
      target: null,
      actual: `${(bridge.peakResidentBytes / hop.peakResidentBytes).toFixed(2)}× at the peak, ${(bridge.medianResidentBytes / hop.medianResidentBytes).toFixed(2)}× at the median (hop ${formatMegabytes(hop.peakResidentBytes)}, median ${formatMegabytes(hop.medianResidentBytes)}; ${describe(hop)})`,
      passed: null,
    },
  ];
}
