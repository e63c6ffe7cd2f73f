import * as vscode from 'vscode';
import { UpstreamConnectionError, UpstreamHttpError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { fetchBackendModels } from '../server/backend-models.ts';
import type { BridgeSecrets } from './bridge-secrets.ts';
import { describeBackendCheck, type BackendCheckOutcome } from './describe-backend-check.ts';
import { readBridgeSettings, settingId } from './settings.ts';

export interface CheckBackendCommandOptions {
  logger: Logger;
  secrets: BridgeSecrets;
  /** Asks before the key goes to a backend origin it was not stored for. */
  confirmBackendKeyOrigin(backendUrl: string): Promise<void>;
  showLog(): void;
}

/**
 * Freeform Bridge: Check Backend Connection — asks the configured backend for its models
 * (`GET {backendUrl}/models`, with the stored API key) and says whether it answered and what it
 * serves. It needs no running bridge, so the walkthrough can offer it before anything else.
 * Returns the outcome (for the tests and for other commands).
 */
export function registerCheckBackendCommand(options: CheckBackendCommandOptions): vscode.Disposable {
  const { logger, secrets } = options;
  return vscode.commands.registerCommand('freeformBridge.checkBackend', async (): Promise<BackendCheckOutcome> => {
    const backendUrl = readBridgeSettings().backendUrl;
    await options.confirmBackendKeyOrigin(backendUrl);
    const apiKey = secrets.getBackendApiKeyFor(backendUrl);
    const outcome = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Freeform Bridge: asking ${backendUrl} for its models…` },
      () => checkBackend(backendUrl, apiKey),
    );
    const report = describeBackendCheck(outcome, apiKey !== null);
    if (outcome.reachable) {
      logger.info(`backend check: ${backendUrl} serves ${outcome.models.length} models${outcome.models.length > 0 ? `: ${outcome.models.join(', ')}` : ''}`);
      const show = outcome.models.length > 0 ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
      void show(report.message, 'Show Log').then((choice) => {
        if (choice) options.showLog();
      });
      return outcome;
    }
    logger.warn(`backend check: ${backendUrl} failed: ${outcome.reason}`);
    const setKey = 'Set API Key';
    const actions = report.suggestApiKey ? [setKey, 'Open Settings'] : ['Open Settings', 'Show Log'];
    void vscode.window.showErrorMessage(report.message, ...actions).then(async (choice) => {
      if (choice === setKey) await vscode.commands.executeCommand('freeformBridge.setBackendApiKey');
      else if (choice === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', settingId('backendUrl'));
      else if (choice === 'Show Log') options.showLog();
    });
    return outcome;
  });
}

async function checkBackend(backendUrl: string, apiKey: string | null): Promise<BackendCheckOutcome> {
  try {
    const models = await fetchBackendModels(backendUrl, apiKey);
    return { reachable: true, backendUrl, models: models.map((model) => model.id) };
  } catch (error) {
    if (UpstreamHttpError.is(error)) return { reachable: false, backendUrl, reason: `HTTP ${error.status}`, status: error.status };
    if (UpstreamConnectionError.is(error)) return { reachable: false, backendUrl, reason: error.code, status: null };
    return { reachable: false, backendUrl, reason: error instanceof Error ? error.message : String(error), status: null };
  }
}
