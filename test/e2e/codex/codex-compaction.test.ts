import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MockTurn, RecordedRequest } from '../../../mock-backend/create-mock-backend.ts';
import {
  chatBody,
  CODEX_PROVIDER_ID,
  chatRequests,
  codexSuiteTitle,
  describeRun,
  lastMessage,
  loweredToolNames,
  messageText,
  replayedCalls,
  roundTripOf,
  startE2eSession,
  unexpectedWarnings,
} from '../../../harness/codex-session.ts';

/**
 * Local compaction with the real Codex: a compaction limit far below what the mock reports as used
 * makes Codex compact after the first model turn. The compaction request must reach the backend
 * without `tools`, `tool_choice` or `parallel_tool_calls` (vLLM rejects `tools: []` and a tool_choice
 * without tools), and the session must go on from the summary, tools declared again.
 */

const SUMMARY = 'SUMMARY: the user asked to run `echo compacted`; it printed "compacted". Nothing is left to do but report it.';
const FINAL = 'It printed "compacted".';
const SUMMARY_PREFIX = 'Another language model started to solve this problem and produced a summary';
/** Usage far above the compaction limit the tests set: Codex compacts before it asks the model again. */
const ECHO_WITH_HIGH_USAGE: MockTurn = {
  toolCalls: [{ id: 'call_echo', name: 'exec_command', arguments: { cmd: 'echo compacted', login: false, yield_time_ms: 2000 } }],
  usage: { prompt_tokens: 30_000, completion_tokens: 20 },
};

describe(codexSuiteTitle('compaction'), { timeout: 180_000 }, () => {
  it('sends the compaction turn without tools and continues with the summary', async () => {
    const session = await startE2eSession({ profile: 'vllm-hermes', surface: 'functions' });
    session.backend.setResponder((request): MockTurn => {
      if (roundTripOf(session.traffic, request)?.kind === 'compaction') return { text: SUMMARY, usage: { prompt_tokens: 900, completion_tokens: 40 } };
      // After the summary, or should Codex not compact at all: answer, so the session always ends.
      if (messageText(lastMessage(request)?.content).startsWith(SUMMARY_PREFIX) || replayedCalls(request).length > 0) return { text: FINAL, usage: { prompt_tokens: 700, completion_tokens: 8 } };
      return ECHO_WITH_HIGH_USAGE;
    });
    try {
      const run = await session.runCodex('Run echo compacted and tell me what it printed.', {
        extraArguments: ['-c', 'model_auto_compact_token_limit=4000'],
        timeoutMs: 150_000,
      });
      assert.equal(run.code, 0, describeRun(run));
      assert.deepEqual(run.agentMessages, [FINAL], describeRun(run));
      assert.equal(run.commands[0]?.aggregated_output, 'compacted\n', describeRun(run));

      const requests = chatRequests(session.backend);
      const kinds = requests.map((request) => roundTripOf(session.traffic, request)?.kind);
      assert.deepEqual(kinds, ['turn', 'compaction', 'turn'], 'one compaction between two turns');
      const [first, compaction, resumed] = requests as [RecordedRequest, RecordedRequest, RecordedRequest];

      const compactionBody = chatBody(compaction) as unknown as Record<string, unknown>;
      assert.equal('tools' in compactionBody, false);
      assert.equal('tool_choice' in compactionBody, false);
      assert.equal('parallel_tool_calls' in compactionBody, false);
      assert.equal(compaction.validationError, null, 'vLLM accepts the compaction request');
      assert.match(messageText(lastMessage(compaction)?.content), /^You are performing a CONTEXT CHECKPOINT COMPACTION\./);
      // The history keeps the call and its output although no tool is declared.
      assert.ok(
        chatBody(compaction).messages.some((message) => message.role === 'tool' && message.tool_call_id === 'call_echo'),
        'the compaction request carries the tool round it summarises',
      );

      const resumedText = messageText(lastMessage(resumed)?.content);
      assert.ok(resumedText.startsWith(SUMMARY_PREFIX), resumedText);
      assert.ok(resumedText.endsWith(SUMMARY), resumedText);
      assert.deepEqual(loweredToolNames(resumed), loweredToolNames(first), 'the tools are back after the compaction');
      assert.equal(chatBody(resumed).tool_choice, 'auto');

      assert.deepEqual(unexpectedWarnings(session.traffic), []);
    } finally {
      await session.close();
    }
  });

  it('a provider Codex takes for Azure asks for remote compaction: refused, with a message that says how to compact locally', async () => {
    const session = await startE2eSession({ profile: 'vllm-hermes', surface: 'functions' });
    session.backend.setResponder((request): MockTurn => {
      // Should Codex compact locally after all, the session ends (and the assertions below say so).
      if (roundTripOf(session.traffic, request)?.kind === 'compaction') return { text: SUMMARY };
      if (replayedCalls(request).length > 0 || messageText(lastMessage(request)?.content).startsWith(SUMMARY_PREFIX)) return { text: FINAL, usage: { prompt_tokens: 700, completion_tokens: 8 } };
      return ECHO_WITH_HIGH_USAGE;
    });
    try {
      // codex-config never writes such a name; set here by hand, it is what a user's own table might hold.
      const run = await session.runCodex('Run echo compacted and tell me what it printed.', {
        extraArguments: ['-c', `model_providers.${CODEX_PROVIDER_ID}.name="Azure"`, '-c', 'model_auto_compact_token_limit=4000'],
        timeoutMs: 150_000,
      });
      assert.notEqual(run.code, 0, describeRun(run));
      const shown = run.errors.find((message) => message.includes('compaction_trigger asks for remote compaction'));
      assert.ok(shown, `Codex shows the bridge's reason: ${describeRun(run)}`);
      assert.match(shown, /give the provider another id and name .* and Codex compacts locally/);
      assert.equal(chatRequests(session.backend).length, 1, 'the refused request never reaches the backend');
      const rejected = session.traffic.filter((event) => event.type === 'exchange-rejected');
      assert.deepEqual(
        rejected.map((event) => [event.httpStatus, event.error.code, event.type === 'exchange-rejected' ? event.roundTrip?.kind : null]),
        [[400, 'unsupported_feature', 'compaction']],
      );
    } finally {
      await session.close();
    }
  });
});
