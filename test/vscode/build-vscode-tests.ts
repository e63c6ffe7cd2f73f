/**
 * Bundles the real-VS-Code suites into out/test/vscode/suite/: index.js (the run() entry the
 * extension host loads), one <name>.test.js per suite and host-load-worker.js (a thread a suite
 * starts). `vscode` comes from the host and mocha from node_modules (its reporters are loaded
 * dynamically, which a bundle would break).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';

const suiteFolder = join('test', 'vscode', 'suite');
const entryPoints = [join(suiteFolder, 'index.ts'), join(suiteFolder, 'host-load-worker.ts'), ...readdirSync(suiteFolder).filter((name) => name.endsWith('.test.ts')).map((name) => join(suiteFolder, name))];

async function main(): Promise<void> {
  await esbuild.build({
    entryPoints,
    outdir: join('out', 'test', 'vscode', 'suite'),
    platform: 'node',
    format: 'cjs',
    // The oldest extension host the tests may meet: VS Code 1.95 runs Node 20.
    target: 'node20',
    bundle: true,
    sourcemap: 'inline',
    external: ['vscode', 'mocha'],
    logLevel: 'warning',
  });
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
