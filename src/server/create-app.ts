import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import type { TrafficListener } from '../core/traffic-event.ts';
import { createErrorMiddleware, reportRejectedExchange } from './error-middleware.ts';
import { CODEX_MODEL_CATALOG_PATH } from '../core/model-catalog/model-catalog-entry.ts';
import { BRIDGE_IDENTITY_PATH, BRIDGE_TRAFFIC_PATH, createBridgeIdentityHandler, createBridgeTrafficHandler } from './bridge-sharing-routes.ts';
import { createModelCatalogHandler } from './model-catalog-route.ts';
import { createModelsHandler } from './models-route.ts';
import { createResponsesExchange, type ResponsesExchangeDependencies } from './responses-exchange.ts';
import { createResponsesRoute, isResponsesPost } from './responses-route.ts';
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
 * The bridge's request handler (pure wiring: listening happens in start-server.ts): `POST
 * /v1/responses`, every Codex turn, has its own route (responses-route.ts); the Express app serves
 * every other route.
 */
export function createBridgeRequestHandler(dependencies: AppDependencies): (request: IncomingMessage, response: ServerResponse) => void {
  const securityOptions = { allowedHostnames: dependencies.allowedHostnames, getToken: dependencies.getToken };
  const app = createApp(
    dependencies,
    createSecurityMiddleware(securityOptions, (path, refusal) => {
      if (path === '/v1/responses') reportRejectedExchange(dependencies.onTraffic, refusal.status, refusal);
    }),
  );
  const responsesRoute = createResponsesRoute({
    runExchange: createResponsesExchange(dependencies),
    checkSecurity: createSecurityCheck(securityOptions),
    logger: dependencies.logger,
    onTraffic: dependencies.onTraffic,
  });
  return (request, response) => {
    if (isResponsesPost(request)) responsesRoute(request, response);
    else app(request, response);
  };
}

function createApp(dependencies: AppDependencies, checkSecurity: express.RequestHandler): Express {
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
