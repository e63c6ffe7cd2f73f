import * as vscode from 'vscode';
import type { Logger } from '../core/logger.ts';
import { listWorkspaceValuesOfUserOnlySettings, readBridgeSettings, settingId, SETTINGS_SECTION } from './settings.ts';
import { USER_ONLY_SETTING_KEYS, type UserOnlySettingKey } from './user-only-settings.ts';
import { findSettingsInFile } from './workspace-settings-scan.ts';

/** User-only settings one workspace source tried to set (and the bridge ignored). */
export interface IgnoredWorkspaceSettings {
  /** Where: a folder's `.vscode/settings.json`, the `.code-workspace` file, or VS Code's own report. */
  source: string;
  keys: UserOnlySettingKey[];
}

export interface WorkspaceSettingGuard extends vscode.Disposable {
  /** The latest scan's findings. */
  getIgnored(): readonly IgnoredWorkspaceSettings[];
  /** Every notice shown so far (the tests read them). */
  getShownNotices(): readonly string[];
  /** Resolves once the scans started so far have finished. */
  whenScanned(): Promise<void>;
}

async function readText(uri: vscode.Uri): Promise<string | null> {
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch (error) {
    if (error instanceof vscode.FileSystemError && error.code === 'FileNotFound') return null;
    throw error;
  }
}

async function scanWorkspace(logger: Logger): Promise<IgnoredWorkspaceSettings[]> {
  const found: IgnoredWorkspaceSettings[] = [];
  const scanFile = async (uri: vscode.Uri, source: string, settingsProperty?: string): Promise<void> => {
    try {
      const text = await readText(uri);
      if (text === null) return;
      const keys = findSettingsInFile(text, SETTINGS_SECTION, USER_ONLY_SETTING_KEYS, settingsProperty);
      if (keys.length > 0) found.push({ source, keys });
    } catch (error) {
      logger.warn(`could not read ${source} to check for settings the bridge ignores`, { error: String(error) });
    }
  };
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    await scanFile(vscode.Uri.joinPath(folder.uri, '.vscode', 'settings.json'), `${folder.name}/.vscode/settings.json`);
  }
  const workspaceFile = vscode.workspace.workspaceFile;
  if (workspaceFile && workspaceFile.scheme !== 'untitled') await scanFile(workspaceFile, workspaceFile.path.split('/').pop() ?? 'the workspace file', 'settings');
  const reported = listWorkspaceValuesOfUserOnlySettings();
  if (reported.length > 0) found.push({ source: 'the workspace settings', keys: reported });
  return found;
}

/**
 * Tells the user when their workspace tries to set a user-only setting (settings.ts): the bridge
 * never applies it, and says so once per source and set of keys, with the value it uses instead.
 * Rescans when settings files, folders or settings change.
 */
export function createWorkspaceSettingGuard(logger: Logger): WorkspaceSettingGuard {
  let ignored: IgnoredWorkspaceSettings[] = [];
  const shownNotices: string[] = [];
  const noticed = new Set<string>();
  let scans: Promise<void> = Promise.resolve();

  const notify = (finding: IgnoredWorkspaceSettings): void => {
    const fingerprint = `${finding.source}\n${finding.keys.join(',')}`;
    if (noticed.has(fingerprint)) return;
    noticed.add(fingerprint);
    const settings = readBridgeSettings();
    const names = finding.keys.map(settingId).join(', ');
    const message = `Freeform Bridge ignores ${names} from ${finding.source}: where Codex traffic and the backend API key go, and what starts, come from your user settings only. The bridge uses the backend ${settings.backendUrl}.`;
    shownNotices.push(message);
    logger.warn(message);
    void vscode.window.showWarningMessage(message, 'Open User Settings').then(async (choice) => {
      if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', `${SETTINGS_SECTION}.`);
    });
  };

  const rescan = (): void => {
    scans = scans
      .then(() => scanWorkspace(logger))
      .then((findings) => {
        ignored = findings;
        for (const finding of findings) notify(finding);
      })
      .catch((error: unknown) => logger.error('checking the workspace settings failed', { error: String(error) }));
  };

  const watcher = vscode.workspace.createFileSystemWatcher('**/.vscode/settings.json');
  const workspaceFile = vscode.workspace.workspaceFile;
  const workspaceFileWatcher = workspaceFile && workspaceFile.scheme === 'file' ? vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.joinPath(workspaceFile, '..'), workspaceFile.path.split('/').pop() ?? '')) : null;
  const disposables: vscode.Disposable[] = [
    watcher,
    watcher.onDidChange(rescan),
    watcher.onDidCreate(rescan),
    watcher.onDidDelete(rescan),
    vscode.workspace.onDidChangeWorkspaceFolders(rescan),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SETTINGS_SECTION)) rescan();
    }),
  ];
  if (workspaceFileWatcher) disposables.push(workspaceFileWatcher, workspaceFileWatcher.onDidChange(rescan));
  rescan();

  return {
    getIgnored: () => ignored,
    getShownNotices: () => shownNotices,
    whenScanned: () => scans,
    dispose: () => {
      for (const disposable of disposables) disposable.dispose();
    },
  };
}
