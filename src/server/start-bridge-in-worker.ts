import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createSilentLogger } from '../core/logger.ts';
import type { BridgeTrafficEvent, BridgeTrafficListener } from '../core/traffic-event.ts';
import type { BridgeWorkerData, BridgeWorkerSecrets, HostToWorkerMessage, WorkerToHostMessage } from './bridge-worker-protocol.ts';
import type { BridgeServerConfig, RunningBridge } from './start-server.ts';

/*
 * The bridge in a worker thread of this process. VS Code runs every extension on the extension
 * host's one thread: a bridge there would hold it for hundreds of milliseconds per turn of a long
 * session. In a worker, the host's thread only receives the traffic: deltas and ends as they are,
 * and each start's lowered request as one transferred buffer of redacted parts that the traffic
 * store looks up by hash (chat-request-fragments.ts).
 */

/** The worker bundle's file name, next to the bundle that starts it (scripts/build.mjs writes both into dist/). */
export const BRIDGE_WORKER_FILE = 'bridge-worker.js';

/** How long close() waits for the worker to finish its own shutdown before terminating it. */
const CLOSE_TIMEOUT_MS = 10_000;

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

export function startBridgeInWorker(config: BridgeWorkerConfig): Promise<WorkerBridge> {
  const script = config.workerScript ?? defaultBridgeWorkerScript();
  if (!existsSync(script)) return Promise.reject(new Error(`the bridge's worker script ${script} is missing (npm run build writes it)`));
  const logger = config.logger ?? createSilentLogger();
  const readSecrets = (): BridgeWorkerSecrets => ({
    backendApiKey: config.getBackendApiKey?.() ?? null,
    token: config.getToken?.() ?? null,
    secrets: [...(config.getSecrets?.() ?? [])],
  });
  const { backendUrl, host, port, options, keepaliveSeconds, commitGraceMs, upstreamIdleTimeoutSeconds, logFile } = config;
  const workerData: BridgeWorkerData = {
    settings: { backendUrl, host, port, options, keepaliveSeconds, commitGraceMs, upstreamIdleTimeoutSeconds, logFile },
    secrets: readSecrets(),
  };
  // No flags of this process (a TypeScript loader in tests, an inspector in a debugged host): the bundle needs none.
  const worker = new Worker(script, { workerData, name: 'freeform-bridge', execArgv: [] });
  const post = (message: HostToWorkerMessage): void => worker.postMessage(message);
  const deliver = (event: BridgeTrafficEvent): void => {
    try {
      config.onTraffic?.(event);
    } catch (error) {
      // A faulty listener (the panel) must never stop the traffic, as on the bridge's own thread.
      logger.error('traffic listener failed', { error: String(error) });
    }
  };

  let state: 'starting' | 'running' | 'closing' | 'gone' = 'starting';
  let workerError: Error | null = null;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let closing: Promise<void> | null = null;

  return new Promise<WorkerBridge>((resolve, reject) => {
    worker.on('message', (message: WorkerToHostMessage) => {
      switch (message.type) {
        case 'listening':
          state = 'running';
          resolve({
            url: message.url,
            host: message.host,
            port: message.port,
            instanceId: message.instanceId,
            threadId: worker.threadId,
            refreshSecrets() {
              if (state === 'running') post({ type: 'secrets', secrets: readSecrets() });
            },
            close() {
              closing ??= (async () => {
                if (state === 'gone') return;
                state = 'closing';
                post({ type: 'close' });
                const timer = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS);
                await exited;
                clearTimeout(timer);
              })();
              return closing;
            },
          });
          return;
        case 'start-failed':
          state = 'closing';
          reject(toStartError(message));
          // Nothing it holds is of use any more, whatever handles a half-built server left open.
          void worker.terminate();
          return;
        case 'log':
          logger[message.level](message.message, message.details);
          return;
        case 'traffic':
          deliver(message.event);
          return;
        case 'closed':
          // Everything the worker had to say came before this message.
          void worker.terminate();
          return;
        default: {
          const unknownMessage: never = message;
          logger.error(`the bridge's worker sent an unknown message: ${JSON.stringify(unknownMessage).slice(0, 200)}`);
        }
      }
    });
    worker.on('error', (error) => {
      workerError = error;
    });
    worker.on('exit', (code) => {
      const previous = state;
      state = 'gone';
      if (previous === 'starting') {
        reject(new Error(`the bridge's worker thread stopped before it listened (${describeExit(code, workerError)})`, { cause: workerError ?? undefined }));
      } else if (previous === 'running') {
        const error = new Error(`the bridge's worker thread stopped (${describeExit(code, workerError)}); the bridge no longer answers`, { cause: workerError ?? undefined });
        logger.error(error.message, workerError?.stack ? { stack: workerError.stack } : undefined);
        config.onCrash?.(error);
      } else if (workerError) {
        logger.error(`the bridge's worker thread failed while stopping: ${describeExit(code, workerError)}`);
      }
    });
  });
}
