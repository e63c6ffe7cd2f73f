// Runs node's test runner over a test tier. Node 20's `--test` does not expand globs itself.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = process.argv.slice(2);
if (roots.length === 0) {
  console.error('usage: node scripts/run-tests.mjs <test folder>...');
  process.exit(2);
}

function collect(folder) {
  return readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return collect(path);
    return entry.endsWith('.test.ts') ? [path] : [];
  });
}

const files = roots.flatMap(collect).sort();
if (files.length === 0) {
  console.error(`no *.test.ts files under ${roots.join(', ')}`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
