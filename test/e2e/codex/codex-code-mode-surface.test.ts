import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EngineProfile } from '../../../mock-backend/create-mock-backend.ts';
import { createToolCallId } from '../../../mock-backend/prepare-turn.ts';
import {
  chatRequests,
  
  codexSuiteTitle,
  describeRun,
  exchangeEnds,
  loweredTool,
  loweredToolNames,
  replayedCalls,
  replayedOutputs,
  startE2eSession,
  unexpectedWarnings,
} from '../../../harness/codex-session.ts';

/**
 * The `code-mode` surface (catalog `tool_mode: "code_mode_only"` +
 * `use_responses_lite`). Codex sends no top-level tools, only an `additional_tools` input item whose
 * namespace `functions` holds the custom `exec` tool. The bridge hoists and flattens it to
 * `functions__exec`, lifts the model's call back as `custom_tool_call` with `namespace: "functions"`,
 * Codex runs the JavaScript in its V8 host and replays a structured output list, which reaches the
 * backend as one tool message.
 */


const SCRIPT = [
  'const result = await tools.exec_command({ cmd: "printf \'code mode says %s\' \\"héllo ✓\\"", login: false, yield_time_ms: 5000 });',
  'text(`exit=${result.exit_code}`);',
  'text(result.output);',
].join('\n');

for (const profile of ['vllm-qwen3coder', 'vllm-hermes'] as const satisfies readonly EngineProfile[]) {
  describe(codexSuiteTitle(`code-mode surface, ${profile}`), { timeout: 120_000 }, () => {
    it('exec is lifted with namespace functions, runs, and its structured output comes back as a tool message', async (context) => {
      const callId = createToolCallId(profile, false);
      const answer = 'The script ran exec_command and printed the greeting.';
      const session = await startE2eSession({
        profile,
        surface: 'code-mode',
        responder: (request) => (replayedOutputs(request).length === 0 ? { toolCalls: [{ id: callId, name: 'functions__exec', input: SCRIPT }] } : { text: answer }),
      });
      try {
        const run = await session.runCodex('Greet through a shell command.');
        assert.equal(run.code, 0, describeRun(run));
        assert.deepEqual(run.agentMessages, [answer], describeRun(run));

        const requests = chatRequests(session.backend);
        assert.equal(requests.length, 2, 'one request per model turn, no retries');
        const first = requests[0]!;
        assert.ok(loweredToolNames(first).includes('functions__exec'), loweredToolNames(first).join(' '));
        assert.deepEqual(Object.keys((loweredTool(first, 'functions__exec')!.function.parameters as { properties: Record<string, unknown> }).properties), ['input']);
        const firstStart = session.traffic.find((event) => event.type === 'exchange-start');
        assert.ok(firstStart?.type === 'exchange-start');
        const execTool = firstStart.tools.find((tool) => tool.name === 'exec');
        assert.equal(execTool?.namespace, 'functions');
        assert.equal(execTool?.kind, 'custom');
        assert.equal(execTool?.wireName, 'functions__exec');

        // What the bridge delivered to Codex: a custom_tool_call with the namespace restored.
        const delivered = exchangeEnds(session.traffic)[0]?.output ?? [];
        const lifted = delivered.find((item) => item.type === 'custom_tool_call');
        assert.ok(lifted && lifted.type === 'custom_tool_call', JSON.stringify(delivered));
        assert.equal(lifted.name, 'exec');
        assert.equal(lifted.namespace, 'functions');
        assert.equal(lifted.call_id, callId);
        assert.equal(lifted.input, SCRIPT);

        // The next request: the call replayed under its wire name (proof Codex echoed the namespace)
        // and the structured output as one tool message.
        const second = requests[1]!;
        const calls = replayedCalls(second);
        assert.equal(calls.length, 1);
        assert.equal(calls[0]?.id, callId);
        assert.equal(calls[0]?.name, 'functions__exec');
        assert.equal((JSON.parse(calls[0]!.arguments) as { input: string }).input, SCRIPT);
        const outputs = replayedOutputs(second);
        assert.equal(outputs.length, 1);
        assert.equal(outputs[0]?.toolCallId, callId);
        assert.match(outputs[0]!.content, /^Script completed\n/);
        assert.match(outputs[0]!.content, /exit=0/);
        assert.match(outputs[0]!.content, /code mode says héllo ✓/);
        context.diagnostic(`tool message the backend received: ${JSON.stringify(outputs[0]!.content)}`);
        assert.deepEqual(unexpectedWarnings(session.traffic), []);
      } finally {
        await session.close();
      }
    });
  });
}
