import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import { InvalidRequestError } from '../core/errors.ts';
import type { TrafficListener } from '../core/traffic-event.ts';
import { createErrorMiddleware, reportRejectedExchange } from './error-middleware.ts';
import { CODEX_MODEL_CATALOG_PATH } from '../core/model-catalog/model-catalog-entry.ts';
import { BRIDGE_IDENTITY_PATH, BRIDGE_TRAFFIC_PATH, createBridgeIdentityHandler, createBridgeTrafficHandler } from './bridge-sharing-routes.ts';
import { createModelCatalogHandler } from './model-catalog-route.ts';
import { createModelsHandler } from './models-route.ts';
import { MAX_REQUEST_BODY_BYTES, rejectDeeplyNestedBody, verifyUtf8Body } from './request-body-checks.ts';
import { createResponsesExchange, type ExchangeLocals, type ResponsesExchange, type ResponsesExchangeDependencies } from './responses-exchange.ts';
import { createResponsesFastPath } from './responses-fast-path.ts';
import { createSecurityCheck, createSecurityMiddleware } from './security.ts';

export interface AppDependencies extends ResponsesExchangeDependencies {
  getToken: () => string | null;
  allowedHostnames: readonly string[];
  version: string;
  /** Random per server start: tells one bridge from a restarted one (bridge-sharing-routes.ts). */
  instanceId: string;
  /** Every traffic event, for the stream another VS Code window's panel reads. */
  subscribeTraffic: (listener: TrafficListener) => () => void;
}

/**
 * The bridge's request handler (pure wiring: listening happens in start-server.ts). A
 * plain-JSON `POST /v1/responses` — every Codex turn — takes the fast path; everything else, and
 * every unusual form of that request, goes through the Express app.
 */
export function createBridgeRequestHandler(dependencies: AppDependencies): (request: IncomingMessage, response: ServerResponse) => void {
  const runExchange = createResponsesExchange(dependencies);
  const securityOptions = { allowedHostnames: dependencies.allowedHostnames, getToken: dependencies.getToken };
  const app = createApp(
    dependencies,
    runExchange,
    createSecurityMiddleware(securityOptions, (path, refusal) => {
      if (path === '/v1/responses') reportRejectedExchange(dependencies.onTraffic, refusal.status, refusal);
    }),
  );
  const fastPath = createResponsesFastPath({
    runExchange,
    checkSecurity: createSecurityCheck(securityOptions),
    logger: dependencies.logger,
    onTraffic: dependencies.onTraffic,
  });
  return (request, response) => {
    if (!fastPath(request, response)) app(request, response);
  };
}

function createApp(dependencies: AppDependencies, runExchange: ResponsesExchange, checkSecurity: express.RequestHandler): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use(checkSecurity);
  /** Body sizes from express.json's verify hook, read back by the route below. */
  const bodyBytes = new WeakMap<IncomingMessage, number>();

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
  app.post(
    '/v1/responses',
    // Invalid UTF-8 and absurd nesting are refused with a 400 here (request-body-checks.ts), before lowering.
    express.json({
      limit: MAX_REQUEST_BODY_BYTES,
      strict: false,
      verify: (request, response, body, encoding) => {
        verifyUtf8Body(request, response, body, encoding);
        // The decoded size: a compressed or chunked request's Content-Length does not say it.
        bodyBytes.set(request, body.length);
      },
    }),
    rejectDeeplyNestedBody,
    async (request, response) => {
      if (!request.is('application/json')) {
        throw new InvalidRequestError(
          `expected a JSON body with Content-Type: application/json, got '${request.headers['content-type'] ?? '(none)'}'`,
          { code: 'unsupported_media_type' },
        );
      }
      const body: unknown = request.body;
      // The exchange drops its reference once the request is lowered; this one must go too.
      request.body = undefined;
      const locals = response.locals as ExchangeLocals;
      locals.requestBytes = bodyBytes.get(request) ?? 0;
      await runExchange(body, request, response, locals);
    },
  );
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
