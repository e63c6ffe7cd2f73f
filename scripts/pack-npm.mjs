// Packs the CLI into freeform-bridge-<version>.tgz (`npm run package` makes it next to the .vsix).
//
// Why not a plain `npm pack` of the clone: its package.json carries the clone's scripts, so the tarball
// would declare a `prepare` script (which builds dist/ after `npm ci` in a clone) and npm warns every
// user who installs it about an install script. The tarball is packed from a staging folder whose
// package.json keeps only what an installed CLI needs: no scripts, no devDependencies, no VS Code
// manifest. What it holds is package.json's "files": the self-contained CLI bundle and the documents.
//
// Usage: node scripts/pack-npm.mjs [--out-dir DIR] [--no-build]
//   prints the tarball's path on its last line
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const outIndex = argv.indexOf('--out-dir');
const outDirectory = outIndex >= 0 ? resolve(argv[outIndex + 1] ?? '') : root;
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const KEPT_FIELDS = ['name', 'displayName', 'description', 'version', 'license', 'repository', 'bugs', 'homepage', 'keywords', 'engines', 'bin', 'files'];

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (result.status !== 0) {
    console.error(`pack-npm: ${[command, ...args].join(' ')} failed (${result.status ?? result.signal})`);
    process.exit(1);
  }
  return result.stdout;
}

if (!argv.includes('--no-build')) run(process.execPath, [join(root, 'scripts', 'build.mjs')], root);
for (const file of manifest.files) {
  if (!existsSync(join(root, file))) {
    console.error(`pack-npm: ${file} is missing; run npm run build`);
    process.exit(1);
  }
}

const stage = mkdtempSync(join(tmpdir(), 'freeform-bridge-npm-'));
try {
  for (const file of manifest.files) cpSync(join(root, file), join(stage, file));
  const staged = Object.fromEntries(KEPT_FIELDS.filter((field) => field in manifest).map((field) => [field, manifest[field]]));
  // The Marketplace's engines.vscode means nothing to npm; Node's stays.
  staged.engines = { node: manifest.engines.node };
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(staged, null, 2)}\n`);
  const [report] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', outDirectory], stage));
  console.log(join(outDirectory, report.filename));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
