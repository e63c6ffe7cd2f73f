import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startMockBackend, type MockBackend } from '../../../mock-backend/create-mock-backend.ts';
import { postResponses, readCapture, readSseEvents, itemsDone } from '../../support/bridge-harness.ts';
import { startScriptedBackend } from '../../../mock-backend/scripted-backend.ts';
import { sendNoHeaders } from '../../../mock-backend/hostile-backend.ts';
import { makeTempDir, trackProcessGroup, waitForProcessGroupExit } from '../../support/cleanup.ts';

/**
 * Runs the built CLI the way the README tells a user to (`npx freeform-bridge serve …`), or the bundle
 * directly with `node` where a test needs the bridge's own exit code: npm runs the bin through
 * `sh -c`, which does not pass signals on, so signal tests talk to the node process itself.
 */
function startCli(
  args: string[],
  launcher: 'npx' | 'node' = 'npx',
): { child: ChildProcess; firstLine: Promise<string>; stdout: () => string; stderr: () => string; stopGroup: () => void; outputClosed: Promise<void> } {
  const [command, prefix] = launcher === 'npx' ? ['npx', ['--no-install', 'freeform-bridge']] : [process.execPath, ['dist/cli.js']];
  // Its own process group, so a test can stop npm, the shell and the bridge together; tracked, so the
  // group is killed when this file's process ends, whatever path a test took.
  const child = trackProcessGroup(
    spawn(command, [...prefix, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
      detached: true,
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  // Every process of the group writes to the same pipes: they close once the last of them has exited
  // and everything written has been read.
  const outputClosed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const firstLine = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`CLI exited with ${code} before printing a line: ${stderr}`)));
  });
  // Tests that expect an early exit never await the ready line; keep its rejection from going unhandled.
  firstLine.catch(() => undefined);
  const stopGroup = (): void => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  return { child, firstLine, stdout: () => stdout, stderr: () => stderr, stopGroup, outputClosed };
}

function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

describe('freeform-bridge CLI', { timeout: 120_000 }, () => {
  let backend: MockBackend;
  before(async () => {
    backend = await startMockBackend({ profile: 'vllm-qwen3coder' });
  });
  after(async () => {
    await backend.close();
  });

  it('serves Codex requests through npx and writes the exchange log', async () => {
    const logFile = join(makeTempDir('freeform-bridge-cli-'), 'exchanges.jsonl');
    const cli = startCli(['serve', '--backend', backend.url, '--port', '0', '--log-file', logFile, '--model', 'served-model']);
    const line = await cli.firstLine;
    const match = /^freeform-bridge listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
    assert.ok(match, `unexpected ready line: ${line}`);
    const url = match[1]!;

    backend.enqueue({ toolCalls: [{ name: 'apply_patch', input: '*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n' }] });
    const exchange = await readSseEvents(await postResponses(url, readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json')));
    assert.equal(itemsDone(exchange.events)[0]?.type, 'custom_tool_call');
    assert.equal((backend.requests.at(-1)?.body as { model: string }).model, 'served-model');

    // npx may exit before the bridge under it has flushed the log: wait for the whole group.
    cli.stopGroup();
    await waitForProcessGroupExit(cli.child.pid!);
    const records = readFileSync(logFile, 'utf8').trim().split('\n').map((text) => JSON.parse(text) as Record<string, unknown>);
    assert.equal(records.length, 1);
    assert.equal(records[0]?.outcome, 'completed');
    assert.equal((records[0]?.output as Array<{ type: string }>)[0]?.type, 'custom_tool_call');
    assert.ok(records[0]?.loweredRequest, 'the lowered request is logged');
    // The terminal shows the round trip in one line, without colours when stderr is not a terminal.
    await cli.outputClosed;
    assert.match(cli.stderr(), /^\d\d:\d\d:\d\d {2}\S+ {2}qwen3-coder → served-model {2}200 completed {2}\d+\.\d s {2}calls: apply_patch(?: {2}\d+ warnings?)?$/m);
    assert.ok(!cli.stderr().includes('\u001b['), 'no ANSI colours on a pipe');
  });

  /** `serve` with `options` through one apply_patch turn, stopped with SIGTERM; everything it printed is read. */
  async function serveOneTurn(options: string[]): Promise<{ cli: ReturnType<typeof startCli>; url: string }> {
    const cli = startCli(['serve', '--backend', backend.url, '--port', '0', ...options], 'node');
    const url = /(http:\/\/\S+)$/.exec(await cli.firstLine)![1]!;
    backend.enqueue({ toolCalls: [{ name: 'apply_patch', input: '*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n' }] });
    await readSseEvents(await postResponses(url, readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json')));
    cli.child.kill('SIGTERM');
    assert.equal(await exitCode(cli.child), 0);
    await cli.outputClosed;
    return { cli, url };
  }

  it('prints only the listening line on stdout, for scripts; the log on stderr records the address with the backend', async () => {
    const { cli, url } = await serveOneTurn([]);
    assert.equal(cli.stdout(), `freeform-bridge listening on ${url}\n`);
    assert.ok(cli.stderr().includes(`info: listening on ${url} {"backend":"${backend.url}"}`), cli.stderr());
    assert.match(cli.stderr(), /200 completed/);
  });

  it('--quiet keeps the warnings and drops the line per round trip; it cannot go with another log level', async () => {
    const { cli, url } = await serveOneTurn(['--quiet']);
    assert.equal(cli.stdout(), `freeform-bridge listening on ${url}\n`, 'quiet or not, scripts get the address');
    assert.match(cli.stderr(), /^\d\d:\d\d:\d\d {4}warning grammar_not_enforced {2}apply_patch \(no call\): /m);
    assert.doesNotMatch(cli.stderr(), /200 completed/);
    assert.doesNotMatch(cli.stderr(), /info: listening/);

    const conflicting = startCli(['serve', '--backend', backend.url, '--quiet', '--log-level', 'debug'], 'node');
    assert.equal(await exitCode(conflicting.child), 2);
    await conflicting.outputClosed;
    assert.match(conflicting.stderr(), /--quiet means --log-level warn; it cannot go with --log-level debug/);
  });

  it('stops cleanly on SIGTERM and SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const cli = startCli(['serve', '--backend', backend.url, '--port', '0'], 'node');
      const url = /(http:\/\/\S+)$/.exec(await cli.firstLine)![1]!;
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      cli.child.kill(signal);
      assert.equal(await exitCode(cli.child), 0, `exit code after ${signal}`);
      await assert.rejects(fetch(`${url}/healthz`), 'the port is closed');
    }
  });

  it('exits with a clear usage error when --backend is missing', async () => {
    const cli = startCli(['serve'], 'node');
    assert.equal(await exitCode(cli.child), 2);
    assert.match(cli.stderr(), /--backend URL is required/);
  });

  it('refuses a port that is already in use', async () => {
    const first = startCli(['serve', '--backend', backend.url, '--port', '0'], 'node');
    const port = /:(\d+)$/.exec(await first.firstLine)![1]!;
    const second = startCli(['serve', '--backend', backend.url, '--port', port], 'node');
    assert.notEqual(await exitCode(second.child), 0);
    assert.match(second.stderr(), new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
    first.child.kill('SIGINT');
    assert.equal(await exitCode(first.child), 0);
  });

  it('prints its version with --version and -V, at the top level and after serve', async () => {
    const expected = `${(JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version}\n`;
    for (const args of [['--version'], ['-V'], ['serve', '--version'], ['serve', '-V'], ['codex-config', '-V']]) {
      const cli = startCli(args, 'node');
      let stdout = '';
      cli.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      assert.equal(await exitCode(cli.child), 0, args.join(' '));
      assert.equal(stdout, expected, args.join(' '));
    }
  });

  it('refuses a --grammar-enforcement mode it does not know, naming the ones it does', async () => {
    const cli = startCli(['serve', '--backend', backend.url, '--grammar-enforcement', 'on'], 'node');
    assert.equal(await exitCode(cli.child), 2);
    assert.match(cli.stderr(), /--grammar-enforcement must be one of off, auto, escaped, value, got 'on'/);
  });

  it('names an unknown flag in one line and points at --help', async () => {
    const cli = startCli(['serve', '--backend', backend.url, '--prot', '8080'], 'node');
    assert.equal(await exitCode(cli.child), 2);
    assert.equal(cli.stderr(), "freeform-bridge: unknown option '--prot' (see `freeform-bridge serve --help`)\n");
  });

  it('prints one line per failed exchange at the default log level, and names a backend URL without /v1', async () => {
    const withoutVersion = backend.url.replace(/\/v1$/, '');
    const cli = startCli(['serve', '--backend', withoutVersion, '--port', '0'], 'node');
    const url = /(http:\/\/\S+)$/.exec(await cli.firstLine)![1]!;
    const answer = await postResponses(url, { ...readCapture('a_default_qwen3-coder_v0.171.req1.json'), stream: false });
    const body = (await answer.json()) as { error: { code: string; message: string } };
    assert.equal(answer.status, 400);
    assert.equal(body.error.code, 'backend_url_without_v1');
    assert.match(body.error.message, /^the backend URL \S+ does not end in \/v1/);
    cli.child.kill('SIGTERM');
    assert.equal(await exitCode(cli.child), 0);
    const lines = cli.stderr().trim().split('\n');
    assert.match(lines[0]!, /warn: the backend URL \S+ does not end in \/v1/, 'named at start-up');
    const failures = lines.filter((line) => / failed: HTTP /.test(line));
    assert.equal(failures.length, 1, cli.stderr());
    assert.match(failures[0]!, new RegExp(`failed: HTTP 400 backend_url_without_v1: .*\\(backend ${withoutVersion.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)$`));
  });

  it('--backend-timeout-seconds sets how long a silent backend is waited for, and is refused below its minimum', async () => {
    const refused = startCli(['serve', '--backend', backend.url, '--backend-timeout-seconds', '1'], 'node');
    assert.equal(await exitCode(refused.child), 2);
    assert.match(refused.stderr(), /--backend-timeout-seconds must be at least 5, got 1/);

    const silent = await startScriptedBackend();
    silent.setHandlers(sendNoHeaders);
    try {
      const cli = startCli(['serve', '--backend', silent.url, '--port', '0', '--backend-timeout-seconds', '5'], 'node');
      const url = /(http:\/\/\S+)$/.exec(await cli.firstLine)![1]!;
      const answer = await postResponses(url, { model: 'm', input: 'hi', stream: false });
      const body = (await answer.json()) as { error: { message: string } };
      assert.match(body.error.message, /sent nothing for 5 s; giving up \(the backend timeout: --backend-timeout-seconds/);
      cli.child.kill('SIGTERM');
      assert.equal(await exitCode(cli.child), 0);
    } finally {
      await silent.close();
    }
  });
});
