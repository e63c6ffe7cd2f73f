import * as vscode from 'vscode';
import { findFreePort } from '../server/free-port.ts';
import { probeBackend } from './backend-probe.ts';
import { BridgeStartError, type StartResult } from './bridge-controller.ts';
import { offerConfigRewrite } from './codex-config-rewrite-offer.ts';
import { lastCodexConfigWriteMemory, type ExtensionServices } from './extension-services.ts';
import { changeSetting, openSetting } from './setting-editor.ts';
import { readBridgeSettings, settingId, type BridgeSettings } from './settings.ts';

/*
 * Starting the bridge from VS Code: the start itself, and what the user is told afterwards (a
 * moved port, an unreachable backend, why a start failed and what would fix it).
 */

/** Starts (or attaches to) the bridge with the current settings; a failure is shown, not thrown. */
export async function startBridge(services: ExtensionServices): Promise<StartResult | undefined> {
  const { controller, logger, context } = services;
  const settings = readBridgeSettings();
  try {
    const result = await controller.start(settings);
    logger.info(result.attachedTo === null ? `bridge on ${result.url}, backend ${settings.backendUrl}` : `using the bridge another VS Code window runs on ${result.url}`);
    if (result.replacedRememberedPort !== null) {
      const last = lastCodexConfigWriteMemory(context).get();
      const stale = last?.alsoForCodexExtension ? 'config.toml (read by the Codex extension) and the Codex profile written earlier still point' : 'A Codex profile written earlier still points';
      void offerConfigRewrite(context, `Freeform Bridge: port ${result.replacedRememberedPort} is taken by another program, so the bridge now listens on port ${result.port}. ${stale} at the old port: rewrite them with one click.`, 'warning');
    }
    if (result.attachedTo === null) {
      // Only the window that runs the bridge sends the key; an attached window calls no backend.
      await services.confirmBackendKeyOrigin(settings.backendUrl);
      void reportBackendReachability(services, settings, result);
    }
    return result;
  } catch (error) {
    void showStartError(services, error, settings);
    return undefined;
  }
}

export async function showStartError(services: ExtensionServices, error: unknown, settings: BridgeSettings): Promise<void> {
  const { controller, logger, channel } = services;
  if (!BridgeStartError.is(error)) {
    logger.error('unexpected error while starting', { error: String(error) });
    void vscode.window.showErrorMessage(`Freeform Bridge could not start: ${String(error)}`, 'Show Log').then((choice) => {
      if (choice) channel.show();
    });
    return;
  }
  const current = controller.getStatus();
  const kept = error.keptPrevious && current.kind === 'on' ? ` The bridge keeps running on port ${current.port}.` : '';
  switch (error.reason) {
    case 'port-in-use': {
      const freePort = await findFreePort();
      const usePort = `Use Port ${freePort}`;
      const choice = await vscode.window.showErrorMessage(`Freeform Bridge: ${error.message}.${kept} Choose another port (${settingId('port')}).`, usePort, 'Use Any Free Port', 'Open Settings');
      if (choice === usePort) await changeSetting('port', freePort);
      else if (choice === 'Use Any Free Port') await changeSetting('port', 0);
      else if (choice === 'Open Settings') await openSetting('port');
      return;
    }
    case 'invalid-backend-url': {
      const choice = await vscode.window.showErrorMessage(`Freeform Bridge: ${settingId('backendUrl')}: ${error.message}.${kept}`, 'Open Settings');
      if (choice) await openSetting('backendUrl');
      return;
    }
    case 'listen-failed': {
      const choice = await vscode.window.showErrorMessage(`Freeform Bridge could not start: ${error.message}.${kept}`, 'Show Log', 'Open Settings');
      if (choice === 'Show Log') channel.show();
      else if (choice === 'Open Settings') await openSetting(settings.port === 0 ? 'backendUrl' : 'port');
      return;
    }
    default: {
      const unreachable: never = error.reason;
      throw new Error(`unknown start failure ${String(unreachable)}`);
    }
  }
}

export async function reportBackendReachability(services: ExtensionServices, settings: BridgeSettings, result: StartResult): Promise<void> {
  const { logger, secrets, channel } = services;
  const probe = await probeBackend(settings.backendUrl, secrets.getBackendApiKeyFor(settings.backendUrl), settings.model || null);
  if (probe.reachable && probe.problem === null) {
    logger.info(probe.summary);
    return;
  }
  logger.warn(probe.summary);
  const message = probe.reachable
    ? `Freeform Bridge runs on port ${result.port}, but the engine needs a change before Codex works well: ${probe.problem}`
    : `Freeform Bridge runs on port ${result.port}, but the backend is unreachable: ${probe.reason}. Codex requests will fail until it answers.`;
  const choice = await vscode.window.showWarningMessage(message, 'Run the Engine Doctor', 'Open Settings', 'Show Log');
  if (choice === 'Run the Engine Doctor') await vscode.commands.executeCommand('freeformBridge.checkBackend');
  else if (choice === 'Open Settings') await openSetting('backendUrl');
  else if (choice === 'Show Log') channel.show();
}
