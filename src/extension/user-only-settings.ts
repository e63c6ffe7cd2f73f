/**
 * Settings that decide where Codex traffic (the user's code) and the backend key go, what starts and
 * where files are written. A repository's own `.vscode/settings.json` must not choose them, trusted
 * or not: package.json declares them `application`-scoped (user settings only), and settings.ts reads
 * them from the user and default values alone, so even a workspace value VS Code did keep is ignored.
 * No vscode import: the package.json check runs in plain Node.
 */
export const USER_ONLY_SETTING_KEYS = ['backendUrl', 'port', 'autoStart', 'codexHome', 'codexProfile', 'model', 'strategy', 'grammarEnforcement'] as const;
export type UserOnlySettingKey = (typeof USER_ONLY_SETTING_KEYS)[number];

export function isUserOnlySetting(key: string): key is UserOnlySettingKey {
  return (USER_ONLY_SETTING_KEYS as readonly string[]).includes(key);
}
