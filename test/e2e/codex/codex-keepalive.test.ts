import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EngineProfile } from '../../../mock-backend/create-mock-backend.ts';
import {
  chatRequests,
  
  codexSuiteTitle,
  describeRun,
  exchangeEnds,
  replayedOutputs,
  startE2eSession,
} from '../../../harness/codex-session.ts';

/**
 * The backend stays silent (queueing, long prefill) for longer than Codex's
 * `stream_idle_timeout_ms`. The bridge's `response.in_progress` keepalives reset Codex's idle timer,
 * so the turn survives. The control run without keepalives shows that the
 * shortened timeout really is in force.
 */

const IDLE_TIMEOUT_MS = 2_500;
const SILENCE_MS = 5_000;
const profile: EngineProfile = 'vllm-hermes';
/** No retries: a timed-out stream must fail the run instead of being hidden by a re-POST. */
const providerSettings = { stream_idle_timeout_ms: IDLE_TIMEOUT_MS, stream_max_retries: 0, request_max_retries: 0 };

describe(codexSuiteTitle('keepalive'), { timeout: 120_000 }, () => {
  it(`survives ${SILENCE_MS} ms of backend silence with stream_idle_timeout_ms = ${IDLE_TIMEOUT_MS}`, async (context) => {
    const answer = 'Answered after a long prefill.';
    const session = await startE2eSession({
      profile,
      surface: 'functions',
      bridge: { keepaliveSeconds: 1 },
      providerSettings,
      responder: (request) =>
        replayedOutputs(request).length === 0
          ? // Silent before any byte, headers included: the bridge commits the stream after its grace period.
            { delayBeforeHeadersMs: SILENCE_MS, toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo still-here', login: false, yield_time_ms: 5000 } }] }
          : // Headers at once, then silence: what vLLM does while it queues or prefills.
            { delayBeforeFirstByteMs: SILENCE_MS, text: answer },
    });
    try {
      const run = await session.runCodex('Wait for the slow model.');
      assert.equal(run.code, 0, describeRun(run));
      assert.deepEqual(run.agentMessages, [answer], describeRun(run));
      assert.equal(run.commands[0]?.aggregated_output, 'still-here\n');
      assert.doesNotMatch(run.stdout + run.stderr, /idle timeout|Reconnecting/);
      assert.equal(chatRequests(session.backend).length, 2, 'no retry');
      const ends = exchangeEnds(session.traffic);
      assert.deepEqual(ends.map((end) => end.outcome), ['completed', 'completed']);
      for (const end of ends) assert.ok((end.timings.totalMs ?? 0) >= SILENCE_MS, `exchange took only ${end.timings.totalMs} ms`);
      context.diagnostic(`run took ${run.durationMs} ms; exchanges ${ends.map((end) => end.timings.totalMs).join(' ms, ')} ms`);
    } finally {
      await session.close();
    }
  });

  it('control: without keepalives the same silence trips Codex’s idle timeout', async (context) => {
    const session = await startE2eSession({
      profile,
      surface: 'functions',
      bridge: { keepaliveSeconds: 0 },
      providerSettings,
      responder: () => ({ delayBeforeFirstByteMs: SILENCE_MS, text: 'too late' }),
    });
    try {
      const run = await session.runCodex('Wait for the slow model.');
      assert.equal(run.code, 1, describeRun(run));
      assert.match(run.errors.join('\n'), /idle timeout waiting for SSE/, describeRun(run));
      assert.deepEqual(run.agentMessages, []);
      context.diagnostic(`Codex said: ${JSON.stringify(run.errors.at(-1))}`);
    } finally {
      await session.close();
    }
  });
});
