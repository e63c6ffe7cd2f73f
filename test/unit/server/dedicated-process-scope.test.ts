import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { build } from 'esbuild';

/*
 * configureDedicatedProcess sets V8 flags, which belong to the whole process. The CLI runs the bridge
 * alone and sets them; VS Code's extension host runs every extension, so neither the extension nor the
 * bridge's worker thread (which runs inside the extension host's process) may bundle it.
 */

const MODULE = 'src/server/dedicated-process.ts';

async function bundledInputs(entry: string): Promise<string[]> {
  const result = await build({ entryPoints: [resolve(process.cwd(), entry)], bundle: true, platform: 'node', format: 'cjs', target: 'node20', write: false, metafile: true, logLevel: 'error', outfile: 'out.js', external: ['vscode'] });
  return Object.keys(result.metafile.inputs);
}

describe('where the dedicated-process V8 settings are bundled', () => {
  it('the CLI has them', async () => {
    assert.ok((await bundledInputs('src/cli/main.ts')).includes(MODULE));
  });

  it('the extension and the bridge worker it starts do not', async () => {
    for (const entry of ['src/extension/extension.ts', 'src/server/bridge-worker-entry.ts']) {
      assert.ok(!(await bundledInputs(entry)).includes(MODULE), `${entry} bundles ${MODULE}`);
    }
  });
});
