import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { failedStreamError, jsonError, runExchange } from '../../support/exchange-outcome.ts';
import { answerHtmlPage, streamInvalidUtf8 } from '../../support/hostile-backend.ts';
import { startScriptedBackend, type ScriptedBackend } from '../../support/scripted-backend.ts';

/** Answers that are not what they claim get named for what they are, not a generic failure. */

const STREAM = { model: 'qwen3-coder', input: 'hi', stream: true };
let backend: ScriptedBackend;
let bridge: StartedBridge;
before(async () => {
  backend = await startScriptedBackend();
  bridge = await startTestBridge({ backendUrl: backend.url });
});
after(async () => {
  await bridge.close();
  await backend.close();
});

describe('diagnosing a backend answer', () => {
  it('a 200 text/html page is named as an HTML page and the base URL questioned, streamed or not', async () => {
    backend.setHandlers(answerHtmlPage);
    const streamed = await runExchange(bridge, STREAM);
    assert.match(failedStreamError(streamed.codex).message, /answered with an HTML page \(text\/html\).*base URL/);
    const plain = await runExchange(bridge, { ...STREAM, stream: false });
    assert.match(jsonError(plain.codex).message, /answered with an HTML page \(text\/html\).*base URL/);
  });

  it('bytes that are not UTF-8 are replaced with U+FFFD and named in a warning', async () => {
    backend.setHandlers(streamInvalidUtf8);
    const observed = await runExchange(bridge, STREAM);
    assert.equal(observed.end.outcome, 'completed');
    const text = (observed.end.output[0] as { content: Array<{ text: string }> }).content[0]!.text;
    assert.equal(text, 'caf\uFFFD(\uFFFD');
    const warnings = observed.end.warnings.filter((warning) => warning.kind === 'invalid_utf8');
    assert.equal(warnings.length, 1, JSON.stringify(observed.end.warnings));
    assert.match(warnings[0]!.detail, /not valid UTF-8.*U\+FFFD/);
  });
});
