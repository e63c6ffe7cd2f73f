import type * as vscode from 'vscode';
import type { Logger } from '../core/logger.ts';
import type { BridgeController } from './bridge-controller.ts';
import type { BridgeSecrets } from './bridge-secrets.ts';
import type { CodexToolSurface } from '../core/model-catalog/model-catalog-entry.ts';

/** What activate() builds once and the commands and listeners share. */
export interface ExtensionServices {
  context: vscode.ExtensionContext;
  channel: vscode.LogOutputChannel;
  logger: Logger;
  secrets: BridgeSecrets;
  controller: BridgeController;
  /** Asks before the backend API key goes to an origin it was not stored for (see backend-key-origin.ts). */
  confirmBackendKeyOrigin(backendUrl: string): Promise<void>;
  /** A newly set key may be sent anywhere the user is asked about again. */
  forgetDeclinedKeyOrigins(): void;
}

/** What the last Write Codex Config wrote: a port change rewrites the same files. */
export interface LastCodexConfigWrite {
  model: string;
  toolSurface: CodexToolSurface;
  alsoForCodexExtension: boolean;
}

const LAST_CODEX_CONFIG_WRITE_KEY = 'freeformBridge.lastCodexConfigWrite';

export function lastCodexConfigWriteMemory(context: vscode.ExtensionContext): { get(): LastCodexConfigWrite | undefined; set(value: LastCodexConfigWrite): PromiseLike<void> } {
  return {
    get: () => context.globalState.get<LastCodexConfigWrite>(LAST_CODEX_CONFIG_WRITE_KEY),
    set: (value) => context.globalState.update(LAST_CODEX_CONFIG_WRITE_KEY, value),
  };
}
