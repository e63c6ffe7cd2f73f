import * as vscode from 'vscode';
import { CUSTOM_TOOL_STRATEGIES, type CustomToolStrategy } from '../core/bridge-options.ts';

export const SETTINGS_SECTION = 'freeformBridge';

/** The extension's settings as one value; read fresh whenever something needs them. */
export interface BridgeSettings {
  backendUrl: string;
  /** 0 = any free port (the one obtained is remembered and tried first next time). */
  port: number;
  /** Model name sent upstream instead of Codex's; null = forward Codex's. */
  model: string | null;
  strategy: CustomToolStrategy;
  keepaliveSeconds: number;
  autoStart: boolean;
  /** null = $CODEX_HOME or ~/.codex. */
  codexHome: string | null;
  codexProfile: string;
}

export const DEFAULT_BACKEND_URL = 'http://127.0.0.1:8000/v1';
export const DEFAULT_CODEX_PROFILE = 'freeform-bridge';

/** Settings the running server was started with; a change to any of them needs a restart. */
export const SERVER_SETTING_KEYS = ['backendUrl', 'port', 'model', 'strategy', 'keepaliveSeconds'] as const;
export type ServerSettingKey = (typeof SERVER_SETTING_KEYS)[number];

function clampInteger(value: unknown, fallback: number, minimum: number, maximum: number): number {
  // settings.json is hand-edited: the contributed schema only warns, it does not stop a bad value.
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) return fallback;
  return value;
}

function trimmedOrNull(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

export function readBridgeSettings(): BridgeSettings {
  const configuration = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  const strategy = configuration.get<string>('strategy');
  const profile = trimmedOrNull(configuration.get('codexProfile'));
  return {
    backendUrl: trimmedOrNull(configuration.get('backendUrl')) ?? DEFAULT_BACKEND_URL,
    port: clampInteger(configuration.get('port'), 0, 0, 65535),
    model: trimmedOrNull(configuration.get('model')),
    strategy: CUSTOM_TOOL_STRATEGIES.find((known) => known === strategy) ?? 'function_bridge',
    keepaliveSeconds: clampInteger(configuration.get('keepaliveSeconds'), 15, 0, 3600),
    autoStart: configuration.get<boolean>('autoStart') === true,
    codexHome: trimmedOrNull(configuration.get('codexHome')),
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
