// Packs the VS Code extension into freeform-bridge-<version>.vsix at the repository root with @vscode/vsce
// (`npm run package`), offline, and the CLI's npm tarball next to it (scripts/pack-npm.mjs).
//
// Why a staging folder: package.json's "files" is the allow-list of the npm tarball (the CLI), and vsce
// refuses a .vscodeignore next to a "files" property, yet the extension needs a different list. So the
// files the .vsix may hold are copied into a temporary folder whose package.json lists exactly those,
// and vsce packs that folder (it still validates the manifest, the icon, the entry point and the README).
//
// In the .vsix: dist/ without the CLI bundle and source maps (so the extension and the bridge's worker thread, bridge-worker.js), media/ without webview sources
// (*.ts, tsconfig, files whose built copy is in dist/media/), README.md, CHANGELOG.md, LICENSE and package.json.
//
// Usage: node scripts/package-vsix.mjs [--out FILE] [--no-build] [--ls]
//   --out FILE   where to write the .vsix (default: ./<name>-<version>.vsix); the .tgz goes into the same folder
//   --no-build   use dist/ as it is instead of running scripts/build.mjs first
//   --ls         print the files the .vsix would hold (vsce ls in the staging folder) and write nothing
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const listOnly = argv.includes('--ls');
const build = !argv.includes('--no-build') && !listOnly;
const outIndex = argv.indexOf('--out');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const out = outIndex >= 0 ? resolve(argv[outIndex + 1] ?? '') : join(root, `${manifest.name}-${manifest.version}.vsix`);

/** Top-level entries of the .vsix besides package.json, and what is left out of the two folders. */
const DOCUMENTS = ['README.md', 'CHANGELOG.md', 'LICENSE'];
const leaveOut = {
  dist: (path) => path === 'cli.js' || path.endsWith('.map'),
  // Webview sources: TypeScript, and any file esbuild copies into dist/media/ (the panel loads only that copy).
  media: (path) => /\.(ts|tsx|map)$/.test(path) || /(^|\/)tsconfig[^/]*\.json$/.test(path) || existsSync(join(root, 'dist', 'media', path)),
};

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`package-vsix: ${[command, ...args].join(' ')} failed (${result.status ?? result.signal})`);
    process.exit(1);
  }
}

function filesUnder(folder) {
  return readdirSync(folder, { recursive: true })
    .map(String)
    .filter((path) => statSync(join(folder, path)).isFile())
    .map((path) => path.split('\\').join('/'));
}

if (build) run(process.execPath, [join(root, 'scripts', 'build.mjs')], root);
if (!existsSync(join(root, manifest.main))) {
  console.error(`package-vsix: ${manifest.main} is missing; run npm run build`);
  process.exit(1);
}

const stage = mkdtempSync(join(tmpdir(), 'freeform-bridge-vsix-'));
try {
  for (const [folder, skip] of Object.entries(leaveOut)) {
    for (const path of filesUnder(join(root, folder))) {
      if (!skip(path)) cpSync(join(root, folder, path), join(stage, folder, path));
    }
  }
  for (const document of DOCUMENTS) cpSync(join(root, document), join(stage, document));
  // Everything was built above: no script may run in the staging folder (vsce would run vscode:prepublish).
  const staged = { ...manifest, files: ['dist/**', 'media/**', ...DOCUMENTS] };
  delete staged.scripts;
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(staged, null, 2)}\n`);

  const vsce = join(dirname(createRequire(import.meta.url).resolve('@vscode/vsce/package.json')), 'vsce');
  if (listOnly) {
    run(process.execPath, [vsce, 'ls', '--no-dependencies'], stage);
  } else {
    // Relative README links become https://github.com/…/blob/HEAD/… links from "repository".
    run(process.execPath, [vsce, 'package', '--no-dependencies', '--out', out], stage);
    console.log(`package-vsix: ${relative(process.cwd(), out) || out} (${(statSync(out).size / 1024).toFixed(0)} KiB)`);
    run(process.execPath, [join(root, 'scripts', 'pack-npm.mjs'), '--no-build', '--out-dir', dirname(out)], root);
  }
} finally {
  rmSync(stage, { recursive: true, force: true });
}
