import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from '../../../src/core/logger.ts';
import { CODEX_PROVIDER_ID, chatRequests, codexSuiteTitle, describeRun, startE2eSession, unexpectedWarnings } from '../../../harness/codex-session.ts';

/**
 * A provider with `supports_websockets = true` makes Codex open a WebSocket to `GET /v1/responses`
 * first. The bridge answers 426, the one status Codex takes as "use HTTP" at once; a 400 would fail
 * the turn with an empty message, a 404 would cost seconds of reconnecting.
 */

const ANSWER = 'Answered over HTTP.';

describe(codexSuiteTitle('WebSocket attempt'), { timeout: 120_000 }, () => {
  it('is answered 426, and the turn goes on over HTTP without a retry', async () => {
    const logged: string[] = [];
    const record = (message: string): void => {
      logged.push(message);
    };
    const logger: Logger = { error: record, warn: record, info: record, debug: () => undefined };
    const session = await startE2eSession({ profile: 'vllm-hermes', surface: 'functions', bridge: { logger }, responder: () => ({ text: ANSWER }) });
    try {
      const run = await session.runCodex('Say something.', { extraArguments: ['-c', `model_providers.${CODEX_PROVIDER_ID}.supports_websockets=true`], timeoutMs: 90_000 });
      assert.equal(run.code, 0, describeRun(run));
      assert.deepEqual(run.agentMessages, [ANSWER], describeRun(run));
      assert.equal(
        logged.filter((message) => message.startsWith('a WebSocket upgrade of GET /v1/responses was answered 426')).length,
        1,
        `Codex tried the WebSocket once and got 426: ${JSON.stringify(logged)}`,
      );
      assert.equal(chatRequests(session.backend).length, 1, 'one HTTP request, no retry');
      assert.deepEqual(run.errors.filter((message) => /reconnect|disconnected/i.test(message)), [], describeRun(run));
      assert.deepEqual(unexpectedWarnings(session.traffic), []);
    } finally {
      await session.close();
    }
  });
});
