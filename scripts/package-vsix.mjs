// `npm run package`: the VS Code extension as freeform-bridge-<version>.vsix at the repository root, and
// the CLI's npm tarball next to it (scripts/pack-npm.mjs).
//
// The .vsix is what `npx @vscode/vsce package` makes at the root: vsce runs the vscode:prepublish script
// (the build), package.json is the extension's manifest and .vscodeignore chooses the files (the
// extension's bundles, the webview's built script and styles, the icon, the walkthrough, README,
// CHANGELOG, LICENSE). This script only adds the tarball and the offline, dependency-free defaults.
//
// Usage: node scripts/package-vsix.mjs [--out FILE] [--pre-release]
//   --out FILE       where to write the .vsix (default: ./<name>-<version>.vsix); the .tgz goes into the same folder
//   --pre-release    mark the .vsix as a pre-release (the Marketplace and Open VSX publish it as one only if so)
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const outIndex = argv.indexOf('--out');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const out = outIndex >= 0 ? resolve(argv[outIndex + 1] ?? '') : join(root, `${manifest.name}-${manifest.version}.vsix`);

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`package-vsix: ${[command, ...args].join(' ')} failed (${result.status ?? result.signal})`);
    process.exit(1);
  }
}

const vsce = join(dirname(createRequire(import.meta.url).resolve('@vscode/vsce/package.json')), 'vsce');
// Relative README links become https://github.com/…/blob/HEAD/… links from "repository".
run(process.execPath, [vsce, 'package', '--out', out, ...(argv.includes('--pre-release') ? ['--pre-release'] : [])]);
console.log(`package-vsix: ${relative(process.cwd(), out) || out} (${(statSync(out).size / 1024).toFixed(0)} KiB)`);
run(process.execPath, [join(root, 'scripts', 'pack-npm.mjs'), '--no-build', '--out-dir', dirname(out)]);
