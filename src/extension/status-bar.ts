import * as vscode from 'vscode';
import type { BridgeController, BridgeStatus } from './bridge-controller.ts';
import { readBridgeSettings } from './settings.ts';

export interface StatusBarView {
  status: BridgeStatus;
  roundTrips: number;
  warnings: number;
  /** The configured backend, shown while off too, so the tooltip says what Start would use. */
  backendUrl: string;
}

/**
 * What the status bar item shows for a state. Clicking starts the bridge when it is off or failed
 * and opens the live traffic when it runs; the tooltip names the backend and the port.
 */
export function renderStatusBarItem(item: vscode.StatusBarItem, view: StatusBarView): void {
  const { status, roundTrips, warnings } = view;
  const tooltip = new vscode.MarkdownString(undefined, true);
  // Backend URLs and error messages are user data: never let them render as Markdown links or commands.
  tooltip.isTrusted = false;
  tooltip.appendMarkdown('**Freeform Bridge**\n\n');
  switch (status.kind) {
    case 'off':
      item.text = '$(circle-slash) Bridge: off';
      item.command = { title: 'Start', command: 'freeformBridge.toggle' };
      item.backgroundColor = undefined;
      tooltip.appendText(`Off. Backend: ${view.backendUrl}`);
      tooltip.appendMarkdown('\n\nClick to start.');
      break;
    case 'starting':
      item.text = '$(loading~spin) Bridge: starting';
      item.command = { title: 'Show Log', command: 'freeformBridge.showLog' };
      item.backgroundColor = undefined;
      tooltip.appendText(`Starting. Backend: ${view.backendUrl}`);
      break;
    case 'on': {
      const warningText = warnings > 0 ? ` $(warning) ${warnings}` : '';
      item.text = `$(radio-tower) Bridge :${status.port} $(arrow-swap) ${roundTrips}${warningText}`;
      item.command = { title: 'Show Live Traffic', command: 'freeformBridge.showTraffic' };
      item.backgroundColor = warnings > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
      const shared = status.sharedFrom ? `\nShared: another VS Code window runs this bridge (extension host pid ${status.sharedFrom.pid}); this window takes over if it closes.` : '';
      tooltip.appendText(`On at ${status.url} (port ${status.port})\nBackend: ${status.backendUrl}\nRound trips: ${roundTrips}, warnings: ${warnings}${shared}`);
      tooltip.appendMarkdown('\n\nClick to show the live traffic.');
      break;
    }
    case 'error':
      item.text = '$(error) Bridge: error';
      item.command = { title: 'Start', command: 'freeformBridge.start' };
      item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      tooltip.appendText(`Not running: ${status.message}\nBackend: ${view.backendUrl}`);
      tooltip.appendMarkdown('\n\nClick to try again; see **Freeform Bridge: Show Log** for details.');
      break;
    default: {
      const unreachable: never = status;
      throw new Error(`unknown bridge status ${JSON.stringify(unreachable)}`);
    }
  }
  item.tooltip = tooltip;
  item.accessibilityInformation = { label: item.text.replace(/\$\([^)]*\)\s*/g, '') };
}

/** The status bar item, kept in step with the bridge; `refresh` also redraws after a settings change. */
export function createBridgeStatusBar(controller: BridgeController): { item: vscode.StatusBarItem; refresh(): void; dispose(): void } {
  const item = vscode.window.createStatusBarItem('freeformBridge.status', vscode.StatusBarAlignment.Right, 100);
  item.name = 'Freeform Bridge';
  const refresh = (): void => {
    const running = controller.getRunningSettings();
    renderStatusBarItem(item, {
      status: controller.getStatus(),
      ...controller.getCounts(),
      backendUrl: (running ?? readBridgeSettings()).backendUrl,
    });
  };
  refresh();
  item.show();
  const subscription = controller.onDidChangeStatus(refresh);
  return {
    item,
    refresh,
    dispose: () => {
      subscription.dispose();
      item.dispose();
    },
  };
}
