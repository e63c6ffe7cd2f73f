import * as vscode from 'vscode';
import type { TrafficPanel } from '../traffic-panel.ts';

/** Freeform Bridge: Show Live Traffic. */
export function registerShowTrafficCommand(trafficPanel: TrafficPanel): vscode.Disposable {
  return vscode.commands.registerCommand('freeformBridge.showTraffic', () => trafficPanel.show());
}
