/**
 * The same suites through @vscode/test-electron, for machines that can download desktop VS Code
 * (it fetches the build from Microsoft's update server at run time, so it cannot work offline; the
 * offline runner is run-vscode-tests.ts). Usage, after `npm run build && npm run build:vscode-tests`:
 *   node --import tsx test/vscode/run-test-electron.ts   (FREEFORM_BRIDGE_VSCODE_VERSION=1.95.0 to pin)
 */
import { resolve } from 'node:path';
import { runTests } from '@vscode/test-electron';

async function main(): Promise<void> {
  try {
    await runTests({
      version: process.env.FREEFORM_BRIDGE_VSCODE_VERSION ?? 'stable',
      extensionDevelopmentPath: resolve('.'),
      extensionTestsPath: resolve('out/test/vscode/suite/index.js'),
      // Other installed extensions would share the host and could hold the ports or the settings.
      launchArgs: [resolve('test/vscode/fixtures/workspace'), '--disable-extensions', '--disable-workspace-trust'],
    });
  } catch (error) {
    console.error(error);
    process.exit(1);
  }
}

void main();
