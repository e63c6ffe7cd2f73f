import * as vscode from 'vscode';
import type { TrafficPanel } from '../traffic-panel.ts';

/**
 * Freeform Bridge: Export Traffic as JSON Lines. An argument `{ uri }` (a Uri or a path) writes there
 * without asking, for scripts and tests; without one a save dialog asks where.
 */
export function registerExportTrafficCommand(trafficPanel: TrafficPanel): vscode.Disposable {
  return vscode.commands.registerCommand('freeformBridge.exportTraffic', (argument?: unknown) => trafficPanel.exportSession(argument));
}
