/**
 * Where one request's CPU goes in the bridge: a V8 CPU profile of a bridge child (bundled like
 * dist/cli.js) that serves only one kind of request, one after another, from the project's mock
 * backend in a child of its own; the profile is summarised as bench/summarize-profile.ts does.
 *
 *   node --import tsx bench/profile-request.ts --size 50kB   # a 49 kB Codex turn, 2000 times
 *   node --import tsx bench/profile-request.ts --size 10MB   # a 10 MB session, 20 times
 *
 * The profile (bench/results/profiles/request-<size>-*.cpuprofile) covers the child's whole life: its
 * start-up shows as module loading and compilation, a few percent of a run this long.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { bundleChildren, RESULTS_DIRECTORY, startChild } from './child-process.ts';
import { createClientAgent, postTimed, type Endpoint } from './http-client.ts';
import { createCodexRequest, KILOBYTE, MEGABYTE } from './workloads.ts';

const SIZES = {
  '50kB': { bytes: 50 * KILOBYTE, requests: 2000 },
  '10MB': { bytes: 10 * MEGABYTE, requests: 20 },
} as const;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { size: { type: 'string', default: '50kB' } } });
  const size = SIZES[values.size as keyof typeof SIZES];
  if (size === undefined) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
  const directory = resolve(RESULTS_DIRECTORY, 'profiles');
  mkdirSync(directory, { recursive: true });
  const before = new Set(readdirSync(directory));
  const bundles = await bundleChildren();
  const request = createCodexRequest({ targetBytes: size.bytes, label: values.size ?? '', answer: 'short', stream: true });
  const body = Buffer.from(request.text);
  const mock = await startChild('mock backend', bundles.mock, [], []);
  const bridge = await startChild('bridge', bundles.bridge, ['--backend', mock.url], ['--cpu-prof', `--cpu-prof-dir=${directory}`, `--cpu-prof-name=request-${values.size}-${Date.now()}.cpuprofile`]);
  const agent = createClientAgent(1);
  const endpoint: Endpoint = { url: `${bridge.url}/v1/responses`, dispatcher: agent };
  try {
    const started = performance.now();
    for (let index = 0; index < size.requests; index++) {
      const result = await postTimed(endpoint, body);
      if (result.status !== 200) throw new Error(`the bridge answered HTTP ${result.status}`);
    }
    process.stdout.write(`${size.requests} requests of ${(request.bytes / KILOBYTE).toFixed(1)} kB in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    await agent.close();
    await bridge.stop();
    await mock.stop();
  }
  const written = readdirSync(directory).filter((name) => !before.has(name));
  process.stdout.write(`profile: ${written.map((name) => resolve(directory, name)).join(', ')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
