/**
 * Every command package.json contributes (palette entries, walkthrough buttons) is registered once
 * the extension is active: a contributed command without a handler is "command not found" for a user.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';

const EXTENSION_ID = 'freeform-bridge.freeform-bridge';

describe('Contributions', () => {
  it('registers every contributed command', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    const contributed = ((extension.packageJSON as { contributes: { commands: Array<{ command: string }> } }).contributes.commands ?? []).map((entry) => entry.command);
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepEqual(contributed.filter((command) => !registered.has(command)), []);
  });
});
