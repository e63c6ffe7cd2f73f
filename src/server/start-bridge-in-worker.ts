import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { createSilentLogger, type Logger } from '../core/logger.ts';
import type { BridgeTrafficEvent, BridgeTrafficListener } from './start-event-encoding.ts';
import type { TrafficFollower } from './bridge-sharing-client.ts';
import type { BridgeWorkerData, BridgeWorkerSecrets, HostToWorkerMessage, WorkerToHostMessage } from './bridge-worker-protocol.ts';
import type { BridgeServerConfig, RunningBridge } from './start-server.ts';

/*
 * The bridge in a worker thread of this process. VS Code runs every extension on the extension
 * host's one thread: a bridge there would hold it for hundreds of milliseconds per turn of a long
 * session. In a worker, the host's thread only receives the traffic: deltas and ends as they are,
 * and each start's lowered request as one transferred buffer of redacted parts that the traffic
 * store looks up by hash (start-event-encoding.ts). A window that follows another window's
 * bridge reads that bridge's traffic stream in such a worker too.
 */

/** The worker bundle's file name, next to the bundle that starts it (scripts/build.mjs writes both into dist/). */
export const BRIDGE_WORKER_FILE = 'bridge-worker.js';

/** How long close() waits for the worker to finish its own shutdown before terminating it. */
const CLOSE_TIMEOUT_MS = 10_000;

/** The worker's young generation, in MB: capped so the bridge does not grow the extension host's memory under load (docs/PERFORMANCE.md). */
export const BRIDGE_WORKER_YOUNG_GENERATION_MB = 12;

export interface BridgeWorkerConfig extends Omit<BridgeServerConfig, 'onTraffic' | 'dispatcher'> {
  /**
   * Hears every traffic event; a start carries its lowered request encoded (`encodedRequest`).
   * getBackendApiKey, getSecrets and getToken are read at start and at every refreshSecrets().
   */
  onTraffic?: BridgeTrafficListener;
  /** The worker stopped without close() (an uncaught error, out of memory): the bridge no longer listens. */
  onCrash?: (error: Error) => void;
  /** The worker's script; by default bridge-worker.js beside the running bundle. */
  workerScript?: string;
}

export interface WorkerBridge extends RunningBridge {
  /** The worker's thread id (the extension host's own thread is 0). */
  threadId: number;
  /** The heap limits the worker's thread runs with, as Node applied them. */
  resourceLimits: ResourceLimits;
  /** Hands the current values of getBackendApiKey, getSecrets and getToken to the worker; the next request uses them. */
  refreshSecrets(): void;
}

export function defaultBridgeWorkerScript(): string {
  return join(__dirname, BRIDGE_WORKER_FILE);
}

function describeExit(code: number, error: Error | null): string {
  return error ? `${error.name}: ${error.message}` : `exit code ${code}`;
}

/** The listen error as startBridgeServer throws it (same message; its cause keeps the code the callers check). */
function toStartError(message: Extract<WorkerToHostMessage, { type: 'start-failed' }>): Error {
  if (!message.cause) return new Error(message.message);
  const cause = Object.assign(new Error(message.cause.message), message.cause.code ? { code: message.cause.code } : {});
  return new Error(message.message, { cause });
}

type WorkerState = 'starting' | 'running' | 'closing' | 'gone';

interface SpawnedWorker {
  worker: Worker;
  state(): WorkerState;
  setState(state: WorkerState): void;
  post(message: HostToWorkerMessage): void;
  /** Asks the worker to finish (it answers "closed" when it has), terminating it if it does not in time. */
  close(): Promise<void>;
}

/**
 * One worker and the messages every kind of it shares: log lines, traffic, "closed". The others go
 * to `onMessage`; `onExit` hears the state the worker was in when its thread stopped.
 */
function spawnBridgeWorker(
  script: string,
  data: BridgeWorkerData,
  logger: Logger,
  onTraffic: BridgeTrafficListener | undefined,
  handlers: { onMessage(message: WorkerToHostMessage): void; onExit(previous: WorkerState, description: string, error: Error | null): void },
): SpawnedWorker {
  // No flags of this process (a TypeScript loader in tests, an inspector in a debugged host): the bundle needs none.
  const worker = new Worker(script, {
    workerData: data,
    name: `freeform-bridge ${data.kind}`,
    execArgv: [],
    resourceLimits: { maxYoungGenerationSizeMb: BRIDGE_WORKER_YOUNG_GENERATION_MB },
  });
  let state: WorkerState = 'starting';
  let workerError: Error | null = null;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let closing: Promise<void> | null = null;
  worker.on('message', (message: WorkerToHostMessage) => {
    switch (message.type) {
      case 'log':
        logger[message.level](message.message, message.details);
        return;
      case 'traffic':
        try {
          onTraffic?.(message.event as BridgeTrafficEvent);
        } catch (error) {
          // A faulty listener (the panel) must never stop the traffic, as on the bridge's own thread.
          logger.error('traffic listener failed', { error: String(error) });
        }
        return;
      case 'closed':
        // Everything the worker had to say came before this message.
        void worker.terminate();
        return;
      default:
        handlers.onMessage(message);
    }
  });
  worker.on('error', (error) => {
    workerError = error;
  });
  worker.on('exit', (code) => {
    const previous = state;
    state = 'gone';
    handlers.onExit(previous, describeExit(code, workerError), workerError);
  });
  return {
    worker,
    state: () => state,
    setState: (next) => {
      state = next;
    },
    post: (message) => worker.postMessage(message),
    close() {
      closing ??= (async () => {
        if (state === 'gone') return;
        state = 'closing';
        worker.postMessage({ type: 'close' } satisfies HostToWorkerMessage);
        const timer = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      })();
      return closing;
    },
  };
}

function missingScript(script: string): Error | null {
  return existsSync(script) ? null : new Error(`the bridge's worker script ${script} is missing (npm run build writes it)`);
}

export function startBridgeInWorker(config: BridgeWorkerConfig): Promise<WorkerBridge> {
  const script = config.workerScript ?? defaultBridgeWorkerScript();
  const missing = missingScript(script);
  if (missing) return Promise.reject(missing);
  const logger = config.logger ?? createSilentLogger();
  const readSecrets = (): BridgeWorkerSecrets => ({
    backendApiKey: config.getBackendApiKey?.() ?? null,
    token: config.getToken?.() ?? null,
    secrets: [...(config.getSecrets?.() ?? [])],
  });
  const { backendUrl, host, port, options, grammarEnforcement, keepaliveSeconds, commitGraceMs, upstreamIdleTimeoutSeconds, logFile } = config;
  const data: BridgeWorkerData = {
    kind: 'serve',
    settings: { backendUrl, host, port, options, grammarEnforcement, keepaliveSeconds, commitGraceMs, upstreamIdleTimeoutSeconds, logFile },
    secrets: readSecrets(),
  };
  return new Promise<WorkerBridge>((resolve, reject) => {
    const spawned = spawnBridgeWorker(script, data, logger, config.onTraffic, {
      onMessage(message) {
        if (message.type === 'listening') {
          spawned.setState('running');
          resolve({
            url: message.url,
            host: message.host,
            port: message.port,
            instanceId: message.instanceId,
            threadId: spawned.worker.threadId,
            resourceLimits: { ...spawned.worker.resourceLimits },
            refreshSecrets() {
              if (spawned.state() === 'running') spawned.post({ type: 'secrets', secrets: readSecrets() });
            },
            close: () => spawned.close(),
          });
        } else if (message.type === 'start-failed') {
          spawned.setState('closing');
          reject(toStartError(message));
          // Nothing it holds is of use any more, whatever handles a half-built server left open.
          void spawned.worker.terminate();
        } else {
          logger.error(`the bridge's worker sent an unexpected message: ${JSON.stringify(message).slice(0, 200)}`);
        }
      },
      onExit(previous, description, error) {
        if (previous === 'starting') {
          reject(new Error(`the bridge's worker thread stopped before it listened (${description})`, { cause: error ?? undefined }));
        } else if (previous === 'running') {
          const crash = new Error(`the bridge's worker thread stopped (${description}); the bridge no longer answers`, { cause: error ?? undefined });
          logger.error(crash.message, error?.stack ? { stack: error.stack } : undefined);
          config.onCrash?.(crash);
        } else if (error) {
          logger.error(`the bridge's worker thread failed while stopping: ${description}`);
        }
      },
    });
  });
}

export interface WorkerTrafficFollower extends TrafficFollower {
  /** Stops following; resolves once the worker thread has ended. */
  stop(): Promise<void>;
  /** Hands the current secrets to the worker, which redacts the followed lowered requests with them. */
  refreshSecrets(): void;
}

/**
 * followBridgeTraffic (bridge-sharing-client.ts) in a worker thread: the followed bridge's traffic
 * stream carries whole lowered requests as JSON, which would be parsed on this thread otherwise.
 * Starts arrive encoded and redacted with `getSecrets`. A worker that dies ends the stream (`onEnd`).
 */
export function followBridgeTrafficInWorker(
  url: string,
  token: string,
  handlers: { onEvent: BridgeTrafficListener; onEnd: (reason: string) => void; onSkipped?: (detail: string) => void; onOpen?: () => void },
  options: { getSecrets?: () => ReadonlyArray<string | null>; logger?: Logger; workerScript?: string } = {},
): WorkerTrafficFollower {
  const script = options.workerScript ?? defaultBridgeWorkerScript();
  const readSecrets = (): BridgeWorkerSecrets => ({ backendApiKey: null, token, secrets: [...(options.getSecrets?.() ?? [])] });
  const missing = missingScript(script);
  if (missing) {
    // Nothing to follow with: the window runs its own bridge instead, as when the stream breaks.
    queueMicrotask(() => handlers.onEnd(missing.message));
    return { stop: async () => undefined, refreshSecrets: () => undefined };
  }
  let ended = false;
  const end = (reason: string): void => {
    if (ended) return;
    ended = true;
    handlers.onEnd(reason);
  };
  const spawned = spawnBridgeWorker(script, { kind: 'follow', url, token, secrets: readSecrets() }, options.logger ?? createSilentLogger(), handlers.onEvent, {
    onMessage(message) {
      if (message.type === 'follow-open') handlers.onOpen?.();
      else if (message.type === 'follow-skipped') handlers.onSkipped?.(message.detail);
      else if (message.type === 'follow-end') {
        end(message.reason);
        // The stream is over: so is the worker that read it.
        void spawned.close();
      }
    },
    onExit(previous, description) {
      if (previous !== 'closing') end(`the worker thread following the bridge stopped (${description})`);
    },
  });
  spawned.setState('running');
  return {
    stop() {
      ended = true;
      return spawned.close();
    },
    refreshSecrets() {
      if (spawned.state() === 'running') spawned.post({ type: 'secrets', secrets: readSecrets() });
    },
  };
}
