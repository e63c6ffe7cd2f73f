import * as vscode from 'vscode';
import { reportBackendReachability, showStartError, startBridge } from './bridge-start.ts';
import { offerConfigRewrite } from './codex-config-rewrite-offer.ts';
import type { ExtensionServices } from './extension-services.ts';
import { changedServerSettings, readBridgeSettings, settingId, SETTINGS_SECTION } from './settings.ts';

/** A changed setting applies at once: the bridge restarts when a setting it runs with changed. */
export function watchSettingChanges(services: ExtensionServices, refreshStatusBar: () => void): vscode.Disposable {
  const { controller, logger, context } = services;
  return vscode.workspace.onDidChangeConfiguration(async (event) => {
    if (!event.affectsConfiguration(SETTINGS_SECTION)) return;
    refreshStatusBar();
    const running = controller.getRunningSettings();
    const before = controller.getStatus();
    const next = readBridgeSettings();
    // After a failed start the user is most likely fixing the setting that broke it: try again.
    if (before.kind === 'error') {
      logger.info('settings changed after a failed start; starting again');
      await startBridge(services);
      return;
    }
    if (!running) return;
    const changed = changedServerSettings(running, next);
    if (changed.length === 0) return;
    const names = changed.map(settingId).join(', ');
    logger.info(`settings changed (${names}); restarting the bridge`);
    try {
      const result = await controller.restart(next);
      if (!result) return;
      // The restart applies at once; the key waits for the answer when the backend's origin changed.
      void services.confirmBackendKeyOrigin(next.backendUrl).then(() => reportBackendReachability(services, next, result));
      const message = `Freeform Bridge restarted on port ${result.port} to apply ${names}.`;
      // A written Codex profile names the port: say so whenever it moved.
      if (before.kind !== 'on' || before.port !== result.port) void offerConfigRewrite(context, `${message} Rewrite the Codex profile so it points at the new port.`, 'info');
      else void vscode.window.showInformationMessage(message);
    } catch (error) {
      void showStartError(services, error, next);
    }
  });
}
