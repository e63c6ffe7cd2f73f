import * as vscode from 'vscode';
import { settingId, SETTINGS_SECTION, type BridgeSettings } from './settings.ts';
import { isUserOnlySetting } from './user-only-settings.ts';

export async function openSetting(key: keyof BridgeSettings): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.openSettings', settingId(key));
}

/**
 * Writes where the value really takes effect: user settings for a user-only setting, else where the
 * user already set it (workspace beats user). The configuration listener then restarts the bridge,
 * or starts it after the failed start.
 */
export async function changeSetting(key: keyof BridgeSettings, value: unknown): Promise<void> {
  const configuration = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  const inspected = configuration.inspect(key);
  const target = isUserOnlySetting(key)
    ? vscode.ConfigurationTarget.Global
    : inspected?.workspaceFolderValue !== undefined
      ? vscode.ConfigurationTarget.WorkspaceFolder
      : inspected?.workspaceValue !== undefined
        ? vscode.ConfigurationTarget.Workspace
        : vscode.ConfigurationTarget.Global;
  await configuration.update(key, value, target);
}
