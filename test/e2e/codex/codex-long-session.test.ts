import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EngineProfile } from '../../../mock-backend/create-mock-backend.ts';
import { createToolCallId } from '../../../mock-backend/prepare-turn.ts';
import {
  chatRequests,
  
  codexSuiteTitle,
  describeRun,
  exchangeEnds,
  replayedCalls,
  replayedOutputs,
  startE2eSession,
  unexpectedWarnings,
} from '../../../harness/codex-session.ts';

/**
 * One Codex run with 50 exec_command round trips. Every call the model made
 * must come back exactly once, paired with its output by call id, in order, in every later request;
 * the backend must see exactly one request per model turn (no retry caused by the bridge).
 */

const ROUNDS = 50;

describe(codexSuiteTitle('long session'), { timeout: 170_000 }, () => {
  it(`${ROUNDS} exec round trips: every call/output pair matched by call id, nothing duplicated, no retries`, async (context) => {
    const profile: EngineProfile = 'vllm-qwen3coder';
    const issuedIds: string[] = [];
    const problems: string[] = [];
    const answer = `Ran ${ROUNDS} commands.`;
    const session = await startE2eSession({
      profile,
      // The freeform catalog's short base prompt keeps 50 rounds far from the context window
      // (Codex would compact the history near it).
      surface: 'freeform',
      responder: (request) => {
        const outputs = replayedOutputs(request);
        // The model checks what it was sent: the previous round's output must be the newest message.
        if (outputs.length !== issuedIds.length) problems.push(`request ${request.id}: ${outputs.length} outputs for ${issuedIds.length} calls`);
        const round = outputs.length + 1;
        if (round > ROUNDS) return { text: answer };
        const id = createToolCallId(profile, false);
        issuedIds.push(id);
        return { toolCalls: [{ id, name: 'exec_command', arguments: { cmd: `echo round-${round}`, login: false, yield_time_ms: 5000 } }] };
      },
    });
    try {
      const run = await session.runCodex(`Run echo ${ROUNDS} times, one command per turn.`, { timeoutMs: 150_000 });
      assert.equal(run.code, 0, describeRun(run));
      assert.deepEqual(run.agentMessages, [answer], describeRun(run));
      assert.deepEqual(problems, []);
      assert.equal(run.commands.length, ROUNDS);
      assert.deepEqual(
        run.commands.map((command) => command.aggregated_output),
        Array.from({ length: ROUNDS }, (_unused, index) => `round-${index + 1}\n`),
      );

      const requests = chatRequests(session.backend);
      assert.equal(requests.length, ROUNDS + 1, 'exactly one backend request per model turn');
      assert.equal(new Set(issuedIds).size, ROUNDS);
      for (const [index, request] of requests.entries()) {
        // Request k replays exactly the first k calls, in order, each followed by its own output.
        const calls = replayedCalls(request);
        const outputs = replayedOutputs(request);
        assert.deepEqual(calls.map((call) => call.id), issuedIds.slice(0, index), `request ${index + 1}: replayed calls`);
        assert.deepEqual(outputs.map((output) => output.toolCallId), issuedIds.slice(0, index), `request ${index + 1}: replayed outputs`);
        for (const [round, output] of outputs.entries()) {
          assert.match(output.content, new RegExp(`\\nround-${round + 1}\\n`), `request ${index + 1}: output of round ${round + 1}`);
        }
      }
      // In the final request each tool message directly follows the assistant message that made its call.
      const messages = requests.at(-1)!.body as { messages: Array<{ role: string; tool_call_id?: string; tool_calls?: Array<{ id: string }> }> };
      for (const [index, message] of messages.messages.entries()) {
        if (message.role !== 'tool') continue;
        const previous = messages.messages[index - 1];
        assert.equal(previous?.role, 'assistant');
        assert.deepEqual(previous?.tool_calls?.map((call) => call.id), [message.tool_call_id]);
      }

      const ends = exchangeEnds(session.traffic);
      assert.equal(ends.length, ROUNDS + 1);
      assert.ok(ends.every((end) => end.outcome === 'completed' && end.httpStatus === 200));
      assert.deepEqual(unexpectedWarnings(session.traffic), []);
      const milliseconds = ends.map((end) => end.timings.totalMs ?? 0);
      context.diagnostic(
        `${ROUNDS} round trips in ${run.durationMs} ms (codex run); bridge exchange time median ${milliseconds.sort((left, right) => left - right)[Math.floor(milliseconds.length / 2)]} ms; last request ${requests.at(-1)!.rawBody.length} bytes`,
      );
    } finally {
      await session.close();
    }
  });
});
