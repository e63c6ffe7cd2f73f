import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { createToolCallId } from '../../mock-backend/prepare-turn.ts';
import { chatRequests, codexSuiteTitle, lastMessage, loweredTool, replayedCalls, replayedOutputs } from '../../harness/codex-session.ts';
import { textInput, trackAppServers, type AppServer } from './app-server-client.ts';
import { IDE_MODEL, IDE_PROVIDER_ID, startIdeSetup, USER_CONFIG } from './ide-setup.ts';

/**
 * The Codex extension in VS Code, played by the real `codex app-server`: config.toml made by
 * `codex-config --make-default`, no `-p`. The model list comes from the bridge's catalog (and OpenAI's
 * stays), a thread started without a model lands on the bridge, and the free-form apply_patch the
 * mock model calls is applied to the workspace.
 */

trackAppServers(after);

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello from the bridge\n*** End Patch\n';
const ANSWER = 'Created hello.txt.';

type ModelListEntry = { id: string; model: string; displayName: string; inputModalities?: string[]; supportedReasoningEfforts?: unknown[] };

async function listModels(server: AppServer, params: Record<string, unknown> = {}): Promise<ModelListEntry[]> {
  return (await server.request('model/list', params)).data as ModelListEntry[];
}

describe(codexSuiteTitle('app-server as the VS Code extension drives it, freeform surface'), { timeout: 180_000 }, () => {
  it('initialize → model/list → thread/start without a model → turn/start: the free-form apply_patch is applied and replayed', async (context) => {
    const callId = createToolCallId('vllm-hermes', false);
    const setup = await startIdeSetup({
      surface: 'freeform',
      token: 'ide-bridge-token',
      responder: (request) => (lastMessage(request)?.role === 'user' ? { toolCalls: [{ id: callId, name: 'apply_patch', input: PATCH }] } : { text: ANSWER }),
    });
    context.after(() => setup.close());

    // config.toml: the user's settings kept, ours added, and Codex's catalog URL with the bearer it needs.
    const config = readFileSync(join(setup.codexHome, 'config.toml'), 'utf8');
    assert.ok(config.startsWith('# my Codex settings\napproval_policy = "on-request"\n'), config);
    const parsed = JSON.parse(JSON.stringify(parseToml(config))) as { model: string; model_provider: string; tui: unknown; model_providers: Record<string, Record<string, unknown>> };
    assert.equal(parsed.model, IDE_MODEL);
    assert.equal(parsed.model_provider, IDE_PROVIDER_ID);
    assert.deepEqual(parsed.tui, { notifications: true });
    assert.equal(parsed.model_providers[IDE_PROVIDER_ID]!.experimental_bearer_token, 'ide-bridge-token');
    assert.equal(parsed.model_providers[IDE_PROVIDER_ID]!.model_catalog_url, `${setup.bridge!.url}/v1/codex/models?tool_surface=freeform`);
    assert.ok(config.includes(USER_CONFIG.slice(USER_CONFIG.indexOf('[tui]'))), 'the [tui] table is kept byte for byte');

    const server = setup.startAppServer();
    await server.initialize();
    const models = await listModels(server);
    const ours = models.find((model) => model.id === IDE_MODEL);
    assert.ok(ours, `model/list lacks the bridge's model: ${JSON.stringify(models)}`);
    assert.equal(ours.displayName, `${IDE_MODEL} (Freeform Bridge)`);
    assert.deepEqual(ours.inputModalities, ['text']);
    const openAiModels = await listModels(server, { modelProvider: 'openai' });
    assert.ok(openAiModels.length > 0 && openAiModels.every((model) => model.id !== IDE_MODEL), JSON.stringify(openAiModels.map((model) => model.id)));
    context.diagnostic(`model/list: ours ${ours.id}; OpenAI's: ${openAiModels.map((model) => model.id).join(', ')}`);

    const thread = (await server.request('thread/start', { cwd: setup.workspace, approvalPolicy: 'untrusted', sandbox: 'workspace-write' })).thread as Record<string, unknown>;
    assert.equal(thread.modelProvider, IDE_PROVIDER_ID);
    assert.equal(thread.model, IDE_MODEL);
    await server.request('turn/start', { threadId: thread.id, input: textInput('create hello.txt') });
    const completed = await server.waitForNotification('turn/completed', (params) => params.threadId === thread.id);
    const turn = completed.turn as { status: string; error: unknown };
    assert.equal(turn.status, 'completed', JSON.stringify(completed).slice(0, 2_000));

    assert.equal(readFileSync(join(setup.workspace, 'hello.txt'), 'utf8'), 'hello from the bridge\n');
    const requests = chatRequests(setup.backend);
    assert.equal(requests.length, 2, 'one chat request per model turn');
    assert.ok(loweredTool(requests[0]!, 'apply_patch'), 'Codex offered no free-form apply_patch through the bridge');
    const calls = replayedCalls(requests[1]!);
    assert.deepEqual(calls.map((call) => [call.id, call.name]), [[callId, 'apply_patch']]);
    assert.equal((JSON.parse(calls[0]!.arguments) as { input: string }).input, PATCH);
    assert.match(replayedOutputs(requests[1]!)[0]?.content ?? '', /Success\. Updated the following files:\nA hello\.txt/);
    const approvals = server.serverRequests.filter((request) => request.method === 'item/fileChange/requestApproval');
    context.diagnostic(`server→client requests: ${server.serverRequests.map((request) => request.method).join(', ') || '(none)'}`);
    assert.equal(approvals.length, 1, 'approvalPolicy untrusted: the patch waits for the IDE to accept it');
    assert.deepEqual(approvals[0]!.answer, { decision: 'accept' });
    const agentMessages = server.notifications.filter((message) => message.method === 'item/completed' && (message.params?.item as { type?: string } | undefined)?.type === 'agentMessage');
    assert.equal((agentMessages.at(-1)?.params?.item as { text?: string } | undefined)?.text, ANSWER);
    assert.equal(existsSync(join(setup.codexHome, 'models_cache.json')), true, 'Codex cached the fetched catalog');
  });
});
