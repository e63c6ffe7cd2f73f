import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import packageJson from '../../package.json';
import { resolveBridgeOptions, type BridgeOptions } from '../core/bridge-options.ts';
import { BACKEND_WAIT_NOTICE_SECONDS, DEFAULT_COMMIT_GRACE_MS, DEFAULT_KEEPALIVE_SECONDS, DEFAULT_UPSTREAM_IDLE_TIMEOUT_SECONDS } from '../core/defaults.ts';
import { createSilentLogger, type Logger } from '../core/logger.ts';
import { redactSecrets } from '../core/redact-secrets.ts';
import type { TrafficEvent, TrafficListener } from '../core/traffic/traffic-event.ts';
import { createWarningLedger } from '../core/warnings.ts';
import { createGrammarCache } from '../core/grammar/grammar-cache.ts';
import { createBridgeRequestHandler } from './create-app.ts';
import { createExchangeLogWriter } from './exchange-log.ts';
import { createRefusalCoalescer } from './refusal-coalescer.ts';
import { isLoopbackHostname } from './security.ts';
import { createUpstreamClient } from './upstream-client.ts';
import { chooseDoctorModel } from '../core/doctor/diagnose.ts';
import { identifyBackend, testGrammarEnforcement } from './engine-doctor.ts';
import { GrammarEnforcementRegistry, type GrammarEnforcementSetting } from './grammar-enforcement.ts';
import { withTimeLimit } from './time-limit.ts';

export const BRIDGE_VERSION: string = packageJson.version;

export interface BridgeServerConfig {
  /** OpenAI-compatible base URL of the backend, ending in /v1. */
  backendUrl: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** The key sent upstream, read per request; null sends none (no key, or one withheld from this backend). */
  getBackendApiKey?: () => string | null;
  /** Further secrets to redact from everything the bridge answers or logs (a key withheld from this backend is still secret). */
  getSecrets?: () => ReadonlyArray<string | null>;
  /** When it returns a token, every /v1 request must carry `Authorization: Bearer <token>`. */
  getToken?: () => string | null;
  options?: Partial<BridgeOptions>;
  /**
   * Grammar patterns for the engine to enforce (grammar-enforcement.ts): `off` (default), `auto` (the
   * engine self-test decides per model, first run at start-up), or a form forced by the setting.
   */
  grammarEnforcement?: GrammarEnforcementSetting;
  keepaliveSeconds?: number;
  /** Serialise each lowered request by parts, for a traffic consumer that keeps parts (responses-exchange.ts). */
  serialiseRequestParts?: boolean;
  commitGraceMs?: number;
  /** The backend timeout (defaults.ts). */
  upstreamIdleTimeoutSeconds?: number;
  /** Backend silence after which the wait is named in the log and the panel (defaults.ts). */
  backendWaitNoticeSeconds?: number;
  logger?: Logger;
  onTraffic?: TrafficListener;
  logFile?: string;
  dispatcher?: Dispatcher;
  /** Refusals of one cause are reported once per this interval (REFUSAL_REPORT_INTERVAL_MS). */
  refusalReportIntervalMs?: number;
  /** How long a request may take to arrive whole, head and body (REQUEST_BODY_TIMEOUT_MS). */
  requestBodyTimeoutMs?: number;
}

export interface RunningBridge {
  url: string;
  host: string;
  port: number;
  /** Random per start; the identity route reports it. */
  instanceId: string;
  /** Stops listening, aborts in-flight upstream calls and flushes the log file. */
  close(): Promise<void>;
}

/**
 * How long a request may take to arrive whole. Codex sends even a 10 MB session over loopback in
 * milliseconds; a client that takes longer is stuck or holds sockets on purpose (each one a file
 * descriptor of this process, which in VS Code is the extension host's). It covers only the request:
 * the answer may stream for as long as the model writes.
 */
const REQUEST_BODY_TIMEOUT_MS = 120_000;
/** The same for the head alone: every real client sends it in one piece. */
const REQUEST_HEADERS_TIMEOUT_MS = 10_000;
/** How often Node checks those two timeouts (its default, 30 s, would let them run over by as much). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** Upper bound on how long close() waits for final events to be flushed to clients. */
const SHUTDOWN_FLUSH_MS = 1000;

function waitForResponsesToFinish(responses: ReadonlySet<ServerResponse>, timeoutMs: number): Promise<void> {
  if (responses.size === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const check = (): void => {
      for (const response of responses) if (!response.writableFinished && !response.destroyed) return;
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(resolve, timeoutMs);
    for (const response of responses) {
      response.once('finish', check);
      response.once('close', check);
    }
    check();
  });
}

function formatUrlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * One line per failed or refused exchange at the default log level: Codex only says "Reconnecting…",
 * so the person watching the bridge must see why (the status, the reason, and the backend it tried).
 */
function createFailureReporter(logger: Logger, backendUrl: string, getSecrets: () => ReadonlyArray<string | null>): TrafficListener {
  const say = (line: string): void => logger.warn(redactSecrets(line, getSecrets()));
  return (event) => {
    if (event.type === 'exchange-end' && event.outcome === 'failed') {
      say(`exchange ${event.exchangeId} (${event.roundTrip.text}) failed: HTTP ${event.httpStatus} ${event.error?.code ?? 'error'}: ${event.error?.message ?? 'no reason given'} (backend ${backendUrl})`);
    } else if (event.type === 'exchange-rejected') {
      say(`request ${event.exchangeId}${event.roundTrip ? ` (${event.roundTrip.text})` : ''} refused: HTTP ${event.httpStatus} ${event.error.code ?? 'error'}: ${event.error.message}`);
    }
  };
}

export async function startBridgeServer(config: BridgeServerConfig): Promise<RunningBridge> {
  const host = config.host ?? '127.0.0.1';
  const logger = config.logger ?? createSilentLogger();
  const getBackendApiKey = config.getBackendApiKey ?? (() => null);
  const getToken = config.getToken ?? (() => null);
  const getSecrets = (): ReadonlyArray<string | null> => [getBackendApiKey(), getToken(), ...(config.getSecrets?.() ?? [])];
  const upstream = createUpstreamClient({ baseUrl: config.backendUrl, getApiKey: getBackendApiKey, dispatcher: config.dispatcher });
  const options = resolveBridgeOptions(config.options);
  const logWriter = config.logFile ? createExchangeLogWriter(config.logFile, logger, getSecrets) : null;
  const listeners = [config.onTraffic, logWriter?.listener, createFailureReporter(logger, upstream.baseUrl, getSecrets)].filter(
    (listener): listener is TrafficListener => listener !== undefined,
  );
  /** Streams to other VS Code windows (GET /v1/bridge/traffic), added and removed while running. */
  const subscribers = new Set<TrafficListener>();
  const fanOut = (event: TrafficEvent): void => {
    for (const listener of [...listeners, ...subscribers]) {
      try {
        listener(event);
      } catch (error) {
        // A faulty listener (panel, log) must never break a Codex turn.
        logger.error('traffic listener failed', { error: String(error) });
      }
    }
  };
  // Refusals reach every listener coalesced: a flood of them is one report per cause and interval.
  const refusals = createRefusalCoalescer(fanOut, config.refusalReportIntervalMs);
  const onTraffic = refusals.listener;

  // Aborted by close(): in-flight exchanges answer Codex with a clear error before their sockets go.
  const shutdownController = new AbortController();
  const instanceId = randomUUID();
  // One listener per window attached to a shared bridge's traffic (the exchanges in flight share one,
  // responses-exchange.ts): several windows are normal, not a leak.
  setMaxListeners(0, shutdownController.signal);
  const grammarEnforcement = new GrammarEnforcementRegistry(
    config.grammarEnforcement ?? 'off',
    (model) => testGrammarEnforcement(upstream, model, shutdownController.signal),
    (model, decision) =>
      logger.info(
        decision.enforced
          ? `grammar patterns for model ${model}: enforced by the engine, ${decision.form} form (${decision.reason})`
          : `grammar patterns for model ${model}: checked after generation only (${decision.reason})`,
      ),
  );
  if (grammarEnforcement.setting === 'auto') {
    // A few dozen tokens at start-up, so the first Codex turn already knows; a failure only leaves enforcement off.
    void (async () => {
      const model = options.modelOverride ?? chooseDoctorModel(await withTimeLimit(10_000, shutdownController.signal, (limited) => identifyBackend(upstream, limited)), null);
      if (model !== null) await grammarEnforcement.selfTest(model);
    })().catch((error: unknown) => logger.warn(`grammar self-test at start-up did not run: ${error instanceof Error ? error.message : String(error)}`));
  }
  const handleRequest = createBridgeRequestHandler({
    shutdownSignal: shutdownController.signal,
    upstream,
    getOptions: () => options,
    grammarEnforcement,
    ledger: createWarningLedger(),
    grammarCache: createGrammarCache(),
    logger,
    onTraffic,
    getToken,
    getSecrets,
    allowedHostnames: isLoopbackHostname(host) || host === '0.0.0.0' || host === '::' ? [] : [host],
    keepaliveSeconds: config.keepaliveSeconds ?? DEFAULT_KEEPALIVE_SECONDS,
    serialiseRequestParts: config.serialiseRequestParts === true,
    commitGraceMs: config.commitGraceMs ?? DEFAULT_COMMIT_GRACE_MS,
    upstreamIdleTimeoutSeconds: config.upstreamIdleTimeoutSeconds ?? DEFAULT_UPSTREAM_IDLE_TIMEOUT_SECONDS,
    backendWaitNoticeSeconds: config.backendWaitNoticeSeconds ?? BACKEND_WAIT_NOTICE_SECONDS,
    version: BRIDGE_VERSION,
    instanceId,
    subscribeTraffic: (listener) => {
      subscribers.add(listener);
      return () => subscribers.delete(listener);
    },
  });

  const requestTimeout = config.requestBodyTimeoutMs ?? REQUEST_BODY_TIMEOUT_MS;
  // Node answers 408 and closes the connection when a request's head or body takes longer.
  const server: Server = createServer(
    { requestTimeout, headersTimeout: Math.min(REQUEST_HEADERS_TIMEOUT_MS, requestTimeout), connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
    handleRequest,
  );
  server.keepAliveTimeout = 5_000;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  /** Responses not yet handed to the OS; close() lets their final event leave before cutting sockets. */
  const unfinishedResponses = new Set<ServerResponse>();
  server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    unfinishedResponses.add(response);
    const forget = (): void => {
      unfinishedResponses.delete(response);
    };
    response.once('finish', forget);
    response.once('close', forget);
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      const port = config.port ?? 0;
      if (error.code === 'EADDRINUSE') reject(new Error(`port ${port} on ${host} is already in use; choose another port (0 picks a free one)`, { cause: error }));
      else if (error.code === 'EADDRNOTAVAIL') reject(new Error(`cannot listen on ${host}: no such local address`, { cause: error }));
      else if (error.code === 'EACCES') reject(new Error(`not allowed to listen on ${host}:${port}`, { cause: error }));
      else reject(error);
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(config.port ?? 0, host);
  });

  const address = server.address() as AddressInfo;
  const url = `http://${formatUrlHost(host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host)}:${address.port}`;
  logger.info(`listening on ${url}`, { backend: upstream.baseUrl });

  let closing: Promise<void> | null = null;
  return {
    url,
    host,
    port: address.port,
    instanceId,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Every exchange in flight ends now with response.failed (or 503) naming the shutdown and aborts
        // its backend call; a cut socket alone would leave Codex with "stream closed" and no reason.
        shutdownController.abort();
        await waitForResponsesToFinish(unfinishedResponses, SHUTDOWN_FLUSH_MS);
        // Whatever is left (requests still uploading, idle keep-alive sockets) is cut; each response's
        // 'close' aborts its upstream request.
        for (const socket of sockets) socket.destroy();
        await closed;
        await upstream.close();
        refusals.flush();
        await logWriter?.flush();
      })();
      return closing;
    },
  };
}
