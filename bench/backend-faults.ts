/**
 * `node --import tsx bench/backend-faults.ts [--cli dist/cli.js] [--seconds 20] [--turns 1] [fault...]`: what a
 * hostile backend costs the bridge. Runs `serve` from the given bundle as a child (so its memory and
 * CPU are its own), points it at a backend from mock-backend/hostile-backend.ts that never ends its
 * answer, sends one streamed Codex turn and reads what comes back, and prints per fault: the bridge's
 * peak RSS during the turn, its RSS after the turn is over (idle), the CPU seconds it spent, the
 * slowest /healthz answer meanwhile, and how the turn ended. `--cli` lets the same run measure an
 * older bundle for a before/after comparison. Faults: text, arguments, line, error-body, json, line-30mb.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readProcessCpuMilliseconds, readProcessStatus } from './child-process.ts';
import { answerEndlessErrorBody, answerEndlessJson, streamEndlessLine, streamEndlessText, streamEndlessToolArguments } from '../mock-backend/hostile-backend.ts';
import { startScriptedBackend, type ScriptedHandler } from '../mock-backend/scripted-backend.ts';

const ENDLESS = Number.MAX_SAFE_INTEGER;
const FAULTS: Record<string, ScriptedHandler> = {
  text: streamEndlessText(ENDLESS),
  arguments: streamEndlessToolArguments(ENDLESS),
  line: streamEndlessLine(ENDLESS),
  'error-body': answerEndlessErrorBody(ENDLESS),
  json: answerEndlessJson(ENDLESS),
  // Not endless: one 30 MB line (under the cap), to compare the decoder's CPU cost before and after.
  'line-30mb': streamEndlessLine(30 * 1024 * 1024),
};

const { values, positionals } = parseArgs({ allowPositionals: true, options: { cli: { type: 'string' }, seconds: { type: 'string' }, turns: { type: 'string' } } });
const cliPath = resolve(values.cli ?? 'dist/cli.js');
const turnSeconds = Number(values.seconds ?? '20');
// More than one turn in a row tells memory kept from garbage not collected yet: kept memory adds up.
const turns = Number(values.turns ?? '1');
const faults = positionals.length > 0 ? positionals : Object.keys(FAULTS);

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}

async function startBridge(backendUrl: string): Promise<{ url: string; pid: number; stop(): void }> {
  const child = spawn(process.execPath, [cliPath, 'serve', '--backend', backendUrl, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let text = '';
    child.stderr.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (match?.[1]) resolveUrl(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`the bridge exited (${code}): ${text}`)));
  });
  child.stderr.resume();
  return { url, pid: child.pid!, stop: () => child.kill('SIGKILL') };
}

function timeHealthz(url: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolveTime) => {
    const outgoing = request(`${url}/healthz`, (response) => {
      response.resume();
      response.on('end', () => resolveTime(performance.now() - started));
    });
    outgoing.on('error', () => resolveTime(Number.NaN));
    outgoing.end();
  });
}

/** Posts one streamed turn and reads it to its end (or until `signal`); returns the last event's type and error. */
function runTurn(url: string, signal: AbortSignal): Promise<string> {
  return new Promise((resolveEnd) => {
    let tail = '';
    const outgoing = request(`${url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, signal }, (response) => {
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        tail = (tail + chunk).slice(-2000);
      });
      response.on('end', () => {
        const failed = /"message":"([^"]{0,160})/.exec(tail.slice(tail.lastIndexOf('event: ')));
        resolveEnd(`HTTP ${response.statusCode}, ${/event: (\S+)/.exec(tail.slice(tail.lastIndexOf('event: ')))?.[1] ?? 'no event'}${failed ? `: ${failed[1]}` : ''}`);
      });
      response.on('error', () => resolveEnd('cut'));
    });
    outgoing.on('error', (error) => resolveEnd(signal.aborted ? `still running after ${turnSeconds} s (aborted by the client)` : `error: ${error.message}`));
    outgoing.end(JSON.stringify({ model: 'm', input: 'hi', stream: true }));
  });
}

async function main(): Promise<void> {
  const backend = await startScriptedBackend();
  console.log(`bundle: ${cliPath}; turn limit ${turnSeconds} s`);
  for (const fault of faults) {
    const handler = FAULTS[fault];
    if (!handler) throw new Error(`unknown fault ${fault}; one of ${Object.keys(FAULTS).join(', ')}`);
    backend.setHandlers(handler);
    const bridge = await startBridge(backend.url);
    const idleBefore = readProcessStatus(bridge.pid).residentBytes;
    const cpuBefore = readProcessCpuMilliseconds(bridge.pid);
    let peak = idleBefore;
    let slowestHealthz = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, readProcessStatus(bridge.pid).residentBytes);
        slowestHealthz = Math.max(slowestHealthz, await timeHealthz(bridge.url));
        await new Promise((resolveWait) => setTimeout(resolveWait, 200));
      }
    })();
    const started = performance.now();
    let outcome = '';
    for (let turn = 0; turn < turns; turn += 1) outcome = await runTurn(bridge.url, AbortSignal.timeout(turnSeconds * 1000));
    const turnMs = performance.now() - started;
    const cpuTurn = readProcessCpuMilliseconds(bridge.pid) - cpuBefore;
    // Idle: the turn is over; what the bridge still holds later is what it keeps.
    await new Promise((resolveWait) => setTimeout(resolveWait, 10_000));
    sampling = false;
    await sampler;
    const idleAfter = readProcessStatus(bridge.pid).residentBytes;
    await new Promise((resolveWait) => setTimeout(resolveWait, 20_000));
    const idleLater = readProcessStatus(bridge.pid).residentBytes;
    console.log(
      `${fault.padEnd(10)} ${turns} turn(s)  peak RSS ${megabytes(peak).padStart(8)}  RSS 10 s after ${megabytes(idleAfter).padStart(8)}, 30 s after ${megabytes(idleLater).padStart(8)} (idle before ${megabytes(idleBefore)})  CPU ${(cpuTurn / 1000).toFixed(1)} s in ${(turnMs / 1000).toFixed(1)} s  slowest /healthz ${slowestHealthz.toFixed(0)} ms  turn: ${outcome}`,
    );
    bridge.stop();
  }
  await backend.close();
}

void main();
