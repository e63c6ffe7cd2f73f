import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { makeBundleAscii } from '../../scripts/ascii-bundle.mjs';
import { BRIDGE_WORKER_FILE } from '../../src/server/start-bridge-in-worker.ts';
import { makeTempDir } from './cleanup.ts';
import { REPOSITORY_ROOT } from './repository-files.ts';

/**
 * The bridge's worker thread for tests. Tests run the TypeScript sources through tsx, which does not
 * reach into worker threads, and dist/bridge-worker.js may be older than the sources under test.
 * So the worker is bundled from the current sources, the way scripts/build.mjs bundles it (as ASCII), once per
 * test process into a temp folder that is removed when the process exits.
 */
let script: string | null = null;

export function bridgeWorkerScript(): string {
  if (script !== null) return script;
  const outfile = join(makeTempDir('freeform-bridge-worker-'), BRIDGE_WORKER_FILE);
  buildSync({
    entryPoints: [join(REPOSITORY_ROOT, 'src/server/bridge-worker-entry.ts')],
    outfile,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    bundle: true,
    sourcemap: 'inline',
    logLevel: 'error',
  });
  makeBundleAscii(outfile);
  script = outfile;
  return outfile;
}

/**
 * A worker script that announces itself the way the bridge does and then fails the way a bug in the
 * bridge would (an uncaught error): what the host does when its worker dies under it.
 */
export function writeCrashingWorkerScript(errorMessage: string): string {
  const path = join(makeTempDir('freeform-bridge-crash-'), 'crashing-worker.js');
  writeFileSync(
    path,
    `const { parentPort } = require('node:worker_threads');
parentPort.postMessage({ type: 'listening', url: 'http://127.0.0.1:1', host: '127.0.0.1', port: 1, instanceId: 'crash' });
setTimeout(() => { throw new Error(${JSON.stringify(errorMessage)}); }, 20);
`,
  );
  return path;
}

/** The worker threads alive in this process, by thread id (Node's diagnostic report lists each; tsx runs some of its own). */
export function liveWorkerThreadIds(): number[] {
  const report = process.report.getReport() as unknown as { workers: Array<{ header: { threadId: number } }> };
  return report.workers.map((worker) => worker.header.threadId);
}
