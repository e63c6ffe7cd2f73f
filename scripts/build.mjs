// Bundles the CLI, the extension, the bridge's worker thread and the webview with esbuild. Type checking is separate (`npm run check-types`).
import * as esbuild from 'esbuild';
import { existsSync } from 'node:fs';
import { makeBundleAscii } from './ascii-bundle.mjs';

const watch = process.argv.includes('--watch');
// A watch build is for debugging: its bundles point at their maps. Any other build is what gets packed,
// and the packages ship no maps, so its bundles reference none; the maps stay beside them in dist/ to
// read a stack trace from a packaged build by hand.
const sourcemap = watch ? 'linked' : 'external';

/** @type {esbuild.BuildOptions[]} */
const builds = [
  {
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    bundle: true,
    sourcemap,
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    entryPoints: ['src/extension/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    bundle: true,
    sourcemap,
    external: ['vscode'],
  },
  // The bridge's worker thread, started by dist/extension.js from the same folder (src/server/start-bridge-in-worker.ts).
  {
    entryPoints: ['src/server/bridge-worker-entry.ts'],
    outfile: 'dist/bridge-worker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    bundle: true,
    sourcemap,
  },
  // The traffic panel's webview: everything it loads lives in dist/media (its only localResourceRoot).
  {
    entryPoints: ['media/traffic-panel.ts'],
    outfile: 'dist/media/traffic-panel.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    bundle: true,
    sourcemap,
  },
  {
    entryPoints: ['media/traffic-panel.css'],
    outfile: 'dist/media/traffic-panel.css',
    bundle: true,
  },
].filter((options) => options.entryPoints.every((entry) => existsSync(entry)));

if (watch) {
  for (const options of builds) {
    const context = await esbuild.context(options);
    await context.watch();
  }
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
  // The bundles Node loads, as ASCII (scripts/ascii-bundle.mjs); the webview's are the browser's
  // business. A watch build, for development only, keeps esbuild's output as it is.
  for (const options of builds) if (options.platform === 'node') makeBundleAscii(options.outfile);
}
