/**
 * The extension-host half of the traffic panel UI test (run-traffic-panel-ui-test.ts is the browser
 * half). Loaded as extensionTestsPath, so VS Code calls run() once the extension is loaded; while it
 * runs, the runner plays the user in the workbench.
 *
 * It drives a scripted session through the real bridge: Codex's captured freeform-apply_patch request
 * is POSTed to the bridge three times; the runner's mock backend answers with a malformed, HTML-laden
 * apply_patch call (and a truncated exec_command), then a good patch and a function call, then an
 * overload error. The first exchange happens before the panel is open (it must arrive in the
 * snapshot), the others while it is open (they must arrive as appends).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { FreeformBridgeTestApi } from '../../../src/extension/test-api.ts';
import { CAPTURE_VARIABLE, CONTROL_DIRECTORY_VARIABLE, DONE_FILE, SNAPSHOT_CHECKED_FILE, UI_MARKER, type DriverPhase } from './markers.ts';

const EXTENSION_ID = 'freeform-bridge.freeform-bridge';
/** Set as the backend API key so the test can prove it never leaves through the panel's exports. */
const BACKEND_API_KEY = 'sk-ui-test-backend-key-5f1e2d';

function report(phase: DriverPhase): void {
  console.log(`${UI_MARKER}${JSON.stringify(phase)}`);
}

async function waitFor<T>(read: () => T, accept: (value: T) => boolean, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((wake) => setTimeout(wake, 100));
  }
}

/** POSTs Codex's request and reads the whole SSE answer; returns the custom_tool_call items delivered. */
async function postCodexRequest(url: string, token: string, body: string): Promise<Array<{ call_id: string; input: string }>> {
  const response = await fetch(`${url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` },
    body,
  });
  const text = await response.text();
  const calls: Array<{ call_id: string; input: string }> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const event = JSON.parse(line.slice('data: '.length)) as { type?: string; item?: { type?: string; call_id?: string; input?: string } };
    if (event.type === 'response.output_item.done' && event.item?.type === 'custom_tool_call') calls.push({ call_id: event.item.call_id ?? '', input: event.item.input ?? '' });
  }
  return calls;
}

export async function run(): Promise<void> {
  const control = process.env[CONTROL_DIRECTORY_VARIABLE];
  const capture = process.env[CAPTURE_VARIABLE];
  try {
    assert.ok(control && capture, `${CONTROL_DIRECTORY_VARIABLE} and ${CAPTURE_VARIABLE} must be set by the runner`);
    const extension = vscode.extensions.getExtension<FreeformBridgeTestApi | undefined>(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not loaded`);
    const api = await extension.activate();
    assert.ok(api, 'the test API (activate() returns it in ExtensionMode.Test)');
    // Room for the panel in the screenshot.
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    await vscode.commands.executeCommand('workbench.action.closePanel');
    await vscode.commands.executeCommand('freeformBridge.setBackendApiKey', BACKEND_API_KEY);
    await vscode.commands.executeCommand('freeformBridge.start');
    const { url } = await waitFor(() => api.getState(), (state) => state.status === 'on', 'the bridge to run', 30_000);
    assert.ok(url);
    const token = api.getBridgeToken();
    const body = readFileSync(capture, 'utf8');

    const [call] = await postCodexRequest(url, token, body);
    assert.ok(call, 'the first exchange delivered a custom_tool_call');
    report({ phase: 'first-exchange-done', callId: call.call_id, payload: call.input });

    // The runner opens the panel through the command palette and checks the snapshot before more traffic comes.
    await waitFor(() => existsSync(join(control, SNAPSHOT_CHECKED_FILE)) || existsSync(join(control, DONE_FILE)), (ready) => ready, 'the runner to open the panel', 180_000);
    assert.ok(api.getState().trafficPanel.readyCount > 0, 'the panel\'s script said ready');
    await postCodexRequest(url, token, body);
    await postCodexRequest(url, token, body);
    await waitFor(() => api.getState().roundTrips, (count) => count >= 3, 'three finished round trips', 30_000);

    // Export through the command argument (the save dialog's stand-in): one line per round trip, no secret.
    const folder = mkdtempSync(join(tmpdir(), 'freeform-bridge-export-'));
    try {
      const file = join(folder, 'session.jsonl');
      const result = await vscode.commands.executeCommand<{ kind: string; exchanges: number }>('freeformBridge.exportTraffic', { uri: file });
      assert.equal(result?.kind, 'exported');
      const text = readFileSync(file, 'utf8');
      const lines = text.trimEnd().split('\n');
      assert.equal(lines.length, 3, 'one JSON line per round trip');
      for (const line of lines) JSON.parse(line);
      assert.ok(text.includes('grammar_mismatch'), 'the export carries the warning');
      assert.ok(text.includes(JSON.stringify(call.input).slice(1, -1)), 'the export carries the lifted input');
      assert.ok(!text.includes(token), 'the bridge token never appears in the export');
      assert.ok(!text.includes(BACKEND_API_KEY), 'the backend API key never appears in the export');
      console.log(`    ✔ (extension host) Export Live Traffic wrote ${lines.length} JSON lines with the warning and the verbatim input, without the token or the API key`);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    report({ phase: 'traffic-done', exchanges: 3 });

    const done = join(control, DONE_FILE);
    await waitFor(() => existsSync(done), (exists) => exists, 'the runner to finish with the workbench', 240_000);
    const verdict = JSON.parse(readFileSync(done, 'utf8')) as { ok: boolean; message?: string };
    await vscode.commands.executeCommand('freeformBridge.stop');
    if (!verdict.ok) throw new Error(`the workbench checks failed: ${verdict.message ?? ''}`);
    // The runner clicked "Copy as curl" last (before "Open as JSON", which does not touch the clipboard).
    const clipboard = await Promise.resolve(vscode.env.clipboard.readText()).catch(() => '');
    if (clipboard.startsWith('curl ')) {
      assert.ok(!clipboard.includes(token) && !clipboard.includes(BACKEND_API_KEY), 'the copied curl command carries no secret');
      assert.ok(clipboard.includes('"Authorization: Bearer $FREEFORM_BRIDGE_BACKEND_API_KEY"'), clipboard.slice(0, 400));
      assert.ok(clipboard.includes('/chat/completions'), clipboard.slice(0, 400));
      console.log('    ✔ (extension host) the copied curl command targets the backend and reads the API key from the environment, with no secret in it');
    } else {
      console.log(`    - (extension host) the clipboard could not be read back here (${JSON.stringify(clipboard.slice(0, 40))}); renderCurlCommand's unit tests cover the redaction`);
    }
  } catch (error) {
    report({ phase: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    throw error;
  }
}
