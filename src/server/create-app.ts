import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import { InvalidRequestError } from '../core/errors.ts';
import type { TrafficListener } from '../core/traffic-event.ts';
import { createErrorMiddleware, reportRejectedExchange } from './error-middleware.ts';
import { CODEX_MODEL_CATALOG_PATH } from '../core/model-catalog/model-catalog-entry.ts';
import { BRIDGE_IDENTITY_PATH, BRIDGE_TRAFFIC_PATH, createBridgeIdentityHandler, createBridgeTrafficHandler } from './bridge-sharing-routes.ts';
import { createModelCatalogHandler } from './model-catalog-route.ts';
import { createModelsHandler } from './models-route.ts';
import { MAX_REQUEST_BODY_BYTES, parseJsonRequestBody } from './request-body-checks.ts';
import { createResponsesExchange, type ExchangeLocals, type ResponsesExchange, type ResponsesExchangeDependencies } from './responses-exchange.ts';
import { createSecurityMiddleware } from './security.ts';

export interface AppDependencies extends ResponsesExchangeDependencies {
  getToken: () => string | null;
  allowedHostnames: readonly string[];
  version: string;
  /** Random per server start: tells one bridge from a restarted one (bridge-sharing-routes.ts). */
  instanceId: string;
  /** Every traffic event, for the stream another VS Code window's panel reads. */
  subscribeTraffic: (listener: TrafficListener) => () => void;
}

/** The bridge's request handler, the Express app (pure wiring: listening happens in start-server.ts). */
export function createBridgeRequestHandler(dependencies: AppDependencies): (request: IncomingMessage, response: ServerResponse) => void {
  const securityOptions = { allowedHostnames: dependencies.allowedHostnames, getToken: dependencies.getToken };
  return createApp(
    dependencies,
    createResponsesExchange(dependencies),
    createSecurityMiddleware(securityOptions, (path, refusal) => {
      if (path === '/v1/responses') reportRejectedExchange(dependencies.onTraffic, refusal.status, refusal);
    }),
  );
}

/** The charset a Content-Type names, or null. */
function readCharset(contentType: string | undefined): string | null {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return match?.[1] ?? null;
}

function createApp(dependencies: AppDependencies, runExchange: ResponsesExchange, checkSecurity: express.RequestHandler): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use(checkSecurity);

  app.get('/healthz', (_request, response) => {
    response.json({ status: 'ok', name: 'freeform-bridge', version: dependencies.version, backend: dependencies.upstream.baseUrl });
  });
  app.get('/v1/models', createModelsHandler(dependencies.upstream, dependencies.getSecrets));
  // A provider with `supports_websockets` makes Codex try a WebSocket first. 426 is the one answer it
  // takes as "use HTTP" at once and silently; 404/501 cost seconds of reconnecting, and a 400 fails
  // the turn with an empty message.
  app.get('/v1/responses', (request, response, next) => {
    if ((request.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
      next();
      return;
    }
    dependencies.logger.info('a WebSocket upgrade of GET /v1/responses was answered 426: the client falls back to HTTP POST', { path: request.path });
    response.status(426).json({
      error: {
        message: 'freeform-bridge serves the Responses API over HTTP only: send POST /v1/responses (no WebSocket)',
        type: 'invalid_request_error',
        param: null,
        code: 'websocket_not_supported',
      },
    });
  });
  app.get(CODEX_MODEL_CATALOG_PATH, createModelCatalogHandler(dependencies));
  const sharing = { ...dependencies, backendUrl: dependencies.upstream.baseUrl };
  app.get(BRIDGE_IDENTITY_PATH, createBridgeIdentityHandler(sharing));
  app.get(BRIDGE_TRAFFIC_PATH, createBridgeTrafficHandler(sharing));
  // Codex resends the whole history on every turn: express's 100 kB default would reject real sessions.
  // The body is read as bytes (decompressed, within the limit) and parsed by parseJsonRequestBody, so a
  // large body's long strings are never decoded (outbound-encoding.ts).
  app.post('/v1/responses', express.raw({ type: 'application/json', limit: MAX_REQUEST_BODY_BYTES }), async (request, response) => {
    if (!request.is('application/json')) {
      throw new InvalidRequestError(`expected a JSON body with Content-Type: application/json, got '${request.headers['content-type'] ?? '(none)'}'`, {
        code: 'unsupported_media_type',
      });
    }
    const bytes = Buffer.isBuffer(request.body) ? request.body : undefined;
    // The exchange drops its references once the request is lowered; this one must go too.
    request.body = undefined;
    const locals = response.locals as ExchangeLocals;
    // The decompressed size: a compressed or chunked request's Content-Length does not say it.
    locals.requestBytes = bytes?.length ?? 0;
    const parsed = parseJsonRequestBody(bytes, readCharset(request.headers['content-type']));
    if (parsed.largeStrings !== null) locals.largeStrings = parsed.largeStrings;
    // Returned, not awaited: this frame ends here, so the body's bytes it holds are not kept alive
    // through a generation that may last minutes.
    return runExchange(parsed.body, request, response, locals);
  });
  app.use((request, response) => {
    response.status(404).json({
      error: {
        message: `freeform-bridge has no route ${request.method} ${request.path} (Codex posts to /v1/responses; base_url must end in /v1)`,
        type: 'invalid_request_error',
        param: null,
        code: 'not_found',
      },
    });
  });
  app.use(createErrorMiddleware({ logger: dependencies.logger, onTraffic: dependencies.onTraffic }));
  return app;
}
