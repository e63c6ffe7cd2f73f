import * as vscode from 'vscode';
import { buildCodexCommand } from '../codex-command.ts';
import type { ExtensionServices } from '../extension-services.ts';
import { readBridgeSettings } from '../settings.ts';

/** Freeform Bridge: Copy Codex Command — the `codex -p …` line for a terminal; returns it. */
export function registerCopyCodexCommand({ controller, logger }: ExtensionServices): vscode.Disposable {
  return vscode.commands.registerCommand('freeformBridge.copyCodexCommand', async () => {
    const settings = readBridgeSettings();
    const command = buildCodexCommand(settings.codexProfile, settings.codexHome);
    const hint = controller.getStatus().kind === 'on' ? '' : ' once the bridge runs (Freeform Bridge: Start)';
    try {
      await vscode.env.clipboard.writeText(command);
      void vscode.window.showInformationMessage(`Copied "${command}". Run it in a terminal${hint}.`);
    } catch (error) {
      // A browser-hosted VS Code may refuse clipboard access; the command is still worth showing.
      logger.warn('could not write to the clipboard', { error: String(error) });
      void vscode.window.showInformationMessage(`Run "${command}" in a terminal${hint}.`);
    }
    return command;
  });
}
