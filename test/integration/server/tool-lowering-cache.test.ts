import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itemsDone, postResponses, readSseEvents, startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { renderChunkFrame, startScriptedBackend, startSseResponse, type ScriptedBackend, type ScriptedHandler } from '../../support/scripted-backend.ts';

/**
 * The bridge lowers a tool list once and reuses it while a session resends it (tool-lowering-cache.ts).
 * Through the server: what reaches the backend is each turn's own tool list, a call is lifted with
 * the map of the list it came from, and a large body (long strings carried as bytes) gets the reused
 * list spliced in next to its own text.
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

describe('tool lowering cache, through the server', () => {
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

  it('splices a reused list into a large body whose long strings travel as bytes', async () => {
    const tools = [execCommand('Run.'), applyPatch];
    await turn(tools, 'a small turn first');
    // 600 kB: past the size from which long strings are carried as bytes (passthrough-text.ts).
    const long = `${'naïve 👋 — 日本 '.repeat(40_000)}end`;
    const { sent, items } = await turn(tools, long);
    assert.equal(sent.messages.at(-1)?.content, long);
    assert.equal(sent.tools.find((tool) => tool.function.name === 'exec_command')?.function.description, 'Run.');
    assert.equal(items.find((item) => item.type === 'custom_tool_call')?.input, PATCH);
  });
});
