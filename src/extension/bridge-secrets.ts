import { randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';
import * as z from '../core/schema/zod.ts';
import type { Logger } from '../core/logger.ts';
import { parseJson } from '../core/parse-json.ts';

/** Written by versions that kept the key without its backend; read once and moved to the record below. */
const LEGACY_BACKEND_API_KEY = 'freeformBridge.backendApiKey';
/** The key together with the origin (scheme, host, port) of the backend it was stored for. */
const BACKEND_API_KEY_RECORD = 'freeformBridge.backendApiKeyForOrigin';
const BRIDGE_TOKEN = 'freeformBridge.bridgeToken';

const backendApiKeyRecordSchema = z.object({ key: z.string().check(z.minLength(1)), origin: z.nullable(z.string()) });
type BackendApiKeyRecord = z.infer<typeof backendApiKeyRecordSchema>;

/** `scheme://host:port` of a URL, the unit a key is bound to; null for anything that is not a URL. */
export function originOf(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * The backend API key and the per-install bridge token, both in SecretStorage (never in settings
 * or logs). The key is stored with the origin of the backend it was set for and handed out only for
 * that origin, so a changed backend URL never receives it unasked. The server reads both
 * synchronously per request, so they are mirrored in memory and kept current through onDidChange
 * (another window may set the key).
 */
export class BridgeSecrets implements vscode.Disposable {
  private backendApiKey: BackendApiKeyRecord | null = null;
  /** Set by load() before anything can start the bridge. */
  private bridgeToken = '';
  private readonly subscription: vscode.Disposable;
  private readonly changeListeners = new Set<() => void>();

  private constructor(
    private readonly storage: vscode.SecretStorage,
    private readonly logger: Logger,
  ) {
    this.subscription = storage.onDidChange((event) => {
      if (event.key === BACKEND_API_KEY_RECORD) void this.reloadBackendApiKey();
      if (event.key === BRIDGE_TOKEN) {
        void this.storage.get(BRIDGE_TOKEN).then((token) => {
          if (!token) return;
          this.bridgeToken = token;
          this.emitChange();
        });
      }
    });
  }

  /**
   * Hears every change of the mirrored values (the key, its backend, the token), whoever made it: the
   * bridge's worker thread cannot read them per request and is handed the new values instead.
   */
  onDidChangeValues(listener: () => void): vscode.Disposable {
    this.changeListeners.add(listener);
    return { dispose: () => this.changeListeners.delete(listener) };
  }

  private emitChange(): void {
    for (const listener of this.changeListeners) listener();
  }

  /**
   * `legacyBackendUrl` is the backend a key stored by an older version (without its backend) is
   * bound to: the user's own backend URL setting, the one that key was set for.
   */
  static async load(storage: vscode.SecretStorage, logger: Logger, legacyBackendUrl: string): Promise<BridgeSecrets> {
    const secrets = new BridgeSecrets(storage, logger);
    await secrets.migrateLegacyBackendApiKey(legacyBackendUrl);
    await secrets.reloadBackendApiKey();
    await secrets.ensureBridgeToken(logger);
    return secrets;
  }

  /** The key, only for a URL on the origin it was stored for: anything else gets null (no Authorization). */
  getBackendApiKeyFor(backendUrl: string | null | undefined): string | null {
    const record = this.backendApiKey;
    const origin = originOf(backendUrl);
    return record !== null && origin !== null && record.origin === origin ? record.key : null;
  }

  hasBackendApiKey(): boolean {
    return this.backendApiKey !== null;
  }

  /** The origin the stored key belongs to; null without a key (or for one bound to no valid URL). */
  getBackendApiKeyOrigin(): string | null {
    return this.backendApiKey?.origin ?? null;
  }

  getBridgeToken(): string {
    return this.bridgeToken;
  }

  /** Values that must never appear in a log line, whichever backend the key belongs to. */
  listSecretValues(): ReadonlyArray<string | null> {
    return [this.backendApiKey?.key ?? null, this.bridgeToken];
  }

  /** Stores the key for the origin of `backendUrl`; an empty key removes it (no Authorization is sent). */
  async setBackendApiKey(key: string, backendUrl: string): Promise<void> {
    const trimmed = key.trim();
    const record = trimmed === '' ? null : { key: trimmed, origin: originOf(backendUrl) };
    await this.storeRecord(record);
  }

  /** The user agreed that the key may go to the origin of `backendUrl` (it then goes there only). */
  async bindBackendApiKeyTo(backendUrl: string): Promise<void> {
    if (this.backendApiKey === null) return;
    await this.storeRecord({ key: this.backendApiKey.key, origin: originOf(backendUrl) });
  }

  dispose(): void {
    this.subscription.dispose();
  }

  private async storeRecord(record: BackendApiKeyRecord | null): Promise<void> {
    if (record === null) await this.storage.delete(BACKEND_API_KEY_RECORD);
    else await this.storage.store(BACKEND_API_KEY_RECORD, JSON.stringify(record));
    // Update the mirror now rather than waiting for onDidChange, so the next request uses it.
    this.backendApiKey = record;
    this.emitChange();
  }

  private async migrateLegacyBackendApiKey(legacyBackendUrl: string): Promise<void> {
    const legacy = (await this.storage.get(LEGACY_BACKEND_API_KEY))?.trim();
    if (!legacy) return;
    if ((await this.storage.get(BACKEND_API_KEY_RECORD)) === undefined) {
      await this.storage.store(BACKEND_API_KEY_RECORD, JSON.stringify({ key: legacy, origin: originOf(legacyBackendUrl) }));
      this.logger.info(`backend API key bound to ${originOf(legacyBackendUrl) ?? 'no backend (the backend URL setting is not a URL)'}; it is sent to that backend only`);
    }
    await this.storage.delete(LEGACY_BACKEND_API_KEY);
  }

  private async reloadBackendApiKey(): Promise<void> {
    const stored = await this.storage.get(BACKEND_API_KEY_RECORD);
    if (stored === undefined) {
      this.backendApiKey = null;
      this.emitChange();
      return;
    }
    const parsed = parseJson(stored);
    const record = parsed.success ? backendApiKeyRecordSchema.safeParse(parsed.value) : null;
    if (!record?.success) {
      // Left in place (nothing is lost), but never sent: its backend is unknown.
      this.backendApiKey = null;
      this.emitChange();
      this.logger.warn('the stored backend API key is unreadable and is not used; set it again with Freeform Bridge: Set Backend API Key');
      return;
    }
    this.backendApiKey = record.data;
    this.emitChange();
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
