import { parentPort, workerData } from 'node:worker_threads';
import type { Logger } from '../core/logger.ts';
import { redactSecrets } from '../core/redact-secrets.ts';
import type { TrafficEvent } from '../core/traffic/traffic-event.ts';
import { followBridgeTraffic } from './bridge-sharing-client.ts';
import type { BridgeWorkerData, HostToWorkerMessage, LogLevel, WorkerToHostMessage } from './bridge-worker-protocol.ts';
import { encodeStartEvent } from './start-event-encoding.ts';
import { startBridgeServer, type RunningBridge } from './start-server.ts';

/*
 * The bridge's worker thread (bundled as dist/bridge-worker.js; started by start-bridge-in-worker.ts).
 * It runs the same server the CLI runs, or follows the traffic of the bridge another VS Code window
 * runs; everything a request costs (parsing, lowering, the stream translator, and serialising the
 * traffic for the panel) happens on this thread, never on the extension host's.
 */

const port = parentPort;
if (!port) throw new Error('bridge-worker-entry.ts runs only as a worker thread (start it with startBridgeInWorker)');
const data = workerData as BridgeWorkerData;
let secrets = data.secrets;

function send(message: WorkerToHostMessage, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

function log(level: LogLevel, message: string, details?: Record<string, unknown>): void {
  try {
    send({ type: 'log', level, message, ...(details ? { details } : {}) });
  } catch {
    // Details that cannot be cloned (a function, a socket) still reach the log, as text.
    let text: string;
    try {
      text = String(JSON.stringify(details, (_key, value: unknown) => (typeof value === 'function' ? String(value) : value)));
    } catch {
      text = String(details);
    }
    send({ type: 'log', level, message, details: { details: text } });
  }
}

const logger: Logger = {
  error: (message, details) => log('error', message, details),
  warn: (message, details) => log('warn', message, details),
  info: (message, details) => log('info', message, details),
  debug: (message, details) => log('debug', message, details),
};

const redact = (text: string): string => redactSecrets(text, [secrets.backendApiKey, secrets.token, ...secrets.secrets]);

/**
 * Events wait for the next turn of this thread's loop: the exchange sends its request upstream
 * first, and the start's encoding (a 10 MB session takes tens of milliseconds) follows. One queue
 * keeps them in order.
 */
const queue: TrafficEvent[] = [];

function sendTraffic(event: TrafficEvent): void {
  if (event.type !== 'exchange-start') {
    send({ type: 'traffic', event });
    return;
  }
  // A bridge here serialises each request by parts and sends their text upstream: encoded from those.
  const encoded = encodeStartEvent(event, redact);
  send({ type: 'traffic', event: encoded }, [encoded.encodedRequest.bytes.buffer as ArrayBuffer]);
}

function flushTraffic(): void {
  for (const event of queue.splice(0)) {
    try {
      sendTraffic(event);
    } catch (error) {
      // Outside any exchange: a throw here would end the thread and the bridge with it.
      logger.error(`the ${event.type} event of ${event.exchangeId} could not be handed to the panel`, { error: String(error) });
    }
  }
}

function queueTraffic(event: TrafficEvent): void {
  queue.push(event);
  if (queue.length === 1) setImmediate(flushTraffic);
}

/** Takes the host's messages; `close` resolves once this thread has nothing more to do. */
function listen(close: () => Promise<void>): void {
  port?.on('message', (message: HostToWorkerMessage) => {
    switch (message.type) {
      case 'secrets':
        secrets = message.secrets;
        return;
      case 'close':
        void close().then(() => {
          // The exchanges close() ended have reported their ends: they leave before "closed".
          flushTraffic();
          send({ type: 'closed' });
        });
        return;
      default: {
        const unknownMessage: never = message;
        throw new Error(`unknown message to the bridge's worker: ${JSON.stringify(unknownMessage)}`);
      }
    }
  });
}

async function serve(settings: Extract<BridgeWorkerData, { kind: 'serve' }>['settings']): Promise<void> {
  let bridge: RunningBridge;
  try {
    bridge = await startBridgeServer({
      ...settings,
      getBackendApiKey: () => secrets.backendApiKey,
      getToken: () => secrets.token,
      getSecrets: () => secrets.secrets,
      logger,
      onTraffic: queueTraffic,
      serialiseRequestParts: true,
    });
  } catch (error) {
    const cause = error instanceof Error ? (error.cause as { message?: unknown; code?: unknown } | undefined) : undefined;
    send({
      type: 'start-failed',
      message: error instanceof Error ? error.message : String(error),
      cause: cause ? { message: String(cause.message ?? ''), code: typeof cause.code === 'string' ? cause.code : null } : null,
    });
    port?.close();
    return;
  }
  listen(() => bridge.close());
  send({ type: 'listening', url: bridge.url, host: bridge.host, port: bridge.port, instanceId: bridge.instanceId });
}

function follow(url: string, token: string): void {
  const follower = followBridgeTraffic(url, token, {
    onEvent: queueTraffic,
    onOpen: () => send({ type: 'follow-open' }),
    onSkipped: (detail) => send({ type: 'follow-skipped', detail }),
    onEnd: (reason) => {
      flushTraffic();
      send({ type: 'follow-end', reason });
    },
  });
  listen(async () => follower.stop());
}

if (data.kind === 'serve') void serve(data.settings);
else follow(data.url, data.token);
