import * as vscode from 'vscode';
import type { Logger } from '../core/logger.ts';
import { originOf, type BridgeSecrets } from './bridge-secrets.ts';

export interface BackendKeyOriginGuard {
  /**
   * The key goes only to the origin it was stored for. When the backend's origin changed, ask
   * (modal) before the key goes there; until the user agrees, and after a no, the bridge calls that
   * backend without it.
   */
  confirm(backendUrl: string): Promise<void>;
  /** Forgets the declined questions (a new key was set). */
  forgetDeclined(): void;
}

export function createBackendKeyOriginGuard(secrets: BridgeSecrets, logger: Logger): BackendKeyOriginGuard {
  /** Key-origin pairs the user declined this session ("stored for A" → "now B"): not asked again. */
  const declinedKeyOrigins = new Set<string>();
  const pendingKeyQuestions = new Map<string, Promise<void>>();
  const confirm = (backendUrl: string): Promise<void> => {
    const target = originOf(backendUrl);
    const stored = secrets.getBackendApiKeyOrigin();
    if (!secrets.hasBackendApiKey() || target === null || target === stored) return Promise.resolve();
    const question = `${stored ?? ''} -> ${target}`;
    if (declinedKeyOrigins.has(question)) return Promise.resolve();
    const pending = pendingKeyQuestions.get(question);
    if (pending) return pending;
    const send = 'Send the Key There';
    const asked = (async () => {
      let choice: string | undefined;
      try {
        choice = await vscode.window.showWarningMessage(
          `Send the backend API key to ${target}?`,
          { modal: true, detail: `The key was stored for ${stored ?? 'a backend URL that is not valid'}, and the backend URL is now ${backendUrl}. Until you agree, the bridge calls it without the key. To keep a separate key for it, use Freeform Bridge: Set Backend API Key.` },
          send,
        );
      } catch (error) {
        // VS Code refuses modal dialogs while extension tests run: a question nobody can answer is a no.
        logger.warn('could not ask whether to send the backend API key to the new backend', { error: String(error) });
      }
      if (choice === send) {
        await secrets.bindBackendApiKeyTo(backendUrl);
        logger.info(`backend API key now bound to ${target}`);
      } else {
        declinedKeyOrigins.add(question);
        logger.warn(`backend API key not sent to ${target}: it was stored for ${stored ?? 'another backend'}`);
      }
    })().finally(() => pendingKeyQuestions.delete(question));
    pendingKeyQuestions.set(question, asked);
    return asked;
  };
  return { confirm, forgetDeclined: () => declinedKeyOrigins.clear() };
}
