import * as vscode from 'vscode';
import { originOf } from '../bridge-secrets.ts';
import type { ExtensionServices } from '../extension-services.ts';
import { readBridgeSettings } from '../settings.ts';

/** Freeform Bridge: Set Backend API Key — stored in the secret storage, bound to the backend's origin. */
export function registerSetBackendApiKeyCommand(services: ExtensionServices): vscode.Disposable {
  const { secrets, logger } = services;
  return vscode.commands.registerCommand('freeformBridge.setBackendApiKey', async (key?: unknown) => {
    // An argument (keybinding, another extension, the tests) skips the input box.
    const entered =
      typeof key === 'string'
        ? key
        : await vscode.window.showInputBox({
            title: 'Freeform Bridge: Backend API Key',
            prompt: `Sent upstream as "Authorization: Bearer …" to ${originOf(readBridgeSettings().backendUrl) ?? readBridgeSettings().backendUrl} only. Kept in VS Code's secret storage. Leave empty to remove it.`,
            password: true,
            ignoreFocusOut: true,
          });
    if (entered === undefined) return;
    const backendUrl = readBridgeSettings().backendUrl;
    await secrets.setBackendApiKey(entered, backendUrl);
    services.forgetDeclinedKeyOrigins();
    const removed = entered.trim() === '';
    logger.info(removed ? 'backend API key removed' : `backend API key stored in the secret storage, for ${originOf(backendUrl) ?? backendUrl}`);
    void vscode.window.showInformationMessage(removed ? 'Freeform Bridge: backend API key removed.' : 'Freeform Bridge: backend API key stored; the bridge uses it from the next request on.');
  });
}
