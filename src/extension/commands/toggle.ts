import * as vscode from 'vscode';
import type { StartResult } from '../bridge-controller.ts';
import { startBridge } from '../bridge-start.ts';
import type { ExtensionServices } from '../extension-services.ts';

/** Freeform Bridge: Toggle — stops a running (or starting) bridge, else starts it. */
export function registerToggleCommand(services: ExtensionServices): vscode.Disposable {
  const { controller, logger } = services;
  return vscode.commands.registerCommand('freeformBridge.toggle', async (): Promise<StartResult | undefined> => {
    const kind = controller.getStatus().kind;
    if (kind === 'on' || kind === 'starting') {
      await controller.stop();
      logger.info('bridge stopped');
      return undefined;
    }
    return startBridge(services);
  });
}
