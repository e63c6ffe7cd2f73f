import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  chatRequests,
  checkCodexAvailability,
  codexSuiteTitle,
  describeRun,
  exchangeEnds,
  replayedOutputs,
  startE2eSession,
} from '../../../harness/codex-session.ts';

/**
 * Errors the user must be able to read in Codex's own output. A permanent
 * backend 400 arrives as a 400 whose message is the backend's (Codex prints the body and does not
 * retry); a context overflow arrives as `context_length_exceeded`, which Codex turns into its
 * context-window message.
 */

const { version } = checkCodexAvailability();
const CONTEXT_MESSAGE = /ran out of room in the model's context window/;

/** `codex-cli 0.171.0` → true for (0, 171) and anything older. */
function codexAtLeast(major: number, minor: number): boolean {
  const match = /(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!match) return true;
  const [foundMajor, foundMinor] = [Number(match[1]), Number(match[2])];
  return foundMajor > major || (foundMajor === major && foundMinor >= minor);
}

describe(codexSuiteTitle('backend errors'), { timeout: 120_000 }, () => {
  it('a backend 400 shows the backend’s message in Codex’s output, without retries', async (context) => {
    // vLLM started without --enable-auto-tool-choice / --tool-call-parser rejects every request with tools.
    const session = await startE2eSession({ profile: 'vllm-hermes', surface: 'functions', backend: { toolParser: false } });
    try {
      const run = await session.runCodex('Say hi.');
      assert.equal(run.code, 1, describeRun(run));
      // Codex prints a 400's body verbatim: the bridge's error JSON.
      const shown = run.errors.at(-1) ?? '';
      const body = JSON.parse(shown) as { error: { message: string; code: string } };
      assert.ok(body.error.message.includes('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'), describeRun(run));
      // The bridge's hint on what to change rides along.
      assert.match(body.error.message, /hint: start vLLM with --enable-auto-tool-choice/);
      assert.equal(chatRequests(session.backend).length, 1, 'Codex must not retry a 400');
      const ends = exchangeEnds(session.traffic);
      assert.deepEqual(ends.map((end) => [end.outcome, end.httpStatus]), [['failed', 400]]);
      context.diagnostic(`Codex printed: ${JSON.stringify(run.errors.at(-1))}`);
    } finally {
      await session.close();
    }
  });

  it('a context overflow mid-session shows Codex’s context-window message (older Codex: the backend’s message)', async (context) => {
    // Request 1 (≈5.4k tokens with the freeform catalog's short prompt) fits; request 2 carries a
    // ≈10k-token command output and goes over the engine's window, which answers in vLLM's words.
    const session = await startE2eSession({
      profile: 'vllm-qwen3coder',
      surface: 'freeform',
      backend: { contextWindow: 10_000 },
      responder: (request) =>
        replayedOutputs(request).length === 0
          ? { toolCalls: [{ name: 'exec_command', arguments: { cmd: "head -c 60000 /dev/zero | tr '\\0' x", login: false, yield_time_ms: 5000 } }] }
          : { text: 'unreachable: the engine refuses this request' },
    });
    try {
      const run = await session.runCodex('Print a lot.');
      assert.equal(run.code, 1, describeRun(run));
      const requests = chatRequests(session.backend);
      assert.equal(requests[0]?.validationError, null, 'the first request must fit (precondition)');
      assert.match(requests[1]?.validationError?.message ?? '', /maximum context length is 10000 tokens/);
      assert.equal(requests.length, 2, 'Codex must not retry an overflow');
      const shown = run.errors.at(-1) ?? '';
      if (CONTEXT_MESSAGE.test(shown)) {
        context.diagnostic('Codex showed its own context-window message');
      } else {
        // Codex 0.154 prints a 400's body verbatim even with code context_length_exceeded (only an
        // in-stream response.failed gets its dedicated message there): the user reads the bridge's
        // body, which quotes the engine.
        assert.ok(!codexAtLeast(0, 171), `Codex ${version} should show its context-window message\n${describeRun(run)}`);
        const body = JSON.parse(shown) as { error: { message: string; code: string } };
        assert.equal(body.error.code, 'context_length_exceeded', describeRun(run));
        assert.match(body.error.message, /maximum context length is 10000 tokens/);
        context.diagnostic('Codex printed the bridge\'s context_length_exceeded body verbatim');
      }
      const ends = exchangeEnds(session.traffic);
      assert.deepEqual(ends.map((end) => [end.outcome, end.error?.code ?? null]), [['completed', null], ['failed', 'context_length_exceeded']]);
      context.diagnostic(`Codex printed: ${JSON.stringify(run.errors.at(-1))}`);
      context.diagnostic(`the bridge's message: ${JSON.stringify(ends[1]?.error?.message)}`);
    } finally {
      await session.close();
    }
  });
});
