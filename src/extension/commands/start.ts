import * as vscode from 'vscode';
import { startBridge } from '../bridge-start.ts';
import type { ExtensionServices } from '../extension-services.ts';

/** Freeform Bridge: Start — runs the bridge here, or uses the one another VS Code window runs. */
export function registerStartCommand(services: ExtensionServices): vscode.Disposable {
  return vscode.commands.registerCommand('freeformBridge.start', () => startBridge(services));
}
