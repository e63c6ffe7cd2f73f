import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startMockBackend, type MockBackend } from '../../support/mock-backend/create-mock-backend.ts';
import { postResponses, readCapture, readSseEvents, itemsDone } from '../../support/bridge-harness.ts';

/** Runs the built CLI the way the README tells a user to: `npx freeform-bridge serve …`. */
function startCli(args: string[], environment: Record<string, string> = {}): { child: ChildProcess; firstLine: Promise<string>; stderr: () => string } {
  const child = spawn('npx', ['--no-install', 'freeform-bridge', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...environment },
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const firstLine = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`CLI exited with ${code} before printing a line: ${stderr}`)));
  });
  return { child, firstLine, stderr: () => stderr };
}

function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

describe('freeform-bridge CLI', () => {
  let backend: MockBackend;
  before(async () => {
    backend = await startMockBackend({ profile: 'vllm-qwen3coder' });
  });
  after(async () => {
    await backend.close();
  });

  it('serves Codex requests, writes the exchange log and stops cleanly on SIGTERM', async () => {
    const logFile = join(mkdtempSync(join(tmpdir(), 'freeform-bridge-cli-')), 'exchanges.jsonl');
    const cli = startCli(['serve', '--backend', backend.url, '--port', '0', '--log-file', logFile, '--model', 'served-model'], {});
    const line = await cli.firstLine;
    const match = /^freeform-bridge listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
    assert.ok(match, `unexpected ready line: ${line}`);
    const url = match[1]!;

    backend.enqueue({ toolCalls: [{ name: 'apply_patch', input: '*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n' }] });
    const exchange = await readSseEvents(await postResponses(url, readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json')));
    assert.equal(itemsDone(exchange.events)[0]?.type, 'custom_tool_call');
    assert.equal((backend.requests.at(-1)?.body as { model: string }).model, 'served-model');

    cli.child.kill('SIGTERM');
    assert.equal(await exitCode(cli.child), 0);
    const records = readFileSync(logFile, 'utf8').trim().split('\n').map((text) => JSON.parse(text) as Record<string, unknown>);
    assert.equal(records.length, 1);
    assert.equal(records[0]?.outcome, 'completed');
    assert.equal((records[0]?.output as Array<{ type: string }>)[0]?.type, 'custom_tool_call');
    assert.ok(records[0]?.loweredRequest, 'the lowered request is logged');
  });

  it('exits with a clear usage error when --backend is missing', async () => {
    const cli = startCli(['serve']);
    assert.equal(await exitCode(cli.child), 2);
    assert.match(cli.stderr(), /--backend URL is required/);
  });

  it('refuses a port that is already in use', async () => {
    const first = startCli(['serve', '--backend', backend.url, '--port', '0']);
    const port = /:(\d+)$/.exec(await first.firstLine)![1]!;
    const second = startCli(['serve', '--backend', backend.url, '--port', port]);
    assert.notEqual(await exitCode(second.child), 0);
    assert.match(second.stderr(), new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
    first.child.kill('SIGINT');
    assert.equal(await exitCode(first.child), 0);
  });
});
