import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from '../../../src/core/logger.ts';
import type { ExchangeDeltaEvent } from '../../../src/core/traffic/traffic-event.ts';
import { startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { failedStreamError, runExchange } from '../../support/exchange-outcome.ts';
import { answerNothing, sendNoHeaders } from '../../../mock-backend/hostile-backend.ts';
import { renderChunkFrame, startScriptedBackend, startSseResponse, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';

/**
 * A backend that says nothing (a hung engine, or a long prompt still being processed) is waited for
 * up to the backend timeout; Codex only sees keepalives meanwhile, so after a while the panel (a
 * warning on the exchange) and the terminal (a log line) say what the bridge waits for and how long
 * until it gives up. Here the notice comes after 1 s and the timeout after 3 s, instead of 60 and 900.
 */

const STREAM = { model: 'qwen3-coder', input: 'hi', stream: true };
const logLines: string[] = [];
const logger: Logger = {
  error: (message) => logLines.push(`error ${message}`),
  warn: (message) => logLines.push(`warn ${message}`),
  info: () => undefined,
  debug: () => undefined,
};

let backend: ScriptedBackend;
let bridge: StartedBridge;
before(async () => {
  backend = await startScriptedBackend();
  bridge = await startTestBridge({ backendUrl: backend.url, upstreamIdleTimeoutSeconds: 3, backendWaitNoticeSeconds: 1, commitGraceMs: 100, keepaliveSeconds: 1, logger });
});
after(async () => {
  await bridge.close();
  await backend.close();
});

function waitWarnings(exchangeId: string): string[] {
  return bridge.traffic
    .filter((event): event is ExchangeDeltaEvent => event.type === 'exchange-delta' && event.exchangeId === exchangeId)
    .flatMap((event) => event.warnings)
    .filter((warning) => warning.kind === 'backend_waiting')
    .map((warning) => warning.detail);
}

describe('waiting for a silent backend', () => {
  for (const [what, handler, awaited] of [
    ['no status at all', sendNoHeaders, 'its answer'],
    ['headers, then no token', answerNothing, 'its first token'],
  ] as const) {
    it(`${what}: the wait is named in the panel and the log with the time left, then the turn fails naming the timeout`, async () => {
      backend.setHandlers(handler);
      logLines.length = 0;
      const observed = await runExchange(bridge, STREAM);
      assert.match(failedStreamError(observed.codex).message, /sent nothing for 3 s; giving up \(the backend timeout: --backend-timeout-seconds for serve, freeformBridge\.backendTimeoutSeconds in VS Code\)/);
      const warnings = waitWarnings(observed.end.exchangeId);
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.match(warnings[0]!, new RegExp(`^waiting for the backend at http://127\\.0\\.0\\.1:\\d+/v1: nothing for 1 s while waiting for ${awaited}.*; the bridge gives up in 2 s \\(the backend timeout, 3 s\\)$`));
      assert.ok(observed.end.warnings.some((warning) => warning.kind === 'backend_waiting'), 'the exchange record keeps the warning');
      const logged = logLines.filter((line) => line.startsWith('warn ') && line.includes('waiting for the backend'));
      assert.equal(logged.length, 1, logLines.join('\n'));
      assert.ok(logged[0]!.includes(observed.end.exchangeId) && logged[0]!.endsWith(warnings[0]!));
    });
  }

  it('a backend that answers steadily is never named as waited for', async () => {
    backend.setHandlers(async (response) => {
      startSseResponse(response);
      for (let index = 0; index < 3; index += 1) {
        response.write(renderChunkFrame({ content: `part ${index} ` }));
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      response.write(renderChunkFrame({}, 'stop'));
      response.end('data: [DONE]\n\n');
    });
    const observed = await runExchange(bridge, STREAM);
    assert.equal(observed.end.outcome, 'completed');
    assert.deepEqual(waitWarnings(observed.end.exchangeId), []);
  });
});
