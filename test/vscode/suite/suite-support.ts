/** Helpers the real-VS-Code suites share: polling the extension's state, user settings, a Codex request. */
import * as vscode from 'vscode';
import { FAKE_MODEL } from './fake-backend.ts';

export async function waitFor<T>(read: () => T, accept: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = read();
  while (!accept(value)) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${JSON.stringify(value)}`);
    await new Promise((wake) => setTimeout(wake, 50));
    value = read();
  }
  return value;
}

/** Sets one of the extension's settings in the user settings (undefined removes it). */
export async function updateSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration('freeformBridge').update(key, value, vscode.ConfigurationTarget.Global);
}

/** A minimal non-streamed Responses request, as Codex would send one turn. */
export function responsesRequest(text: string): string {
  return JSON.stringify({
    model: FAKE_MODEL,
    instructions: 'You are a test.',
    input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }],
    tools: [],
    stream: false,
  });
}
