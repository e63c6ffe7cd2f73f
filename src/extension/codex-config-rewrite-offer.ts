import * as vscode from 'vscode';
import { lastCodexConfigWriteMemory } from './extension-services.ts';

/** One click rewrites what was written last (same model, surface and files), with the diff shown first. */
export async function offerConfigRewrite(context: vscode.ExtensionContext, message: string, severity: 'info' | 'warning'): Promise<void> {
  const last = lastCodexConfigWriteMemory(context).get();
  const action = last?.alsoForCodexExtension ? 'Rewrite Codex Config' : 'Write Codex Config';
  const choice = severity === 'warning' ? await vscode.window.showWarningMessage(message, action) : await vscode.window.showInformationMessage(message, action);
  if (!choice) return;
  await vscode.commands.executeCommand('freeformBridge.writeCodexConfig', last === undefined ? undefined : { model: last.model, toolSurface: last.toolSurface, alsoForCodexExtension: last.alsoForCodexExtension });
}
