import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createToolCallId } from '../../mock-backend/prepare-turn.ts';
import { chatRequests, codexSuiteTitle, loweredToolNames, replayedCalls, replayedOutputs } from '../../harness/codex-session.ts';
import { textInput, trackAppServers } from './app-server-client.ts';
import { IDE_MODEL, IDE_PROVIDER_ID, startIdeSetup } from './ide-setup.ts';

/**
 * Code mode in the IDE: the bridge's catalog marks the model `code_mode_only`, so app-server offers
 * one free-form `exec` tool (hoisted out of `additional_tools` by the bridge); the script the mock
 * model writes calls apply_patch from inside the V8 isolate.
 */

trackAppServers(after);

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello from code mode\n*** End Patch\n';
const SCRIPT = `const result = await tools.apply_patch(${JSON.stringify(PATCH)});\ntext(typeof result === 'string' ? result : JSON.stringify(result));`;

describe(codexSuiteTitle('app-server as the VS Code extension drives it, code mode'), { timeout: 180_000 }, () => {
  it('the catalog turns on code mode: exec runs a script whose apply_patch creates the file', async (context) => {
    const callId = createToolCallId('vllm-hermes', false);
    const setup = await startIdeSetup({
      surface: 'code-mode',
      token: 'ide-bridge-token',
      responder: (request) => (replayedOutputs(request).length === 0 ? { toolCalls: [{ id: callId, name: 'functions__exec', input: SCRIPT }] } : { text: 'Done.' }),
    });
    context.after(() => setup.close());
    const server = setup.startAppServer();
    await server.initialize();
    const thread = (await server.request('thread/start', { cwd: setup.workspace, approvalPolicy: 'untrusted', sandbox: 'workspace-write' })).thread as Record<string, unknown>;
    assert.deepEqual([thread.modelProvider, thread.model], [IDE_PROVIDER_ID, IDE_MODEL]);
    await server.request('turn/start', { threadId: thread.id, input: textInput('create hello.txt') });
    const completed = await server.waitForNotification('turn/completed', (params) => params.threadId === thread.id);
    assert.equal((completed.turn as { status: string }).status, 'completed', JSON.stringify(completed).slice(0, 2_000));

    const requests = chatRequests(setup.backend);
    assert.equal(requests.length, 2);
    assert.ok(loweredToolNames(requests[0]!).includes('functions__exec'), loweredToolNames(requests[0]!).join(' '));
    assert.equal(loweredToolNames(requests[0]!).includes('apply_patch'), false, 'code mode offers apply_patch only inside exec');
    assert.deepEqual(replayedCalls(requests[1]!).map((call) => [call.id, call.name]), [[callId, 'functions__exec']]);
    context.diagnostic(`exec output replayed: ${JSON.stringify(replayedOutputs(requests[1]!)[0]?.content)}`);
    context.diagnostic(`server→client requests: ${server.serverRequests.map((request) => request.method).join(', ') || '(none)'}`);
    assert.equal(readFileSync(join(setup.workspace, 'hello.txt'), 'utf8'), 'hello from code mode\n');
    const approval = server.serverRequests.find((request) => request.method === 'item/fileChange/requestApproval');
    assert.deepEqual(approval?.answer, { decision: 'accept' }, 'the nested apply_patch waited for the IDE to accept it');
  });
});
