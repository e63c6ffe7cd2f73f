import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { trackChild } from '../../support/cleanup.ts';

/*
 * What configureDedicatedProcess does to a real Node process: WebAssembly compiled after it runs is
 * TurboFan code at once, where without it V8 starts with Liftoff code (the tier-up whose compiler
 * memory the setting avoids). Each case runs in a fresh process, since V8's flags are the process's;
 * V8's own test functions (`%IsTurboFanFunction`, `%IsLiftoffFunction`, behind
 * --allow-natives-syntax) say which compiler made the function.
 */

const MODULE_PATH = resolve('src/server/dedicated-process.ts');

/** (func (export "f") (param i32) (result i32) local.get 0 i32.const 1 i32.add) */
const WASM_BYTES = [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 6, 1, 0x60, 1, 0x7f, 1, 0x7f, 3, 2, 1, 0, 7, 5, 1, 1, 0x66, 0, 0, 0x0a, 9, 1, 7, 0, 0x20, 0, 0x41, 1, 0x6a, 0x0b];

async function compileAndReportTier(configure: boolean): Promise<{ turbofan: boolean; liftoff: boolean; result: number }> {
  const script = [
    configure ? `require(${JSON.stringify(MODULE_PATH)}).configureDedicatedProcess();` : '',
    `const f = new WebAssembly.Instance(new WebAssembly.Module(Uint8Array.from(${JSON.stringify(WASM_BYTES)}))).exports.f;`,
    'const result = f(41);',
    'process.stdout.write(JSON.stringify({ turbofan: %IsTurboFanFunction(f), liftoff: %IsLiftoffFunction(f), result }));',
  ].join('\n');
  const child = trackChild(spawn(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolveExit) => child.once('exit', resolveExit));
  assert.equal(code, 0, stderr);
  // An unknown flag is not an error in V8: it prints one and goes on. A Node whose V8 dropped the flag must fail here.
  assert.doesNotMatch(stderr, /unrecognized flag/);
  return JSON.parse(stdout) as { turbofan: boolean; liftoff: boolean; result: number };
}

describe('configureDedicatedProcess', { timeout: 60_000 }, () => {
  it('has WebAssembly compiled by TurboFan from the start', async () => {
    assert.deepEqual(await compileAndReportTier(true), { turbofan: true, liftoff: false, result: 42 });
  });

  it('changes what V8 does by default (Liftoff first), so the case above can fail', async () => {
    assert.deepEqual(await compileAndReportTier(false), { turbofan: false, liftoff: true, result: 42 });
  });
});
