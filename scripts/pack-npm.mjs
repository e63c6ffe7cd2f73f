// Packs the CLI into freeform-bridge-<version>.tgz (`npm run package` makes it next to the .vsix).
//
// The repository's package.json is the VS Code extension's manifest (vsce reads it, with .vscodeignore
// choosing the .vsix's files). The CLI's npm package has a manifest of its own, written here into a
// staging folder: the extension's name, version, description and links, Node's engine, the bin, and the
// files the tarball holds (the self-contained CLI bundle and the documents). It has no scripts, so
// installing it runs nothing and npm warns about no install script, and no dependencies, since
// dist/cli.js bundles them all.
//
// Usage: node scripts/pack-npm.mjs [--out-dir DIR] [--no-build] [--print-manifest]
//   prints the tarball's path on its last line
//   --print-manifest   print the CLI's package.json and pack nothing
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const outIndex = argv.indexOf('--out-dir');
const outDirectory = outIndex >= 0 ? resolve(argv[outIndex + 1] ?? '') : root;
const extension = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const SHARED_FIELDS = ['name', 'displayName', 'description', 'version', 'license', 'repository', 'bugs', 'homepage', 'keywords'];
const FILES = ['dist/cli.js', 'README.md', 'CHANGELOG.md', 'LICENSE'];
const cliManifest = {
  ...Object.fromEntries(SHARED_FIELDS.filter((field) => field in extension).map((field) => [field, extension[field]])),
  // The Marketplace's engines.vscode means nothing to npm; Node's stays.
  engines: { node: extension.engines.node },
  // The same bin that makes `npx freeform-bridge` work inside a clone.
  bin: extension.bin,
  files: FILES,
};

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (result.status !== 0) {
    console.error(`pack-npm: ${[command, ...args].join(' ')} failed (${result.status ?? result.signal})`);
    process.exit(1);
  }
  return result.stdout;
}

if (argv.includes('--print-manifest')) {
  console.log(JSON.stringify(cliManifest, null, 2));
  process.exit(0);
}
if (!argv.includes('--no-build')) run(process.execPath, [join(root, 'scripts', 'build.mjs')], root);
for (const file of FILES) {
  if (!existsSync(join(root, file))) {
    console.error(`pack-npm: ${file} is missing; run npm run build`);
    process.exit(1);
  }
}

const stage = mkdtempSync(join(tmpdir(), 'freeform-bridge-npm-'));
try {
  for (const file of FILES) cpSync(join(root, file), join(stage, file));
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(cliManifest, null, 2)}\n`);
  const [report] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', outDirectory], stage));
  console.log(join(outDirectory, report.filename));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
