import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { trackChild } from '../../support/cleanup.ts';

/*
 * What configureDedicatedProcess does to a real Node process. WebAssembly compiled after it runs
 * stays Liftoff code however hot it gets, where without it V8 compiles a hot function again with
 * TurboFan (the compile whose memory the setting avoids); V8's own test functions
 * (`%IsTurboFanFunction`, `%IsLiftoffFunction`, behind --allow-natives-syntax) say which compiler
 * made the function. And the young generation's
 * new space stays near its cap under a load whose survivors make V8 grow it to its maximum without it.
 * Each case runs in a fresh process, since V8's flags are the process's.
 */

const MODULE_PATH = resolve('src/server/dedicated-process.ts');

/** (func (export "f") (param i32) (result i32) local.get 0 i32.const 1 i32.add) */
const WASM_BYTES = [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 6, 1, 0x60, 1, 0x7f, 1, 0x7f, 3, 2, 1, 0, 7, 5, 1, 1, 0x66, 0, 0, 0x0a, 9, 1, 7, 0, 0x20, 0, 0x41, 1, 0x6a, 0x0b];

async function runScript(script: string, nodeArguments: string[] = []): Promise<string> {
  const child = trackChild(spawn(process.execPath, [...nodeArguments, '--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolveExit) => child.once('exit', resolveExit));
  assert.equal(code, 0, stderr);
  // An unknown flag is not an error in V8: it prints one and goes on. A Node whose V8 dropped the flag must fail here.
  assert.doesNotMatch(stderr, /unrecognized flag/);
  return stdout;
}

/** Calls a WebAssembly function until V8 has tiered it up to TurboFan, or for 2 s, and says which code it ran last. */
async function runHotAndReportTier(configure: boolean): Promise<{ turbofan: boolean; liftoff: boolean; result: number }> {
  const script = [
    configure ? `require(${JSON.stringify(MODULE_PATH)}).configureDedicatedProcess();` : '',
    `const f = new WebAssembly.Instance(new WebAssembly.Module(Uint8Array.from(${JSON.stringify(WASM_BYTES)}))).exports.f;`,
    'const started = Date.now();',
    'let result = 0;',
    'function turn() {',
    '  for (let i = 0; i < 100000; i++) result = f(41);',
    '  if (%IsTurboFanFunction(f) || Date.now() - started > 2000) process.stdout.write(JSON.stringify({ turbofan: %IsTurboFanFunction(f), liftoff: %IsLiftoffFunction(f), result }));',
    '  else setImmediate(turn);',
    '}',
    'turn();',
  ].join('\n');
  return JSON.parse(await runScript(script, ['--allow-natives-syntax'])) as { turbofan: boolean; liftoff: boolean; result: number };
}

/**
 * The largest new space seen while objects that live across a few GCs are allocated for a while, as
 * requests in flight do, a turn of the event loop at a time (the cap acts after each GC).
 */
async function largestNewSpaceUnderLoad(configure: boolean): Promise<{ largest: number; cap: number }> {
  const script = [
    `const dedicated = require(${JSON.stringify(MODULE_PATH)});`,
    configure ? 'dedicated.configureDedicatedProcess();' : '',
    "const { getHeapSpaceStatistics } = require('node:v8');",
    "const newSpace = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;",
    'const inFlight = [];',
    'let largest = 0;',
    'function turn(index) {',
    '  for (let i = 0; i < 20000; i++) { inFlight.push({ index, text: `request ${index} ${i}`, parts: [i] }); if (inFlight.length > 50000) inFlight.splice(0, 25000); }',
    '  largest = Math.max(largest, newSpace());',
    '  if (index < 200) setImmediate(turn, index + 1);',
    '  else process.stdout.write(JSON.stringify({ largest, cap: dedicated.DEDICATED_PROCESS_NEW_SPACE_CAP_BYTES }));',
    '}',
    'turn(0);',
  ].join('\n');
  return JSON.parse(await runScript(script)) as { largest: number; cap: number };
}

describe('configureDedicatedProcess', { timeout: 60_000 }, () => {
  it('runs WebAssembly on Liftoff code however hot it gets, never compiling it again with TurboFan', async () => {
    assert.deepEqual(await runHotAndReportTier(true), { turbofan: false, liftoff: true, result: 42 });
  });

  it('changes what V8 does by default (a hot function tiered up to TurboFan), so the case above can fail', async () => {
    assert.deepEqual(await runHotAndReportTier(false), { turbofan: true, liftoff: false, result: 42 });
  });

  it('holds the young generation\'s new space below its next doubling under a load that survives GCs', async () => {
    const { largest, cap } = await largestNewSpaceUnderLoad(true);
    // Node 20's and 22's V8 stop at the cap. Node 24's reports a few pages more for a GC or two before
    // it shrinks back (19.5–27.5 MB seen against 16) but never doubles it. Without the setting V8
    // doubles the space up to its maximum: 32 MB with Node 20, 128 MB with Node 24.
    assert.ok(largest > 0 && largest < 2 * cap, `the new space reached ${largest} bytes (cap ${cap})`);
  });

  it('changes what V8 does by default (the new space grows past the cap under the same load), so the case above can fail', async () => {
    const { largest, cap } = await largestNewSpaceUnderLoad(false);
    assert.ok(largest > cap, `the new space reached only ${largest} bytes (cap ${cap})`);
  });
});
