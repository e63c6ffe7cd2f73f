/**
 * A repository cannot redirect the bridge. The runner opens a trusted workspace whose own
 * `.vscode/settings.json` names another backend (one the runner owns and watches), `autoStart`, a
 * codexHome inside the repository and a model. The user's settings name their own backend. The
 * bridge must follow the user only: traffic and key to the user's backend, files to the user's
 * codexHome, a notice about what it ignored, and a change of the user's own setting applied at once.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { BackendCheckOutcome } from '../../../src/extension/describe-backend-check.ts';
import type { FreeformBridgeTestApi } from '../../../src/extension/test-api.ts';
import { FAKE_MODEL, startFakeBackend, type FakeBackend } from './fake-backend.ts';
import { HOSTILE_BACKEND_VARIABLE } from './hostile-workspace.ts';
import { responsesRequest, updateSetting, waitFor } from './suite-support.ts';

const EXTENSION_ID = 'freeform-bridge.freeform-bridge';
const KEY = 'sk-user-key-never-for-the-repository';
const USER_ONLY_KEYS_SET_BY_THE_WORKSPACE = ['backendUrl', 'autoStart', 'codexHome', 'model'];

type State = ReturnType<FreeformBridgeTestApi['getState']>;

describe('A workspace cannot redirect the bridge', function () {
  const hostileUrl = process.env[HOSTILE_BACKEND_VARIABLE];
  let api: FreeformBridgeTestApi;
  let userBackend: FakeBackend;
  let otherUserBackend: FakeBackend;
  let userCodexHome: string;
  let folder: vscode.WorkspaceFolder;
  const state = (): State => api.getState();

  before(async function () {
    // Only the code-server runner builds the hostile workspace; test-electron opens the plain fixture.
    if (!hostileUrl) this.skip();
    const extension = vscode.extensions.getExtension<FreeformBridgeTestApi>(EXTENSION_ID);
    const exported = await extension?.activate();
    assert.ok(exported, 'activate() returns the test API in ExtensionMode.Test');
    api = exported;
    const first = vscode.workspace.workspaceFolders?.[0];
    assert.ok(first, 'a workspace folder is open');
    folder = first;
    userBackend = await startFakeBackend('pong from the user\'s backend');
    otherUserBackend = await startFakeBackend('pong from the user\'s other backend');
    userCodexHome = mkdtempSync(join(tmpdir(), 'freeform-bridge-user-codex-home-'));
    await vscode.commands.executeCommand('freeformBridge.stop');
    await updateSetting('backendUrl', userBackend.url);
    await updateSetting('codexHome', userCodexHome);
  });

  after(async () => {
    if (!hostileUrl) return;
    await vscode.commands.executeCommand('freeformBridge.stop');
    await vscode.commands.executeCommand('freeformBridge.setBackendApiKey', '');
    for (const key of ['backendUrl', 'codexHome']) await updateSetting(key, undefined);
    await userBackend?.close();
    await otherUserBackend?.close();
    if (userCodexHome) rmSync(userCodexHome, { recursive: true, force: true });
  });

  const post = async (url: string | null): Promise<{ status: number; text: string }> => {
    const response = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${api.getBridgeToken()}` },
      body: responsesRequest('ping'),
    });
    const body = (await response.json()) as { output?: Array<{ type: string; content?: Array<{ text: string }> }> };
    return { status: response.status, text: body.output?.find((item) => item.type === 'message')?.content?.[0]?.text ?? JSON.stringify(body) };
  };
  const lastChatRequest = (backend: FakeBackend) => backend.requests.filter((request) => request.path === '/v1/chat/completions').at(-1);

  it('runs in a trusted folder whose own settings name another backend, autoStart, a codexHome and a model', () => {
    assert.equal(vscode.workspace.isTrusted, true);
    const text = readFileSync(join(folder.uri.fsPath, '.vscode', 'settings.json'), 'utf8');
    assert.ok(text.includes(`"freeformBridge.backendUrl": "${hostileUrl}"`), text);
    assert.ok(text.includes('"freeformBridge.autoStart": true'), text);
    // The declared application scope makes VS Code itself keep no workspace value.
    const inspected = vscode.workspace.getConfiguration('freeformBridge').inspect('backendUrl');
    assert.equal(inspected?.workspaceValue, undefined, JSON.stringify(inspected));
    assert.equal(inspected?.globalValue, userBackend.url);
  });

  it('says which settings it ignored, and where they came from', async () => {
    const current = await waitFor(state, (value) => value.workspaceSettingNotices.length > 0, 'the notice about the ignored workspace settings');
    assert.deepEqual(current.ignoredWorkspaceSettings, [{ source: `${folder.name}/.vscode/settings.json`, keys: USER_ONLY_KEYS_SET_BY_THE_WORKSPACE }]);
    const notice = current.workspaceSettingNotices[0] ?? '';
    for (const key of USER_ONLY_KEYS_SET_BY_THE_WORKSPACE) assert.ok(notice.includes(`freeformBridge.${key}`), notice);
    assert.ok(notice.includes(`${folder.name}/.vscode/settings.json`), notice);
  });

  it('sends Codex traffic and the stored key to the user\'s backend only, and writes to the user\'s codexHome', async () => {
    await vscode.commands.executeCommand('freeformBridge.setBackendApiKey', KEY);
    assert.equal(state().backendApiKeyOrigin, new URL(userBackend.url).origin);
    await vscode.commands.executeCommand('freeformBridge.start');
    const on = await waitFor(state, (value) => value.status === 'on', 'the bridge to run');
    assert.equal(on.backendUrl, userBackend.url);

    const answer = await post(on.url);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.text, 'pong from the user\'s backend');
    const upstream = lastChatRequest(userBackend);
    assert.equal(upstream?.headers.authorization, `Bearer ${KEY}`);
    assert.equal((JSON.parse(upstream?.body ?? '{}') as { model?: string }).model, FAKE_MODEL, 'the workspace\'s model is not sent');

    const check = await vscode.commands.executeCommand<BackendCheckOutcome>('freeformBridge.checkBackend');
    assert.equal(check?.backendUrl, userBackend.url);

    const written = await vscode.commands.executeCommand<{ kind: string; files: string[] }>('freeformBridge.writeCodexConfig', { model: FAKE_MODEL, toolSurface: 'freeform', confirmed: true });
    assert.equal(written?.kind, 'written', JSON.stringify(written));
    assert.ok(written.files.every((file) => file.startsWith(userCodexHome)), JSON.stringify(written.files));
    assert.equal(existsSync(join(folder.uri.fsPath, 'codex-home-from-the-repository')), false, 'nothing is written where the repository pointed');
  });

  it('applies a change of the user\'s own backendUrl at once, and keeps the key from a backend it was not stored for', async () => {
    await updateSetting('backendUrl', otherUserBackend.url);
    const moved = await waitFor(state, (value) => value.status === 'on' && value.backendUrl === otherUserBackend.url, 'the bridge to use the user\'s other backend');
    const answer = await post(moved.url);
    assert.equal(answer.text, 'pong from the user\'s other backend');
    // VS Code refuses modal dialogs while extension tests run: the question counts as declined.
    assert.equal(lastChatRequest(otherUserBackend)?.headers.authorization, undefined, 'no key without the user\'s yes');
    assert.ok(otherUserBackend.requests.every((request) => request.headers.authorization === undefined), 'not even for the reachability probe');
    assert.equal(state().backendApiKeyOrigin, new URL(userBackend.url).origin, 'the key stays bound to its backend');

    await updateSetting('backendUrl', userBackend.url);
    const back = await waitFor(state, (value) => value.status === 'on' && value.backendUrl === userBackend.url, 'the bridge to return to the user\'s backend');
    await post(back.url);
    assert.equal(lastChatRequest(userBackend)?.headers.authorization, `Bearer ${KEY}`, 'the key again, on its own backend');
  });
});
