import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createToolCallId } from '../../../mock-backend/prepare-turn.ts';
import type { EngineProfile } from '../../../mock-backend/create-mock-backend.ts';
import {
  chatRequests,
  
  codexSuiteTitle,
  describeRun,
  exchangeEnds,
  lastMessage,
  loweredToolNames,
  replayedCalls,
  replayedOutputs,
  startE2eSession,
  unexpectedWarnings,
} from '../../../harness/codex-session.ts';

/**
 * The `functions` surface (Codex's fallback metadata, function tools only).
 * The model calls exec_command, Codex runs it, the next request replays call and output, the model
 * answers and Codex exits 0 with that answer.
 */

const ANSWER = 'The command printed “hello from exec ✓” — done.';

for (const profile of ['vllm-hermes', 'vllm-qwen3coder'] as const satisfies readonly EngineProfile[]) {
  describe(codexSuiteTitle(`functions surface, ${profile}`), { timeout: 120_000 }, () => {
    it('exec_command runs, its output is replayed, the answer is Codex’s final message', async () => {
      const callId = createToolCallId(profile, false);
      const session = await startE2eSession({
        profile,
        surface: 'functions',
        responder: (request) => {
          const last = lastMessage(request);
          if (last?.role === 'user') {
            // login:false keeps the shell quick (a login shell costs Codex about 2.5 s here).
            return { toolCalls: [{ id: callId, name: 'exec_command', arguments: { cmd: "printf 'hello from exec %s\\n' \"$(printf '\\342\\234\\223')\"", login: false, yield_time_ms: 2000 } }] };
          }
          return { text: ANSWER };
        },
      });
      try {
        const run = await session.runCodex('Run the greeting command and tell me what it printed.');
        assert.equal(run.code, 0, describeRun(run));
        assert.deepEqual(run.agentMessages, [ANSWER], describeRun(run));
        assert.equal(run.commands.length, 1, describeRun(run));
        assert.equal(run.commands[0]?.exit_code, 0);
        assert.equal(run.commands[0]?.aggregated_output, 'hello from exec ✓\n');

        const requests = chatRequests(session.backend);
        assert.equal(requests.length, 2, 'one request per model turn, no retries');
        const [first, second] = requests as [(typeof requests)[number], (typeof requests)[number]];
        assert.ok(loweredToolNames(first).includes('exec_command'), loweredToolNames(first).join(' '));
        assert.equal(replayedCalls(first).length, 0);

        const calls = replayedCalls(second);
        assert.equal(calls.length, 1);
        assert.equal(calls[0]?.id, callId);
        assert.equal(calls[0]?.name, 'exec_command');
        assert.equal((JSON.parse(calls[0]?.arguments ?? '{}') as { cmd?: string }).cmd?.startsWith('printf'), true);
        const outputs = replayedOutputs(second);
        assert.equal(outputs.length, 1);
        assert.equal(outputs[0]?.toolCallId, callId);
        assert.match(outputs[0]?.content ?? '', /Process exited with code 0/);
        assert.match(outputs[0]?.content ?? '', /hello from exec ✓/);
        assert.equal(lastMessage(second)?.role, 'tool');

        const ends = exchangeEnds(session.traffic);
        assert.deepEqual(ends.map((end) => end.outcome), ['completed', 'completed']);
        assert.deepEqual(unexpectedWarnings(session.traffic), []);
      } finally {
        await session.close();
      }
    });
  });
}
