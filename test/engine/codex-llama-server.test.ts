import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExchangeStartEvent } from '../../src/core/traffic/traffic-event.ts';
import {
  checkCodexAvailability,
  codexSuiteTitle,
  describeRun,
  exchangeEnds,
  messageText,
  startCodexBridgeSession,
  unexpectedWarnings,
  type CodexBridgeSession,
} from '../../harness/codex-session.ts';
import { findEngineKit, reportMissingEngineKit, startLlamaServer, TOOL_CALL_FORMATS, type RunningLlamaServer } from './llama-server.ts';
import { fixturePath } from '../support/fixtures.ts';

/**
 * The real Codex CLI through the bridge to the real llama-server, both tool-call formats. Codex offers
 * its free-form `apply_patch` (the profile's model catalog entry asks for it), the bridge lowers it to a
 * function, the engine parses the crafted model's call, the bridge lifts it back into a
 * `custom_tool_call`, Codex applies the patch, replays the call and its output, and the model ends the
 * turn with "Done.".
 */

const lookup = findEngineKit();
// The real Codex CLI is a prerequisite (npm ci installs it); missing, this file fails at once naming it.
checkCodexAvailability();
const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch';

type CodexRun = Awaited<ReturnType<CodexBridgeSession['runCodex']>>;

/** What the kit's models do with an apply_patch call that reaches Codex: hello.txt written, then "Done.". */
function assertHelloWrittenAndDone(run: CodexRun, workspace: string): void {
  assert.equal(run.code, 0, describeRun(run));
  assert.equal(readFileSync(join(workspace, 'hello.txt'), 'utf8'), 'Hello world\n', describeRun(run));
  assert.equal(run.agentMessages.at(-1), 'Done.', describeRun(run));
}

if (lookup.kit === null) {
  reportMissingEngineKit('real Codex through the bridge to a real llama-server', lookup.missing);
} else {
  const kit = lookup.kit;
  for (const format of TOOL_CALL_FORMATS) {
    describe(codexSuiteTitle(`through the bridge to a real llama-server (${format})`), { timeout: 240_000 }, () => {
      let server: RunningLlamaServer;
      let session: CodexBridgeSession;
      before(async () => {
        // Codex's requests (base prompt, tools) need about 32k tokens of context.
        server = await startLlamaServer(kit, { format, contextSize: 32_768 });
        session = await startCodexBridgeSession({ backendUrl: server.backendUrl, surface: 'freeform' });
      });
      after(async () => {
        await session?.close();
        await server?.stop();
      });

      it('writes hello.txt with the lifted apply_patch call, replays it, and ends the turn with "Done."', async (context) => {
        const run = await session.runCodex('Create hello.txt containing Hello world.', { timeoutMs: 180_000 });
        assertHelloWrittenAndDone(run, session.workspace);
        assert.deepEqual(run.errors, [], describeRun(run));

        const starts = session.traffic.filter((event): event is ExchangeStartEvent => event.type === 'exchange-start');
        const ends = exchangeEnds(session.traffic);
        assert.equal(starts.length, 2, `one request per model turn, no retries: ${JSON.stringify(ends.map((end) => end.outcome))}`);
        assert.deepEqual(
          ends.map((end) => end.outcome),
          ['completed', 'completed'],
        );

        // Turn 1: Codex offered the custom tool; the engine saw a function, Codex got a custom_tool_call.
        const offered = starts[0]!.tools.find((tool) => tool.name === 'apply_patch');
        assert.ok(offered, JSON.stringify(starts[0]!.tools));
        const lowered = starts[0]!.loweredRequest.tools?.find((tool) => tool.type === 'function' && tool.function.name === 'apply_patch');
        assert.ok(lowered, 'apply_patch did not reach the engine as a function');
        const delivered = ends[0]!.output.filter((item) => item.type === 'custom_tool_call');
        assert.equal(delivered.length, 1, JSON.stringify(ends[0]!.output));
        const call = delivered[0]!;
        assert.ok(call.type === 'custom_tool_call');
        assert.equal(call.name, 'apply_patch');
        assert.equal(call.input, PATCH);

        // Turn 2: what the bridge forwarded: the call as function-call history, then Codex's tool output.
        const messages = starts[1]!.loweredRequest.messages;
        const assistant = messages.find((message) => message.role === 'assistant' && Array.isArray(message.tool_calls));
        assert.ok(assistant && assistant.role === 'assistant' && assistant.tool_calls, 'the call was not replayed to the engine');
        assert.equal(assistant.tool_calls.length, 1);
        const replayed = assistant.tool_calls[0]!;
        assert.equal(replayed.id, call.call_id);
        assert.equal(replayed.function.name, 'apply_patch');
        assert.deepEqual(JSON.parse(replayed.function.arguments), { input: PATCH });
        const output = messages.find((message) => message.role === 'tool');
        assert.ok(output && output.role === 'tool', 'the tool output was not forwarded');
        assert.equal(output.tool_call_id, call.call_id);
        assert.match(messageText(output.content), /Success\. Updated the following files:\nA hello\.txt/);

        assert.deepEqual(unexpectedWarnings(session.traffic), []);
        context.diagnostic(`codex ran ${run.durationMs} ms; tool output replayed: ${JSON.stringify(messageText(output.content))}`);
      });
    });
  }

  // A template that renders the tools but no tool-call format llama-server can find: the model's
  // <tool_call> block comes back as content, as with an overridden or wrong chat template.
  describe(codexSuiteTitle('through the bridge to a real llama-server that leaves the call as text'), { timeout: 240_000 }, () => {
    let server: RunningLlamaServer;
    let session: CodexBridgeSession;
    before(async () => {
      server = await startLlamaServer(kit, {
        format: 'hermes',
        contextSize: 32_768,
        extraArguments: ['--chat-template-file', fixturePath('llama-server', 'templates', 'qwen25-tools-calls-unparsed.jinja')],
      });
      session = await startCodexBridgeSession({ backendUrl: server.backendUrl, surface: 'freeform' });
    });
    after(async () => {
      await session?.close();
      await server?.stop();
    });

    it('recovers the apply_patch call from the text: Codex writes hello.txt and the turn ends with "Done."; the round trip is warned', async (context) => {
      const run = await session.runCodex('Create hello.txt containing Hello world.', { timeoutMs: 180_000 });
      assertHelloWrittenAndDone(run, session.workspace);
      assert.ok(!run.agentMessages.some((message) => message.includes('<tool_call>')), 'the markup never reached Codex as a message');

      const ends = exchangeEnds(session.traffic);
      assert.deepEqual(
        ends.map((end) => end.outcome),
        ['completed', 'completed'],
      );
      const call = ends[0]!.output.find((item) => item.type === 'custom_tool_call');
      assert.ok(call?.type === 'custom_tool_call', JSON.stringify(ends[0]!.output));
      assert.equal(call.input, PATCH);
      assert.ok(!ends[0]!.output.some((item) => item.type === 'message'), JSON.stringify(ends[0]!.output));
      const warning = ends[0]!.warnings.find((entry) => entry.kind === 'tool_call_as_text');
      assert.ok(warning, JSON.stringify(ends[0]!.warnings));
      assert.equal(warning.callId, call.call_id);
      assert.match(warning.detail, /--jinja and no --chat-template override/);
      context.diagnostic(`codex ran ${run.durationMs} ms; warning: ${warning.detail}`);
    });
  });
}
