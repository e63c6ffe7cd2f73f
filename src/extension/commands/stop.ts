import * as vscode from 'vscode';
import type { ExtensionServices } from '../extension-services.ts';

/** Freeform Bridge: Stop. */
export function registerStopCommand({ controller, logger }: ExtensionServices): vscode.Disposable {
  return vscode.commands.registerCommand('freeformBridge.stop', async () => {
    await controller.stop();
    logger.info('bridge stopped');
  });
}
