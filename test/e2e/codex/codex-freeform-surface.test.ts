import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineProfile } from '../../../mock-backend/create-mock-backend.ts';
import { createToolCallId } from '../../../mock-backend/prepare-turn.ts';
import {
  chatRequests,
  
  codexSuiteTitle,
  describeRun,
  exchangeEnds,
  lastMessage,
  loweredTool,
  replayedCalls,
  replayedOutputs,
  startE2eSession,
  trafficWarnings,
  unexpectedWarnings,
} from '../../../harness/codex-session.ts';

/**
 * The `freeform` surface. Codex declares the custom `apply_patch` tool (Lark
 * grammar); the bridge lowers it to a function with one string parameter `input`, the model calls it,
 * the bridge lifts the call back into a `custom_tool_call`, and Codex applies the patch to the disk.
 */


const ORIGINAL_APP = ['import sys', '', '', 'def greet(name):', '    return "Hello, " + name', '', '', 'def main():', '    print(greet(sys.argv[1]))', ''].join('\n');

/** Quotes, backslashes (also ones that look like JSON escapes), unicode beyond the BMP, blank lines. */
const GOOD_PATCH = [
  '*** Begin Patch',
  '*** Add File: docs/notes.md',
  '+# Notes with "double" and \'single\' quotes',
  '+',
  '+Windows path: C:\\Users\\dev\\new\\table.txt',
  '+Escapes stay literal: \\n \\t \\\\ \\u00e9 \\" \\/',
  '+Unicode: héllo wörld ✓ 🚀 日本語 — ünïcödé',
  '+JSON: {"key": "value", "list": [1, 2, {"nested": true}], "tab": "\\t"}',
  '+',
  '+',
  '+Two blank lines above. <tags> & </parameter> stay too.',
  '*** Update File: src/app.py',
  '@@ def greet(name):',
  '-    return "Hello, " + name',
  '+    return f"Héllo, {name}! \\\\o/ \\"quoted\\""',
  ' ',
  ' ',
  ' def main():',
  '*** End Patch',
  '',
].join('\n');

const EXPECTED_NOTES = [
  '# Notes with "double" and \'single\' quotes',
  '',
  'Windows path: C:\\Users\\dev\\new\\table.txt',
  'Escapes stay literal: \\n \\t \\\\ \\u00e9 \\" \\/',
  'Unicode: héllo wörld ✓ 🚀 日本語 — ünïcödé',
  'JSON: {"key": "value", "list": [1, 2, {"nested": true}], "tab": "\\t"}',
  '',
  '',
  'Two blank lines above. <tags> & </parameter> stay too.',
  '',
].join('\n');

const EXPECTED_APP = ORIGINAL_APP.replace('    return "Hello, " + name', '    return f"Héllo, {name}! \\\\o/ \\"quoted\\""');

function writeOriginalFiles(workspace: string): void {
  mkdirSync(join(workspace, 'src'));
  writeFileSync(join(workspace, 'src', 'app.py'), ORIGINAL_APP);
}

for (const profile of ['vllm-hermes', 'vllm-qwen3coder'] as const satisfies readonly EngineProfile[]) {
  describe(codexSuiteTitle(`freeform surface, ${profile}`), { timeout: 120_000 }, () => {
    it('apply_patch adds and updates files exactly as the patch says', async (context) => {
      // The XML parser cuts a parameter at `</parameter>`: that byte run cannot pass
      // through a qwen3_coder backend at all, whatever the bridge does.
      const patch = profile === 'vllm-qwen3coder' ? GOOD_PATCH.replace(' & </parameter> stay too.', ' & stay too.') : GOOD_PATCH;
      const expectedNotes = profile === 'vllm-qwen3coder' ? EXPECTED_NOTES.replace(' & </parameter> stay too.', ' & stay too.') : EXPECTED_NOTES;
      const callId = createToolCallId(profile, false);
      const answer = 'Patched: docs/notes.md added, src/app.py updated.';
      const session = await startE2eSession({
        profile,
        surface: 'freeform',
        responder: (request) => (lastMessage(request)?.role === 'user' ? { toolCalls: [{ id: callId, name: 'apply_patch', input: patch }] } : { text: answer }),
      });
      try {
        writeOriginalFiles(session.workspace);
        const run = await session.runCodex('Add the notes file and make the greeting friendlier.');
        assert.equal(run.code, 0, describeRun(run));
        assert.deepEqual(run.agentMessages, [answer], describeRun(run));
        assert.equal(readFileSync(join(session.workspace, 'docs', 'notes.md'), 'utf8'), expectedNotes);
        assert.equal(readFileSync(join(session.workspace, 'src', 'app.py'), 'utf8'), EXPECTED_APP);

        const requests = chatRequests(session.backend);
        assert.equal(requests.length, 2, 'one request per model turn, no retries');
        const lowered = loweredTool(requests[0]!, 'apply_patch');
        assert.ok(lowered, 'apply_patch was not lowered to a function');
        assert.deepEqual(Object.keys((lowered.function.parameters as { properties: Record<string, unknown> }).properties), ['input']);
        assert.match(lowered.function.description ?? '', /Begin Patch/);

        const calls = replayedCalls(requests[1]!);
        assert.equal(calls.length, 1);
        assert.equal(calls[0]?.id, callId);
        assert.equal(calls[0]?.name, 'apply_patch');
        // Replayed as valid JSON `{"input": …}` with the patch byte for byte (the XML parser trims one final newline).
        assert.equal((JSON.parse(calls[0]!.arguments) as { input: string }).input.replace(/\n$/, ''), patch.replace(/\n$/, ''));
        const outputs = replayedOutputs(requests[1]!);
        assert.equal(outputs[0]?.toolCallId, callId);
        assert.match(outputs[0]?.content ?? '', /Success\. Updated the following files:\nA docs\/notes\.md\nM src\/app\.py/);
        assert.deepEqual(unexpectedWarnings(session.traffic), []);
        context.diagnostic(`apply_patch output replayed to the model: ${JSON.stringify(outputs[0]?.content)}`);
      } finally {
        await session.close();
      }
    });
  });
}

describe(codexSuiteTitle('freeform surface, malformed patch'), { timeout: 120_000 }, () => {
  it('Codex reports the error to the model, the traffic and log show grammar_mismatch, the next turn recovers', async (context) => {
    const profile: EngineProfile = 'vllm-qwen3coder';
    const badCallId = createToolCallId(profile, false);
    const goodCallId = createToolCallId(profile, false);
    // An invented hunk header: neither the grammar nor Codex's parser knows `*** Modify File:`.
    const badPatch = '*** Begin Patch\n*** Modify File: hello.txt\n+hello\n*** End Patch\n';
    const goodPatch = '*** Begin Patch\n*** Add File: hello.txt\n+hello, recovered\n*** End Patch\n';
    const answer = 'Created hello.txt after fixing the patch.';
    const session = await startE2eSession({
      profile,
      surface: 'freeform',
      responder: (request) => {
        const outputs = replayedOutputs(request);
        if (outputs.length === 0) return { toolCalls: [{ id: badCallId, name: 'apply_patch', input: badPatch }] };
        if (outputs.length === 1) return { text: 'The patch was rejected; retrying with a valid one.', toolCalls: [{ id: goodCallId, name: 'apply_patch', input: goodPatch }] };
        return { text: answer };
      },
    });
    try {
      const run = await session.runCodex('Create hello.txt.');
      assert.equal(run.code, 0, describeRun(run));
      assert.equal(run.agentMessages.at(-1), answer, describeRun(run));
      assert.equal(readFileSync(join(session.workspace, 'hello.txt'), 'utf8'), 'hello, recovered\n');

      const requests = chatRequests(session.backend);
      assert.equal(requests.length, 3, 'bad call, good call, answer: no retries');
      const errorOutput = replayedOutputs(requests[1]!).find((output) => output.toolCallId === badCallId);
      assert.ok(errorOutput, 'the failed call has no tool output in the next request');
      assert.match(errorOutput.content, /apply_patch verification failed|invalid patch|Invalid patch/i);
      context.diagnostic(`Codex told the model: ${JSON.stringify(errorOutput.content)}`);
      assert.deepEqual(
        replayedCalls(requests[2]!).map((call) => call.id),
        [badCallId, goodCallId],
      );

      const mismatches = trafficWarnings(session.traffic).filter((warning) => warning.kind === 'grammar_mismatch');
      assert.equal(mismatches.length, 1, JSON.stringify(trafficWarnings(session.traffic)));
      assert.equal(mismatches[0]?.tool, 'apply_patch');
      assert.equal(mismatches[0]?.callId, badCallId);
      context.diagnostic(`bridge warning: ${mismatches[0]?.detail}`);
      const ends = exchangeEnds(session.traffic);
      assert.deepEqual(ends.map((end) => end.outcome), ['completed', 'completed', 'completed']);
      // The live view gets the warning while the exchange is still streaming, not only at its end.
      const deltaWarnings = session.traffic.flatMap((event) => (event.type === 'exchange-delta' ? event.warnings : []));
      assert.ok(deltaWarnings.some((warning) => warning.kind === 'grammar_mismatch'), 'no exchange-delta carried the warning');
      // The recovered patch raises nothing.
      assert.deepEqual(unexpectedWarnings(session.traffic).map((warning) => warning.callId), [badCallId]);

      await session.stopServers();
      const log = session.readExchangeLog();
      assert.equal(log.length, 3);
      const loggedKinds = log.map((record) => (record.warnings as Array<{ kind: string }>).map((warning) => warning.kind));
      assert.ok(loggedKinds[0]?.includes('grammar_mismatch'), JSON.stringify(loggedKinds));
    } finally {
      await session.close();
    }
  });
});
