import * as vscode from 'vscode';
import { CUSTOM_TOOL_STRATEGIES, type CustomToolStrategy } from '../core/bridge-options.ts';
import {
  DEFAULT_BACKEND_URL,
  DEFAULT_CODEX_PROFILE,
  DEFAULT_KEEPALIVE_SECONDS,
  DEFAULT_RECOVER_TEXT_TOOL_CALLS,
  DEFAULT_UPSTREAM_IDLE_TIMEOUT_SECONDS,
  MAX_KEEPALIVE_SECONDS,
  MAX_UPSTREAM_IDLE_TIMEOUT_SECONDS,
  MIN_UPSTREAM_IDLE_TIMEOUT_SECONDS,
} from '../core/defaults.ts';
import { GRAMMAR_ENFORCEMENT_SETTINGS, type GrammarEnforcementSetting } from '../server/grammar-enforcement.ts';
import { USER_ONLY_SETTING_KEYS, type UserOnlySettingKey } from './user-only-settings.ts';

export const SETTINGS_SECTION = 'freeformBridge';

/** The extension's settings as one value; read fresh whenever something needs them. */
export interface BridgeSettings {
  backendUrl: string;
  /** 0 = any free port (the one obtained is remembered and tried first next time). */
  port: number;
  /** Model name sent upstream instead of Codex's; null = forward Codex's. */
  model: string | null;
  strategy: CustomToolStrategy;
  /** Grammar patterns for the engine (off, auto = its self-test decides, or a forced form). */
  grammarEnforcement: GrammarEnforcementSetting;
  keepaliveSeconds: number;
  /** How long a silent backend is waited for before the turn fails. */
  backendTimeoutSeconds: number;
  /** Deliver a tool call the engine left as assistant text as the call (always warned). */
  recoverTextToolCalls: boolean;
  autoStart: boolean;
  /** null = $CODEX_HOME or ~/.codex. */
  codexHome: string | null;
  codexProfile: string;
}

/** Settings the running server was started with; a change to any of them needs a restart. */
export const SERVER_SETTING_KEYS = ['backendUrl', 'port', 'model', 'strategy', 'grammarEnforcement', 'keepaliveSeconds', 'backendTimeoutSeconds', 'recoverTextToolCalls'] as const;
export type ServerSettingKey = (typeof SERVER_SETTING_KEYS)[number];

function clampInteger(value: unknown, fallback: number, minimum: number, maximum: number): number {
  // settings.json is hand-edited: the contributed schema only warns, it does not stop a bad value.
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) return fallback;
  return value;
}

function trimmedOrNull(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** The user's own value (user settings), else the default: never a workspace or folder value. */
function readUserValue(configuration: vscode.WorkspaceConfiguration, key: UserOnlySettingKey): unknown {
  const inspected = configuration.inspect(key);
  return inspected?.globalValue ?? inspected?.defaultValue;
}

export function readBridgeSettings(): BridgeSettings {
  const configuration = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  const user = (key: UserOnlySettingKey): unknown => readUserValue(configuration, key);
  const strategy = user('strategy');
  const grammarEnforcement = user('grammarEnforcement');
  const profile = trimmedOrNull(user('codexProfile'));
  return {
    backendUrl: trimmedOrNull(user('backendUrl')) ?? DEFAULT_BACKEND_URL,
    port: clampInteger(user('port'), 0, 0, 65535),
    model: trimmedOrNull(user('model')),
    strategy: CUSTOM_TOOL_STRATEGIES.find((known) => known === strategy) ?? 'function_bridge',
    grammarEnforcement: GRAMMAR_ENFORCEMENT_SETTINGS.find((known) => known === grammarEnforcement) ?? 'off',
    keepaliveSeconds: clampInteger(configuration.get('keepaliveSeconds'), DEFAULT_KEEPALIVE_SECONDS, 0, MAX_KEEPALIVE_SECONDS),
    backendTimeoutSeconds: clampInteger(configuration.get('backendTimeoutSeconds'), DEFAULT_UPSTREAM_IDLE_TIMEOUT_SECONDS, MIN_UPSTREAM_IDLE_TIMEOUT_SECONDS, MAX_UPSTREAM_IDLE_TIMEOUT_SECONDS),
    recoverTextToolCalls: typeof configuration.get('recoverTextToolCalls') === 'boolean' ? configuration.get<boolean>('recoverTextToolCalls') === true : DEFAULT_RECOVER_TEXT_TOOL_CALLS,
    autoStart: user('autoStart') === true,
    codexHome: trimmedOrNull(user('codexHome')),
    // The profile name becomes a file name: refuse anything that could leave CODEX_HOME.
    codexProfile: profile !== null && /^[A-Za-z0-9_-]+$/.test(profile) ? profile : DEFAULT_CODEX_PROFILE,
  };
}

export function changedServerSettings(before: BridgeSettings, after: BridgeSettings): ServerSettingKey[] {
  return SERVER_SETTING_KEYS.filter((key) => before[key] !== after[key]);
}

export function settingId(key: keyof BridgeSettings): string {
  return `${SETTINGS_SECTION}.${key}`;
}

/**
 * User-only settings a workspace or folder value is set for, as VS Code reports them. VS Code drops
 * such values itself for an `application` setting, so this finds them only where the scope did not
 * hold; the settings files are read as well (workspace-settings-scan.ts).
 */
export function listWorkspaceValuesOfUserOnlySettings(): UserOnlySettingKey[] {
  const scopes: Array<vscode.Uri | undefined> = [undefined, ...(vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri)];
  const found = new Set<UserOnlySettingKey>();
  for (const scope of scopes) {
    const configuration = vscode.workspace.getConfiguration(SETTINGS_SECTION, scope);
    for (const key of USER_ONLY_SETTING_KEYS) {
      const inspected = configuration.inspect(key);
      if (inspected?.workspaceValue !== undefined || inspected?.workspaceFolderValue !== undefined) found.add(key);
    }
  }
  return USER_ONLY_SETTING_KEYS.filter((key) => found.has(key));
}
