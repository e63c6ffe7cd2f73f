import { describeInvalidBackendUrl } from '../core/backend-url.ts';
import type { Logger } from '../core/logger.ts';
import type { BridgeTrafficEvent } from '../server/start-event-encoding.ts';
import { checkBridgeIdentity } from '../server/bridge-sharing-client.ts';
import { followBridgeTrafficInWorker, startBridgeInWorker, type WorkerBridge, type WorkerTrafficFollower } from '../server/start-bridge-in-worker.ts';
import type { BridgeSettings } from './settings.ts';
import { formatTrafficLine } from './traffic-line.ts';

/**
 * The bridge's lifecycle in the extension host, kept free of `vscode` so the host layer
 * (extension.ts) stays thin wiring: commands, messages and the status bar read this state.
 */
export type BridgeStatus =
  | { kind: 'off' }
  | { kind: 'starting' }
  /** `sharedFrom`: this window attached to the bridge another VS Code window runs on the port. */
  | { kind: 'on'; url: string; port: number; backendUrl: string; sharedFrom?: { pid: number } }
  | { kind: 'error'; message: string };

export type BridgeStartFailure = 'port-in-use' | 'invalid-backend-url' | 'listen-failed';

/** Why a start failed, as data the host turns into a specific message with actions. */
export class BridgeStartError extends Error {
  /** Brand for is(): works across bundle copies, unlike instanceof. */
  readonly bridgeStartFailure = true;
  readonly reason: BridgeStartFailure;
  readonly port: number;
  /** True when a restart kept the previous server running because the new one could not start. */
  readonly keptPrevious: boolean;
  constructor(reason: BridgeStartFailure, message: string, port: number, keptPrevious: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BridgeStartError';
    this.reason = reason;
    this.port = port;
    this.keptPrevious = keptPrevious;
  }

  static is(value: unknown): value is BridgeStartError {
    return value instanceof Error && (value as { bridgeStartFailure?: unknown }).bridgeStartFailure === true;
  }
}

export interface StartResult {
  url: string;
  port: number;
  /** Set when port 0 could not get the remembered port back: a written Codex profile points at this old port. */
  replacedRememberedPort: number | null;
  /** The pid of the extension host whose bridge this window attached to; null when this window runs it. */
  attachedTo: number | null;
}

export interface PortMemory {
  get(): number | undefined;
  set(port: number): PromiseLike<void>;
}

export interface BridgeControllerDependencies {
  logger: Logger;
  /** The key for this backend URL (null: none, or not for this backend); read per request. */
  getBackendApiKey: (backendUrl: string) => string | null;
  getBridgeToken: () => string;
  /** Every secret to redact, including a key that is not sent to the current backend. */
  getSecretValues: () => ReadonlyArray<string | null>;
  portMemory: PortMemory;
  /** The bridge's worker script (dist/bridge-worker.js beside the extension's bundle by default). */
  bridgeWorkerScript?: string;
}

/** Text lines kept for the status bar tooltip and the test API; older ones fall off (bounded). */
export const TRAFFIC_LINE_LIMIT = 200;

type Listener<T> = (value: T) => void;

function isAddressInUse(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return cause?.code === 'EADDRINUSE';
}

export class BridgeController {
  private status: BridgeStatus = { kind: 'off' };
  private lastStartFailure: { reason: BridgeStartFailure; message: string; port: number } | null = null;
  private running: { bridge: WorkerBridge; settings: BridgeSettings } | null = null;
  /** The bridge of another window this one follows (same port, same token); exclusive with `running`. */
  private attached: { url: string; port: number; pid: number; instanceId: string; settings: BridgeSettings; follower: WorkerTrafficFollower } | null = null;
  private readonly takeOverListeners = new Set<Listener<StartResult>>();
  private roundTripCount = 0;
  private warningCount = 0;
  private readonly trafficLines: string[] = [];
  private readonly statusListeners = new Set<Listener<BridgeStatus>>();
  private readonly trafficListeners = new Set<Listener<BridgeTrafficEvent>>();
  /** Lifecycle operations run one at a time: a settings change during a start must not race it. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly dependencies: BridgeControllerDependencies) {}

  getStatus(): BridgeStatus {
    return this.status;
  }

  getCounts(): { roundTrips: number; warnings: number } {
    return { roundTrips: this.roundTripCount, warnings: this.warningCount };
  }

  getTrafficLines(): readonly string[] {
    return this.trafficLines;
  }

  /** Why the latest start or restart failed; null once a start succeeds. */
  getLastStartFailure(): { reason: BridgeStartFailure; message: string; port: number } | null {
    return this.lastStartFailure;
  }

  /** The settings the running server was started with (null when off). */
  getRunningSettings(): BridgeSettings | null {
    return this.running?.settings ?? this.attached?.settings ?? null;
  }

  /** Hears each take-over after the window whose bridge this one followed stopped it or closed. */
  onDidTakeOver(listener: Listener<StartResult>): { dispose(): void } {
    this.takeOverListeners.add(listener);
    return { dispose: () => this.takeOverListeners.delete(listener) };
  }

  onDidChangeStatus(listener: Listener<BridgeStatus>): { dispose(): void } {
    this.statusListeners.add(listener);
    return { dispose: () => this.statusListeners.delete(listener) };
  }

  /** The thread the running bridge serves on (a worker's id; never 0, the extension host's own); null when none runs here. */
  getBridgeThreadId(): number | null {
    return this.running?.bridge.threadId ?? null;
  }

  /**
   * The bridge runs in a worker thread, which cannot call the key and token readers: call this
   * whenever a secret, the key's backend or the token changed, and the next request uses the new values.
   */
  refreshSecrets(): void {
    this.running?.bridge.refreshSecrets();
    this.attached?.follower.refreshSecrets();
  }

  /** Starts arrive encoded: the bridge, or the follower of another window's bridge, runs in a worker (see TrafficStore.apply). */
  onTraffic(listener: Listener<BridgeTrafficEvent>): { dispose(): void } {
    this.trafficListeners.add(listener);
    return { dispose: () => this.trafficListeners.delete(listener) };
  }

  /** Starts with `settings`; when already running, returns that bridge (setting changes go through restart). */
  start(settings: BridgeSettings): Promise<StartResult> {
    return this.enqueue(async () => {
      if (this.running) return { url: this.running.bridge.url, port: this.running.bridge.port, replacedRememberedPort: null, attachedTo: null };
      if (this.attached) return { url: this.attached.url, port: this.attached.port, replacedRememberedPort: null, attachedTo: this.attached.pid };
      return this.startNow(settings, false);
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.stopNow());
  }

  /**
   * Applies new server settings to a running bridge. A new explicit port is tried before the old
   * server is closed, so a port that is taken leaves the working bridge in place.
   */
  restart(settings: BridgeSettings): Promise<StartResult | null> {
    return this.enqueue(async () => {
      const previous = this.running;
      if (!previous) {
        if (!this.attached) return null;
        // Another window runs the bridge: follow it again with the new settings (or run our own).
        this.rejectInvalidBackendUrl(settings, true);
        await this.stopNow();
        return this.startNow(settings, false);
      }
      // A URL being typed into the settings is often invalid for a while: keep the working bridge.
      this.rejectInvalidBackendUrl(settings, true);
      if (settings.port !== 0 && settings.port !== previous.bridge.port) {
        this.running = null;
        let result: StartResult;
        try {
          result = await this.startNow(settings, true);
        } catch (error) {
          this.running = previous;
          this.setStatus({ kind: 'on', url: previous.bridge.url, port: previous.bridge.port, backendUrl: previous.settings.backendUrl });
          throw error;
        }
        await previous.bridge.close();
        return result;
      }
      await this.stopNow();
      return this.startNow(settings, false);
    });
  }

  private enqueue<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.queue.then(operation, operation);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async startNow(settings: BridgeSettings, keepingPrevious: boolean, portOverride?: number): Promise<StartResult> {
    const { logger, portMemory } = this.dependencies;
    this.rejectInvalidBackendUrl(settings, keepingPrevious);
    this.setStatus({ kind: 'starting' });
    const remembered = settings.port === 0 ? portMemory.get() : undefined;
    const firstPort = portOverride ?? (settings.port !== 0 ? settings.port : (remembered ?? 0));
    let bridge: WorkerBridge;
    let replacedRememberedPort: number | null = null;
    let heldBy: string | null = null;
    try {
      try {
        bridge = await this.launch(settings, firstPort);
      } catch (error) {
        if (firstPort === 0 || !isAddressInUse(error)) throw error;
        // Every VS Code window runs its own extension host: the port may hold another window's bridge.
        const check = await checkBridgeIdentity(`http://127.0.0.1:${firstPort}`, this.dependencies.getBridgeToken());
        if (check.ours && !keepingPrevious) return this.attach(settings, firstPort, check.identity);
        heldBy = check.ours ? 'another VS Code window\'s bridge' : `another program (${check.reason})`;
        // Port 0 means "any port": losing the remembered one is not an error, only a stale profile.
        if (settings.port !== 0 || portOverride !== undefined) throw error;
        logger.warn(`the remembered port ${firstPort} is taken by ${heldBy}; using a new free port`);
        bridge = await this.launch(settings, 0);
        replacedRememberedPort = firstPort;
      }
    } catch (error) {
      const reason: BridgeStartFailure = isAddressInUse(error) ? 'port-in-use' : 'listen-failed';
      const message =
        reason === 'port-in-use'
          ? `port ${firstPort} on 127.0.0.1 is already in use by ${heldBy ?? 'another program'}`
          : `could not listen on 127.0.0.1:${firstPort}: ${error instanceof Error ? error.message : String(error)}`;
      const startError = new BridgeStartError(reason, message, firstPort, keepingPrevious, { cause: error });
      this.lastStartFailure = { reason, message, port: firstPort };
      logger.error(`start failed: ${message}`);
      if (!keepingPrevious) this.setStatus({ kind: 'error', message });
      throw startError;
    }
    if (settings.port === 0 && bridge.port !== remembered) await portMemory.set(bridge.port);
    this.running = { bridge, settings };
    this.lastStartFailure = null;
    this.setStatus({ kind: 'on', url: bridge.url, port: bridge.port, backendUrl: settings.backendUrl });
    return { url: bridge.url, port: bridge.port, replacedRememberedPort, attachedTo: null };
  }

  /** Follows the bridge another window runs on `port`: its traffic feeds this window's panel and counts. */
  private async attach(settings: BridgeSettings, port: number, identity: { pid: number; instanceId: string; backend: string }): Promise<StartResult> {
    const { logger, getBridgeToken, getSecretValues, bridgeWorkerScript } = this.dependencies;
    const url = `http://127.0.0.1:${port}`;
    // "On" once the stream is open (or already over), so no round trip after the start is missed.
    let settled = (): void => undefined;
    const openOrEnded = new Promise<void>((resolve) => (settled = resolve));
    // Read in a worker thread: the stream carries every lowered request of the other window's bridge.
    const follower = followBridgeTrafficInWorker(
      url,
      getBridgeToken(),
      {
        onEvent: (event) => this.recordTraffic(event),
        onOpen: () => settled(),
        onEnd: (reason) => {
          settled();
          this.takeOver(identity.instanceId, reason);
        },
        onSkipped: (detail) => logger.warn(`shared bridge: skipped ${detail}`),
      },
      { getSecrets: getSecretValues, logger, workerScript: bridgeWorkerScript },
    );
    await openOrEnded;
    this.attached = { url, port, pid: identity.pid, instanceId: identity.instanceId, settings, follower };
    this.lastStartFailure = null;
    logger.info(`port ${port} already holds this extension's bridge (another VS Code window, pid ${identity.pid}); using it instead of starting a second one`);
    if (identity.backend !== settings.backendUrl.replace(/\/+$/, '')) {
      logger.warn(`the shared bridge forwards to ${identity.backend}; this window's freeformBridge.backendUrl says ${settings.backendUrl} (it applies when this window runs the bridge)`);
    }
    this.setStatus({ kind: 'on', url, port, backendUrl: identity.backend, sharedFrom: { pid: identity.pid } });
    return { url, port, replacedRememberedPort: null, attachedTo: identity.pid };
  }

  /** The followed bridge is gone (its window closed or stopped it): run it here, on the same port. */
  private takeOver(instanceId: string, reason: string): void {
    void this.enqueue(async () => {
      const attached = this.attached;
      if (attached === null || attached.instanceId !== instanceId) return;
      this.attached = null;
      this.dependencies.logger.info(`the shared bridge on port ${attached.port} went away (${reason}); taking over`);
      let result: StartResult;
      try {
        // The same port first: Codex's config names it. Another window may win the race; then it is followed.
        result = await this.startNow(attached.settings, false, attached.port).catch(async (error: unknown) => {
          if (!BridgeStartError.is(error) || error.reason !== 'port-in-use' || attached.settings.port !== 0) throw error;
          return this.startNow(attached.settings, false, 0).then((fallback) => ({ ...fallback, replacedRememberedPort: attached.port }));
        });
      } catch {
        // startNow already logged it and set the error status.
        return;
      }
      for (const listener of this.takeOverListeners) listener(result);
    });
  }

  private rejectInvalidBackendUrl(settings: BridgeSettings, keepingPrevious: boolean): void {
    const invalidUrl = describeInvalidBackendUrl(settings.backendUrl);
    if (!invalidUrl) return;
    const error = new BridgeStartError('invalid-backend-url', `the backend URL ${invalidUrl}`, settings.port, keepingPrevious);
    this.lastStartFailure = { reason: error.reason, message: error.message, port: error.port };
    if (!keepingPrevious) this.setStatus({ kind: 'error', message: error.message });
    throw error;
  }

  private async launch(settings: BridgeSettings, port: number): Promise<WorkerBridge> {
    const { logger, getBackendApiKey, getBridgeToken, getSecretValues, bridgeWorkerScript } = this.dependencies;
    let launched: WorkerBridge | null = null;
    // Off the extension host's thread: a long session's turn would hold every extension for hundreds of ms.
    launched = await startBridgeInWorker({
      backendUrl: settings.backendUrl,
      host: '127.0.0.1',
      port,
      // Asked with this server's own backend URL, so a key never goes to a backend it was not stored for.
      getBackendApiKey: () => getBackendApiKey(settings.backendUrl),
      getSecrets: getSecretValues,
      // Read per request, so the bridge never runs open: /v1 always needs the per-install token.
      getToken: getBridgeToken,
      options: { strategy: settings.strategy, modelOverride: settings.model, recoverTextToolCalls: settings.recoverTextToolCalls },
      grammarEnforcement: settings.grammarEnforcement,
      keepaliveSeconds: settings.keepaliveSeconds,
      upstreamIdleTimeoutSeconds: settings.backendTimeoutSeconds,
      logger,
      onTraffic: (event) => this.recordTraffic(event),
      onCrash: (error) => this.handleCrash(launched, error),
      workerScript: bridgeWorkerScript,
    });
    return launched;
  }

  /** The worker died under a running bridge (the host already logged why): say so, never stay "on". */
  private handleCrash(bridge: WorkerBridge | null, error: Error): void {
    void this.enqueue(async () => {
      if (bridge === null || this.running?.bridge !== bridge) return;
      this.running = null;
      const message = `the bridge stopped unexpectedly: ${error.message}; start it again`;
      this.lastStartFailure = null;
      this.setStatus({ kind: 'error', message });
    });
  }

  private async stopNow(): Promise<void> {
    const running = this.running;
    this.running = null;
    // Leaving a shared bridge only stops following it: the other window keeps running it.
    const attached = this.attached;
    this.attached = null;
    await attached?.follower.stop();
    // close() also destroys open sockets, which aborts every in-flight upstream call.
    if (running) await running.bridge.close();
    if (this.status.kind !== 'off') this.setStatus({ kind: 'off' });
  }

  private recordTraffic(event: BridgeTrafficEvent): void {
    if (event.type === 'exchange-end' || event.type === 'exchange-rejected') {
      this.roundTripCount += 1;
      if (event.type === 'exchange-end') this.warningCount += event.warnings.length;
      const line = formatTrafficLine(event);
      this.trafficLines.push(line);
      if (this.trafficLines.length > TRAFFIC_LINE_LIMIT) this.trafficLines.splice(0, this.trafficLines.length - TRAFFIC_LINE_LIMIT);
    }
    for (const listener of this.trafficListeners) listener(event);
    // Counts live in the status bar, so every finished exchange is a status change.
    if (event.type === 'exchange-end' || event.type === 'exchange-rejected') this.emitStatus();
  }

  private setStatus(status: BridgeStatus): void {
    this.status = status;
    this.emitStatus();
  }

  private emitStatus(): void {
    for (const listener of this.statusListeners) listener(this.status);
  }
}
