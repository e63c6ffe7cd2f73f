import * as vscode from 'vscode';
import type { DoctorReport } from '../../core/doctor/diagnose.ts';
import { ENGINE_NAMES } from '../../core/doctor/engine-identity.ts';
import { renderDoctorReport, summariseDoctorReport } from '../../core/doctor/render-doctor-report.ts';
import type { Logger } from '../../core/logger.ts';
import { findLocalEngines, runEngineDoctor, type FoundEngine } from '../../server/engine-doctor.ts';
import type { BridgeSecrets } from '../bridge-secrets.ts';
import { describeBackendCheck, type BackendCheckOutcome } from '../describe-backend-check.ts';
import { readBridgeSettings, settingId } from '../settings.ts';

export interface CheckBackendCommandOptions {
  logger: Logger;
  secrets: BridgeSecrets;
  /** Asks before the key goes to a backend origin it was not stored for. */
  confirmBackendKeyOrigin(backendUrl: string): Promise<void>;
  showLog(): void;
}

/** The backend URL the user set, or null while the setting still has its default. */
function readConfiguredBackendUrl(): string | null {
  const inspected = vscode.workspace.getConfiguration('freeformBridge').inspect<string>('backendUrl');
  return inspected?.globalValue ?? null;
}

/** With no backend set: the engines answering on this machine's usual ports, one picked when several do. */
async function pickFoundEngine(found: readonly FoundEngine[]): Promise<FoundEngine | null> {
  if (found.length <= 1) return found[0] ?? null;
  const picked = await vscode.window.showQuickPick(
    found.map((engine) => ({ label: engine.backendUrl, description: `port ${engine.port} (usually ${ENGINE_NAMES[engine.expected]})`, engine })),
    { title: 'Freeform Bridge: engines answering on this machine', placeHolder: 'Which one should the bridge use?' },
  );
  return picked?.engine ?? null;
}

async function openReport(report: DoctorReport): Promise<void> {
  const document = await vscode.workspace.openTextDocument({ language: 'markdown', content: renderDoctorReport(report) });
  await vscode.window.showTextDocument(document, { preview: false });
}

/**
 * Freeform Bridge: Check Backend Connection — the engine doctor. It finds the engine (the configured
 * backend, or with none set, the engines answering on this machine's usual ports), identifies it, sends
 * a few tiny probe requests, and shows the fix for the worst problem in a notification with the full
 * report a click away. It needs no running bridge, so the walkthrough offers it first. Returns the
 * outcome (for the tests and for other commands).
 */
export function registerCheckBackendCommand(options: CheckBackendCommandOptions): vscode.Disposable {
  const { logger, secrets } = options;
  return vscode.commands.registerCommand('freeformBridge.checkBackend', async (): Promise<BackendCheckOutcome> => {
    let backendUrl = readBridgeSettings().backendUrl;
    let found: FoundEngine | null = null;
    if (readConfiguredBackendUrl() === null) {
      found = await pickFoundEngine(await findLocalEngines());
      if (found !== null) backendUrl = found.backendUrl;
    }
    await options.confirmBackendKeyOrigin(backendUrl);
    const apiKey = secrets.getBackendApiKeyFor(backendUrl);
    const report = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Freeform Bridge: checking the engine at ${backendUrl}…` },
      () => runEngineDoctor({ backendUrl, apiKey, configuredModel: readBridgeSettings().model || null, probe: true }),
    );
    const outcome = describeBackendCheck(report, apiKey !== null);
    const line = summariseDoctorReport(report);
    if (report.worst === null) logger.info(`engine doctor: ${line}`);
    else logger.warn(`engine doctor: ${line}`);
    const actions = ['Show Report', ...(outcome.suggestApiKey ? ['Set API Key'] : []), ...(found !== null ? ['Use This Backend'] : report.codexWouldFail ? ['Open Settings'] : [])];
    const show = report.codexWouldFail ? vscode.window.showErrorMessage : report.worst !== null ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(outcome.message, ...actions).then(async (choice) => {
      if (choice === 'Show Report') await openReport(report);
      else if (choice === 'Set API Key') await vscode.commands.executeCommand('freeformBridge.setBackendApiKey');
      else if (choice === 'Use This Backend') await vscode.workspace.getConfiguration('freeformBridge').update('backendUrl', backendUrl, vscode.ConfigurationTarget.Global);
      else if (choice === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', settingId('backendUrl'));
    });
    return outcome.result;
  });
}
