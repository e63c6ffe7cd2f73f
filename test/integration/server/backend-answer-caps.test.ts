import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { failedStreamError, jsonError, runExchange, waitUntil } from '../../support/exchange-outcome.ts';
import { answerEndlessErrorBody, answerEndlessJson, answerHtmlPage, streamEndlessLine, streamEndlessText, streamEndlessToolArguments, streamInvalidUtf8 } from '../../../mock-backend/hostile-backend.ts';
import { answerWithText, startScriptedBackend, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';
import { MAX_ERROR_BODY_BYTES, MAX_JSON_ANSWER_BYTES } from '../../../src/server/upstream-client.ts';
import { MAX_ANSWER_OUTPUT_CHARS } from '../../../src/core/stream/chat-stream-to-responses-events.ts';
import { MAX_SSE_LINE_CHARS } from '../../../src/core/sse/sse-decoder.ts';

/**
 * A backend cannot take the bridge's memory: every answer the bridge holds whole (an error body, a
 * JSON answer to a stream request, the text kept for the `*.done` events, one SSE line) has a cap.
 * Over it, the exchange fails with a message naming the cap and the backend's socket is cut. Each
 * hostile answer here goes a few MB past its cap and then ends by itself, so a bridge without the cap
 * fails the assertions instead of hanging. And answers that are not what they claim (a web page, bytes
 * that are not UTF-8) are named for what they are, not a generic failure.
 */

const STREAM = { model: 'qwen3-coder', input: 'hi', stream: true };
const MIB = 1024 * 1024;
const PAST_CAP = 8 * MIB;

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

async function assertBackendCut(): Promise<void> {
  const request = backend.requests.at(-1);
  assert.ok(request);
  await waitUntil(() => request.aborted, 'the bridge to cut the backend socket');
}

describe('caps on what a backend can make the bridge hold', () => {
  it('endless text deltas: response.failed naming the output cap, and the backend socket cut', async () => {
    backend.setHandlers(streamEndlessText(MAX_ANSWER_OUTPUT_CHARS + PAST_CAP));
    const observed = await runExchange(bridge, STREAM);
    const error = failedStreamError(observed.codex);
    assert.match(error.message, new RegExp(`more than ${MAX_ANSWER_OUTPUT_CHARS / MIB} MB of output`));
    await assertBackendCut();
  });

  it('endless tool-call arguments count toward the same cap', async () => {
    backend.setHandlers(streamEndlessToolArguments(MAX_ANSWER_OUTPUT_CHARS + PAST_CAP));
    const observed = await runExchange(bridge, STREAM);
    assert.match(failedStreamError(observed.codex).message, new RegExp(`more than ${MAX_ANSWER_OUTPUT_CHARS / MIB} MB of output`));
    await assertBackendCut();
  });

  it('an endless error body: the error names the cap, and the socket is cut', async () => {
    backend.setHandlers(answerEndlessErrorBody(MAX_ERROR_BODY_BYTES + PAST_CAP));
    const observed = await runExchange(bridge, { ...STREAM, stream: false });
    const error = jsonError(observed.codex);
    assert.match(error.message, new RegExp(`error body is larger than ${MAX_ERROR_BODY_BYTES / MIB} MB`));
    await assertBackendCut();
  });

  it('an endless JSON answer to a stream request: response.failed naming the cap, and the socket is cut', async () => {
    backend.setHandlers(answerEndlessJson(MAX_JSON_ANSWER_BYTES + PAST_CAP));
    const observed = await runExchange(bridge, STREAM);
    assert.match(failedStreamError(observed.codex).message, new RegExp(`JSON answer is larger than ${MAX_JSON_ANSWER_BYTES / MIB} MB`));
    await assertBackendCut();
  });

  it('one SSE line without end: response.failed naming the line cap, and the socket is cut', async () => {
    backend.setHandlers(streamEndlessLine(MAX_SSE_LINE_CHARS + PAST_CAP));
    const observed = await runExchange(bridge, STREAM);
    assert.match(failedStreamError(observed.codex).message, new RegExp(`line longer than ${MAX_SSE_LINE_CHARS / MIB} MB`));
    await assertBackendCut();
  });

  it('a 10 MB answer, under every cap, still arrives whole', async () => {
    const text = 'ten megabytes of answer '.repeat((10 * MIB) / 24);
    backend.setHandlers(answerWithText(text));
    const observed = await runExchange(bridge, STREAM);
    assert.equal(observed.codex.kind === 'stream' ? observed.codex.terminal.type : 'json', 'response.completed');
    assert.equal(observed.end.output.length, 1);
    const item = observed.end.output[0] as { content: Array<{ text: string }> };
    assert.equal(item.content[0]!.text, text);
  });
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
