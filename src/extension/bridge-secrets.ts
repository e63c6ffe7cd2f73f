import { randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';
import type { Logger } from '../core/logger.ts';

const BACKEND_API_KEY = 'freeformBridge.backendApiKey';
const BRIDGE_TOKEN = 'freeformBridge.bridgeToken';

/**
 * The backend API key and the per-install bridge token, both in SecretStorage (never in settings
 * or logs). The server reads them synchronously per request, so they are mirrored in memory and
 * kept current through onDidChange (another window may set the key).
 */
export class BridgeSecrets implements vscode.Disposable {
  private backendApiKey: string | null = null;
  /** Set by load() before anything can start the bridge. */
  private bridgeToken = '';
  private readonly subscription: vscode.Disposable;

  private constructor(private readonly storage: vscode.SecretStorage) {
    this.subscription = storage.onDidChange((event) => {
      if (event.key === BACKEND_API_KEY) void this.reloadBackendApiKey();
      if (event.key === BRIDGE_TOKEN) void this.storage.get(BRIDGE_TOKEN).then((token) => { if (token) this.bridgeToken = token; });
    });
  }

  static async load(storage: vscode.SecretStorage, logger: Logger): Promise<BridgeSecrets> {
    const secrets = new BridgeSecrets(storage);
    await secrets.reloadBackendApiKey();
    await secrets.ensureBridgeToken(logger);
    return secrets;
  }

  getBackendApiKey(): string | null {
    return this.backendApiKey;
  }

  getBridgeToken(): string {
    return this.bridgeToken;
  }

  /** Values that must never appear in a log line. */
  listSecretValues(): ReadonlyArray<string | null> {
    return [this.backendApiKey, this.bridgeToken];
  }

  /** An empty key removes it: the bridge then sends no Authorization upstream. */
  async setBackendApiKey(key: string): Promise<void> {
    const trimmed = key.trim();
    if (trimmed === '') await this.storage.delete(BACKEND_API_KEY);
    else await this.storage.store(BACKEND_API_KEY, trimmed);
    // Update the mirror now rather than waiting for onDidChange, so the next request uses it.
    this.backendApiKey = trimmed === '' ? null : trimmed;
  }

  dispose(): void {
    this.subscription.dispose();
  }

  private async reloadBackendApiKey(): Promise<void> {
    this.backendApiKey = (await this.storage.get(BACKEND_API_KEY)) ?? null;
  }

  private async ensureBridgeToken(logger: Logger): Promise<void> {
    const existing = await this.storage.get(BRIDGE_TOKEN);
    if (existing) {
      this.bridgeToken = existing;
      return;
    }
    // 256 bits from the CSPRNG; base64url keeps it safe inside TOML strings and HTTP headers.
    const token = `ffb_${randomBytes(32).toString('base64url')}`;
    this.bridgeToken = token;
    try {
      await this.storage.store(BRIDGE_TOKEN, token);
    } catch (error) {
      // No usable keyring (a bare Linux desktop): the bridge still needs a token, so keep this one for
      // the session; a Codex profile written now must be rewritten after the next VS Code start.
      logger.warn('could not keep the bridge token in the secret storage; it lasts until VS Code restarts', { error: String(error) });
    }
  }
}
