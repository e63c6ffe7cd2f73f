import * as vscode from 'vscode';
import type { ExtensionServices } from '../extension-services.ts';

/** Freeform Bridge: Show Log. */
export function registerShowLogCommand({ channel }: ExtensionServices): vscode.Disposable {
  return vscode.commands.registerCommand('freeformBridge.showLog', () => channel.show());
}
