/**
 * `node --import tsx bench/refusal-flood.ts [--cli dist/cli.js] [--seconds 10]`: what a process
 * without the token costs the bridge. Runs `serve` from the given bundle with a token and a log file,
 * sends refused requests from 50 connections for the given time, and prints how many were refused,
 * the stderr and log-file sizes, the bridge's peak RSS, and how long a trickling client without the
 * token keeps its socket (time from its head to the bridge closing the socket, capped at 30 s).
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readProcessStatus } from './child-process.ts';

const { values } = parseArgs({ options: { cli: { type: 'string' }, seconds: { type: 'string' } } });
const cliPath = resolve(values.cli ?? 'dist/cli.js');
const floodSeconds = Number(values.seconds ?? '10');

function refuse(port: number): Promise<void> {
  return new Promise((resolveDone) => {
    const outgoing = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/responses', headers: { 'content-type': 'application/json' } }, (response) => {
      response.resume();
      response.on('end', () => resolveDone());
      response.on('error', () => resolveDone());
    });
    outgoing.on('error', () => resolveDone());
    outgoing.end('{"model":"m","input":"hi"}');
  });
}

/** Seconds a client without the token that sends its body one byte at a time keeps its socket. */
function trickle(port: number, capSeconds: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolveSeconds) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(`POST /v1/responses HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n{`);
    const timer = setInterval(() => socket.write(' '), 100);
    const cap = setTimeout(() => socket.destroy(), capSeconds * 1000);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(cap);
      resolveSeconds((performance.now() - started) / 1000);
    });
  });
}

async function main(): Promise<void> {
  const logFile = join(mkdtempSync(join(tmpdir(), 'freeform-bridge-flood-')), 'exchanges.jsonl');
  const child = spawn(process.execPath, [cliPath, 'serve', '--backend', 'http://127.0.0.1:9/v1', '--port', '0', '--token-env', 'FLOOD_TOKEN', '--log-file', logFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, FLOOD_TOKEN: 'flood-token-0123456789' },
  });
  let stderrBytes = 0;
  const port = await new Promise<number>((resolvePort, reject) => {
    let text = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderrBytes += chunk.length;
      text += chunk.toString('utf8');
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(text);
      if (match?.[1]) resolvePort(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the bridge exited (${code}): ${text}`)));
  });
  const stderrAtStart = stderrBytes;
  const trickled = trickle(port, 30);
  let refused = 0;
  let peak = 0;
  const deadline = performance.now() + floodSeconds * 1000;
  const sampler = setInterval(() => (peak = Math.max(peak, readProcessStatus(child.pid!).residentBytes)), 200);
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (performance.now() < deadline) {
        await refuse(port);
        refused += 1;
      }
    }),
  );
  const trickleSeconds = await trickled;
  clearInterval(sampler);
  // Let the log writer catch up before reading its size.
  await new Promise((resolveWait) => setTimeout(resolveWait, 2_000));
  console.log(`bundle ${cliPath}: ${refused} refusals in ${floodSeconds} s; stderr ${stderrBytes - stderrAtStart} bytes; log file ${statSync(logFile).size} bytes; peak RSS ${(peak / 1024 / 1024).toFixed(0)} MB; a trickling client without the token kept its socket ${trickleSeconds.toFixed(1)} s (cap 30 s)`);
  child.kill('SIGKILL');
}

void main();
