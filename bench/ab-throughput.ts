/**
 * `npm run bench:ab -- --other PATH`: this checkout's bridge against another checkout's (another
 * commit of this repository, its dependencies installed: `git worktree add ../before <commit>` and
 * `npm ci` there) and the bench's bare Node hop, under the throughput phase's load: streamed 49 kB
 * Codex requests from 32 clients, to the same mock. The three sides take turns in windows of a fixed
 * number of requests, the order rotating through all six per round, so a busy moment of a shared
 * machine does not land on one side only; CPU per request is read from /proc for each side's process,
 * and each process's peak RSS over the measured windows.
 * Prints the medians over the rounds. A report, like `npm run bench`: it always exits 0 once it ran.
 *
 * Options: --rounds N (6), --requests N per window (3000), --clients N (32), and
 * --other-node-options="FLAGS": Node options for the other side's process, written with `=` since
 * they start with `--` (e.g. --other-node-options=--max-semi-space-size=4). Without --other, the other
 * side is this checkout too: with --other-node-options that measures what the options change; with
 * neither, the noise between two identical bridges.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { bundleChildren, bundleOtherBridgeChild, readProcessCpuMilliseconds, readProcessStatus, resetPeakResident, startChild, type RunningChild } from './child-process.ts';
import { lowerRequestBody } from './core-conversion.ts';
import { createClientAgent, postTimed, type Endpoint } from './http-client.ts';
import { summarize, threeSideOrder } from './statistics.ts';
import { createCodexRequest, KILOBYTE, MEGABYTE } from './workloads.ts';

const { values } = parseArgs({ options: { other: { type: 'string' }, 'other-node-options': { type: 'string' }, rounds: { type: 'string' }, requests: { type: 'string' }, clients: { type: 'string' } } });

function positive(name: string, text: string | undefined, fallback: number): number {
  const value = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number above 0, not ${JSON.stringify(text)}`);
  return value;
}

type Side = 'other' | 'this' | 'hop';
const SIDES: readonly [Side, Side, Side] = ['other', 'this', 'hop'];

interface Window {
  requestsPerSecond: number;
  cpuMsPerRequest: number;
}

async function main(): Promise<void> {
  const other = values.other === undefined ? null : resolve(values.other);
  if (other !== null && !existsSync(resolve(other, 'bench/children/bridge-child.ts'))) throw new Error(`${other} holds no bench/children/bridge-child.ts: not a checkout of this repository`);
  const otherNodeOptions = (values['other-node-options'] ?? '').split(' ').filter((option) => option !== '');
  const otherLabel = `${other ?? 'this checkout'}${otherNodeOptions.length > 0 ? ` with ${otherNodeOptions.join(' ')}` : ''}`;
  const rounds = positive('rounds', values.rounds, 6);
  const requests = positive('requests', values.requests, 3000);
  const clients = positive('clients', values.clients, 32);

  const bundles = await bundleChildren();
  const otherBundle = other === null ? bundles.bridge : await bundleOtherBridgeChild(other);
  const started: RunningChild[] = [];
  const start = async (name: string, bundle: string, backend: string, execArgv: string[] = []): Promise<RunningChild> => {
    const child = await startChild(name, bundle, ['--backend', backend], execArgv);
    started.push(child);
    return child;
  };
  try {
    const mock = await startChild('mock backend', bundles.mock, [], []);
    started.push(mock);
    const children: Record<Side, RunningChild> = {
      other: await start('other bridge', otherBundle, mock.url, otherNodeOptions),
      this: await start('this bridge', bundles.bridge, mock.url),
      hop: await start('reference hop', bundles.floor, mock.url),
    };
    const request = createCodexRequest({ targetBytes: 50 * KILOBYTE, label: '50 kB stream', answer: 'short', stream: true });
    const bodies: Record<Side, Buffer> = { other: Buffer.from(request.text), this: Buffer.from(request.text), hop: Buffer.from(JSON.stringify(lowerRequestBody(request.text).chatRequest)) };
    const endpoints: Record<Side, Endpoint> = {
      other: { url: `${children.other.url}/v1/responses`, dispatcher: createClientAgent(64) },
      this: { url: `${children.this.url}/v1/responses`, dispatcher: createClientAgent(64) },
      hop: { url: `${children.hop.url}/v1/chat/completions`, dispatcher: createClientAgent(64) },
    };
    const load = async (side: Side, total: number): Promise<Window> => {
      const pid = children[side].pid;
      const cpuBefore = readProcessCpuMilliseconds(pid);
      const startedAt = performance.now();
      let left = total;
      const client = async (): Promise<void> => {
        while (left > 0) {
          left -= 1;
          const result = await postTimed(endpoints[side], bodies[side]);
          if (result.status !== 200) throw new Error(`the ${side} side answered HTTP ${result.status}`);
        }
      };
      await Promise.all(Array.from({ length: clients }, client));
      const seconds = (performance.now() - startedAt) / 1000;
      return { requestsPerSecond: total / seconds, cpuMsPerRequest: (readProcessCpuMilliseconds(pid) - cpuBefore) / total };
    };
    // Warm every side (JIT, sockets) without recording.
    for (const side of SIDES) await load(side, Math.min(requests, 1500));
    for (const side of SIDES) resetPeakResident(children[side].pid);
    const windows: Record<Side, Window[]> = { other: [], this: [], hop: [] };
    for (let round = 0; round < rounds; round++) {
      for (const side of threeSideOrder(SIDES, round)) {
        windows[side].push(await load(side, requests));
        process.stderr.write(`[bench:ab] round ${round + 1}/${rounds}: ${side} done\n`);
      }
    }
    const median = (side: Side, key: keyof Window): number => summarize(windows[side].map((window) => window[key])).p50;
    const peaks = Object.fromEntries(SIDES.map((side) => [side, readProcessStatus(children[side].pid).peakResidentBytes])) as Record<Side, number>;
    const line = (side: Side, label: string): string => {
      const cpu = median(side, 'cpuMsPerRequest');
      const rate = median(side, 'requestsPerSecond');
      return `| ${label} | ${cpu.toFixed(3)} ms | ${(cpu / median('hop', 'cpuMsPerRequest')).toFixed(2)}× | ${rate.toFixed(0)} req/s | ${(rate / median('hop', 'requestsPerSecond')).toFixed(2)} | ${(peaks[side] / MEGABYTE).toFixed(1)} MB | ${(peaks[side] / peaks.hop).toFixed(2)}× |`;
    };
    process.stdout.write(
      [
        `\nbench:ab: ${rounds} rounds of ${requests} streamed 49 kB requests per side at ${clients} clients; medians over the rounds`,
        '| side | CPU per request | CPU / hop | throughput | throughput / hop | peak RSS | peak RSS / hop |',
        '|---|---|---|---|---|---|---|',
        line('other', `other (${otherLabel})`),
        line('this', 'this checkout'),
        line('hop', 'reference hop'),
        '',
      ].join('\n'),
    );
  } finally {
    for (const child of started.reverse()) await child.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:ab: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
