import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import type { TrafficListener } from '../core/traffic/traffic-event.ts';
import { createErrorMiddleware, reportRejectedExchange } from './error-middleware.ts';
import { sendFailure } from './failure-map.ts';
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
    createSecurityMiddleware(securityOptions, (path, answer) => {
      if (path === '/v1/responses') reportRejectedExchange(dependencies.onTraffic, answer.status, answer.body.error);
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
  app.get('/v1/responses', (request, response, next) => {
    if ((request.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
      next();
      return;
    }
    dependencies.logger.info('a WebSocket upgrade of GET /v1/responses was answered 426: the client falls back to HTTP POST', { path: request.path });
    sendFailure(response, { kind: 'no-route', method: request.method, path: request.path, websocket: true });
  });
  app.get(CODEX_MODEL_CATALOG_PATH, createModelCatalogHandler(dependencies));
  const sharing = { ...dependencies, backendUrl: dependencies.upstream.baseUrl };
  app.get(BRIDGE_IDENTITY_PATH, createBridgeIdentityHandler(sharing));
  app.get(BRIDGE_TRAFFIC_PATH, createBridgeTrafficHandler(sharing));
  app.use((request, response) => sendFailure(response, { kind: 'no-route', method: request.method, path: request.path, websocket: false }));
  app.use(createErrorMiddleware({ logger: dependencies.logger, onTraffic: dependencies.onTraffic }));
  return app;
}
