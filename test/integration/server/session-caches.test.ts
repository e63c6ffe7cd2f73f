import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itemsDone, postResponses, readSseEvents, startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { answerWithText, renderChunkFrame, startScriptedBackend, startSseResponse, type ScriptedBackend, type ScriptedHandler } from '../../../mock-backend/scripted-backend.ts';
import { resolveBridgeOptions } from '../../../src/core/bridge-options.ts';
import { convertResponsesRequestToChatRequest } from '../../../src/core/lower/convert-responses-request-to-chat-request.ts';
import { createWarningLedger } from '../../../src/core/warnings.ts';

/**
 * A session resends its tool list and its whole history on every turn, and each turn is lowered on its
 * own. Through the server: what reaches the backend is each turn's own tool list and history, a call is
 * lifted with the map of the list it came from, and a large body (long strings carried as bytes) gets
 * its tool list next to its own text.
 */

const PATCH = '*** Begin Patch\n*** Add File: notes.md\n+hello\n*** End Patch\n';
const applyPatch = { type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: /(.|\\n)+/' } };
const execCommand = (description: string) => ({ type: 'function', name: 'exec_command', description, parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } });

const answerWithPatchCall: ScriptedHandler = (response) => {
  startSseResponse(response);
  response.write(renderChunkFrame({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) } }] }));
  response.write(renderChunkFrame({}, 'tool_calls'));
  response.end('data: [DONE]\n\n');
};

interface SentTool {
  function: { name: string; description: string };
}

describe("a session's turns, through the server", () => {
  let backend: ScriptedBackend;
  let bridge: StartedBridge;
  before(async () => {
    backend = await startScriptedBackend({ parseLimitBytes: 4 * 1024 * 1024 });
    bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0 });
  });
  after(async () => {
    await bridge.close();
    await backend.close();
  });

  async function turn(tools: object[], input: string): Promise<{ sent: { tools: SentTool[]; messages: Array<{ content: unknown }> }; items: Array<Record<string, unknown>> }> {
    backend.setHandlers(answerWithPatchCall);
    const answer = await readSseEvents(await postResponses(bridge.url, { model: 'qwen3-coder', input, tools, tool_choice: 'auto', stream: true }));
    assert.equal(answer.status, 200);
    const sent = backend.requests.at(-1)?.body as { tools: SentTool[]; messages: Array<{ content: unknown }> };
    return { sent, items: itemsDone(answer.events) };
  }

  it('sends each turn its own tools and lifts each call with them, as the list stays, changes and comes back', async () => {
    const descriptions: string[] = [];
    for (const description of ['Run.', 'Run.', 'Run a command.', 'Run.']) {
      const { sent, items } = await turn([execCommand(description), applyPatch], 'patch it');
      descriptions.push(sent.tools.find((tool) => tool.function.name === 'exec_command')?.function.description ?? '');
      assert.deepEqual(
        sent.tools.map((tool) => tool.function.name),
        ['exec_command', 'apply_patch'],
      );
      const call = items.find((item) => item.type === 'custom_tool_call');
      assert.deepEqual([call?.name, call?.input], ['apply_patch', PATCH]);
    }
    assert.deepEqual(descriptions, ['Run.', 'Run.', 'Run a command.', 'Run.']);
  });

  it('sends the tool list with a large body whose long strings travel as bytes', async () => {
    const tools = [execCommand('Run.'), applyPatch];
    await turn(tools, 'a small turn first');
    // 600 kB: past the size from which long strings are carried as bytes (outbound-encoding.ts).
    const long = `${'naïve 👋 — 日本 '.repeat(40_000)}end`;
    const { sent, items } = await turn(tools, long);
    assert.equal(sent.messages.at(-1)?.content, long);
    assert.equal(sent.tools.find((tool) => tool.function.name === 'exec_command')?.function.description, 'Run.');
    assert.equal(items.find((item) => item.type === 'custom_tool_call')?.input, PATCH);
  });

  it('sends each turn its own history as the session grows, rewrites it, and changes sessions, whole or by parts', async () => {
    const options = resolveBridgeOptions();
    const history: object[] = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list the files — ünï' }] }];
    const turns: Array<{ session: string; input: object[] }> = [];
    for (let turn = 1; turn <= 4; turn++) {
      history.push({ type: 'function_call', call_id: `call_${turn}`, name: 'exec_command', arguments: JSON.stringify({ cmd: `ls ${turn}` }) });
      history.push({ type: 'function_call_output', call_id: `call_${turn}`, output: `file ${turn}` });
      turns.push({ session: 'thread-1', input: structuredClone(history) });
    }
    // Rewritten from the start (compaction), then the same history under another session.
    turns.push({ session: 'thread-1', input: [{ type: 'message', role: 'user', content: 'summary' }, ...structuredClone(history).slice(3)] });
    turns.push({ session: 'thread-2', input: structuredClone(history) });
    for (const parts of [false, true]) {
      const partsBridge = parts ? await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0, serialiseRequestParts: true }) : bridge;
      try {
        for (const { session, input } of turns) {
          backend.setHandlers(answerWithText('ok'));
          const body = { model: 'qwen3-coder', instructions: 'You are Codex.', input, tools: [execCommand('Run.')], prompt_cache_key: session, stream: true };
          const answer = await readSseEvents(await postResponses(partsBridge.url, body));
          assert.equal(answer.status, 200);
          const expected = convertResponsesRequestToChatRequest(structuredClone(body), options, createWarningLedger()).chatRequest;
          assert.deepEqual((backend.requests.at(-1)?.body as { messages: unknown }).messages, expected.messages);
        }
      } finally {
        if (parts) await partsBridge.close();
      }
    }
  });
});

