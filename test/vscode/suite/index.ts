/**
 * Loaded by the extension host through extensionTestsPath: exports run(), the same contract as
 * @vscode/test-electron, so both runners (code-server and test-electron) use this one file.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import Mocha from 'mocha';
import { RESULT_MARKER } from './result-marker.ts';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', color: false, reporter: 'spec', timeout: 20_000 });
  // The bundler emits one <name>.test.js per suite beside this file.
  for (const file of readdirSync(__dirname).filter((name) => name.endsWith('.test.js')).sort()) mocha.addFile(join(__dirname, file));
  return new Promise((resolveRun, reject) => {
    const runner = mocha.run((failures) => {
      const stats = runner.stats;
      console.log(`${RESULT_MARKER}${JSON.stringify({ passed: stats?.passes ?? 0, failed: failures, skipped: stats?.pending ?? 0 })}`);
      if (failures > 0) reject(new Error(`${failures} extension tests failed`));
      else resolveRun();
    });
  });
}
