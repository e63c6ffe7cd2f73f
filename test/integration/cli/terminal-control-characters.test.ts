import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { itemsDone, postResponses, readCapture, readSseEvents } from '../../support/bridge-harness.ts';
import { makeTempDir, trackProcessGroup } from '../../support/cleanup.ts';
import { answerWithControlSequences, HOSTILE_ENGINE_TEXT } from '../../../mock-backend/hostile-backend.ts';
import { startScriptedBackend, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';

/**
 * What an engine, a model or a local client writes reaches the user's terminal only as visible text:
 * `serve` through a round trip (its start-up line, the round-trip, tally and warning lines), `doctor`
 * and `codex-config`, each run as the user runs it, against an engine whose every id and text carries
 * control sequences. The CLI runs from the sources (tsx), so the test reads what the code prints now.
 */

/** C0 controls but tab and line feed, DEL, and C1: what a terminal may act on instead of showing. */
const FOREIGN_CONTROL = /(?![\t\n])\p{Cc}/gu;

function countForeignControls(text: string): number {
  return text.match(FOREIGN_CONTROL)?.length ?? 0;
}

interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once stderr matches `pattern`; rejects when the CLI exits first. */
  stderrMatches: (pattern: RegExp) => Promise<void>;
  /** The exit code, once every byte the CLI wrote has been read. */
  finished: Promise<number | null>;
}

function runCli(args: string[]): CliRun {
  const child = trackProcessGroup(spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env, detached: true }));
  let stdout = '';
  let stderr = '';
  const waiting = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    for (const check of waiting) check();
  });
  const finished = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const stderrMatches = (pattern: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!pattern.test(stderr)) return;
        waiting.delete(check);
        resolve();
      };
      waiting.add(check);
      check();
      void finished.then(() => {
        if (waiting.delete(check)) reject(new Error(`the CLI ended without printing ${pattern} on stderr: ${stderr}`));
      });
    });
  return { child, stdout: () => stdout, stderr: () => stderr, stderrMatches, finished };
}

/** What the terminal shows for each attack, as the bridge prints it. */
const VISIBLE_ATTACK = String.raw`\x1b]52;c;ZWNobyBQV05FRAo=\x07\x1b]0;owned\x07\x1b]2;owned\x1b\\x1b[1A\x1b[2K\x00\x9b2J\x7f\x0dX`;

/** Runs a hostile round trip and codex-config through a running `serve`, then stops it and reads what it printed. */
async function checkServe(serve: CliRun): Promise<void> {
  await serve.stderrMatches(/backend vLLM/);
  const url = /(http:\/\/\S+)\n/.exec(serve.stdout())![1]!;

  // A local client names the hostile model too: the request's `model` is printed on the round-trip line.
  const exchange = await readSseEvents(await postResponses(url, { ...readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json'), model: HOSTILE_ENGINE_TEXT.model }));
  assert.deepEqual(
    itemsDone(exchange.events).map((item) => [item.type, item.call_id]),
    [
      ['custom_tool_call', HOSTILE_ENGINE_TEXT.callId],
      ['function_call', `${HOSTILE_ENGINE_TEXT.callId}2`],
    ],
    'the ids reach Codex unchanged: only the terminal sees them escaped',
  );
  await serve.stderrMatches(/warning grammar_mismatch/);

  // codex-config against the running bridge: the one model it lists is refused before any note names it.
  const codexHome = makeTempDir('freeform-bridge-hostile-codex-');
  const codexConfig = runCli(['codex-config', '--base-url', `${url}/v1`, '--codex-home', codexHome]);
  const codexConfigCode = await codexConfig.finished;

  serve.child.kill('SIGTERM');
  assert.equal(await serve.finished, 0);
  const printed = serve.stdout() + serve.stderr();
  assert.equal(countForeignControls(printed), 0, `serve wrote foreign control characters:\n${JSON.stringify(printed)}`);
  const stderr = serve.stderr();
  assert.ok(stderr.includes(`vLLM 0.20.0${VISIBLE_ATTACK}`), `the engine version, visible:\n${stderr}`);
  assert.ok(stderr.includes(`model${VISIBLE_ATTACK}`), 'the model id, visible');
  assert.ok(stderr.includes(`calls: apply_patch, shell${VISIBLE_ATTACK}`), 'the tool name, visible');
  assert.match(stderr, /warning grammar_mismatch {2}apply_patch call_\\x1b\]52;c;/, 'the call id, visible');
  assert.ok(stderr.includes(`'\\x1b]52;c;ZWNobyBQV05FRAo=\\x07`), 'the patch line the warning quotes, visible');

  assert.equal(codexConfigCode, 2, codexConfig.stderr());
  assert.equal(countForeignControls(codexConfig.stdout() + codexConfig.stderr()), 0, `codex-config wrote foreign control characters:\n${JSON.stringify(codexConfig.stderr())}`);
  assert.ok(codexConfig.stderr().includes(`model name 'model${VISIBLE_ATTACK}' is not allowed`), codexConfig.stderr());
  assert.doesNotMatch(codexConfig.stderr(), /^note: model/m, 'an id is checked before it is printed');
  assert.deepEqual(readdirSync(codexHome), [], 'nothing written');
}

describe('text from the engine and its clients reaches the terminal without control characters', { timeout: 120_000 }, () => {
  let engine: ScriptedBackend;
  before(async () => {
    engine = await startScriptedBackend();
    engine.setHandlers(answerWithControlSequences);
  });
  after(async () => {
    await engine.close();
  });

  it('serve: the start-up line, a round trip with its warnings, and codex-config against it', async () => {
    const serve = runCli(['serve', '--backend', engine.url, '--port', '0']);
    try {
      await checkServe(serve);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.finished;
    }
  });

  it('doctor: the table and the JSON report', async () => {
    const table = runCli(['doctor', '--backend', engine.url]);
    await table.finished;
    const printed = table.stdout() + table.stderr();
    assert.equal(countForeignControls(printed), 0, `doctor wrote foreign control characters:\n${JSON.stringify(printed)}`);
    assert.ok(table.stdout().includes(`vLLM 0.20.0${VISIBLE_ATTACK} at ${engine.url}, model 'model${VISIBLE_ATTACK}'`), table.stdout());

    // JSON keeps its own escapes: the report still parses to the engine's exact texts.
    const json = runCli(['doctor', '--backend', engine.url, '--json']);
    await json.finished;
    assert.equal(countForeignControls(json.stdout() + json.stderr()), 0, `doctor --json wrote foreign control characters:\n${JSON.stringify(json.stdout())}`);
    const report = JSON.parse(json.stdout()) as { version: string; model: string };
    assert.deepEqual([report.version, report.model], [HOSTILE_ENGINE_TEXT.version, HOSTILE_ENGINE_TEXT.model]);
  });
});
