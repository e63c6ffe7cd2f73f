import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import type { TrafficListener } from '../core/traffic/traffic-event.ts';
import { createErrorMiddleware, reportRejectedExchange } from './error-middleware.ts';
import { sendFailure } from './failure-map.ts';
import { CODEX_MODEL_CATALOG_PATH } from '../core/model-catalog/model-catalog-entry.ts';
import { BRIDGE_IDENTITY_PATH, BRIDGE_TRAFFIC_PATH, createBridgeIdentityHandler, createBridgeTrafficHandler } from './bridge-sharing-routes.ts';
import { createModelCatalogHandler } from './model-catalog-route.ts';
import { createModelsHandler } from './models-route.ts';
import type { ParsedRequestBody } from '../core/outbound/outbound-encoding.ts';
import { readJsonRequestBody } from './request-body-checks.ts';
import { createResponsesExchange, type ExchangeLocals, type ResponsesExchangeDependencies } from './responses-exchange.ts';
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

/** Every Codex turn. */
const RESPONSES_PATH = '/v1/responses';

/**
 * The bridge's request handler (pure wiring: listening happens in start-server.ts), the Express app:
 * the security check for every route first, then the routes, `POST /v1/responses` (every Codex turn)
 * with its body middleware; every failure before an exchange starts ends in the error middleware.
 */
export function createBridgeRequestHandler(dependencies: AppDependencies): (request: IncomingMessage, response: ServerResponse) => void {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use(
    createSecurityMiddleware({ allowedHostnames: dependencies.allowedHostnames, getToken: dependencies.getToken }, (path, answer) => {
      // Nothing of the body is read. The panel still shows the refused turn: a Codex profile with a
      // stale token is otherwise hard to tell from a bridge that is down.
      if (path === RESPONSES_PATH) reportRejectedExchange(dependencies.onTraffic, answer.status, answer.body.error);
    }),
  );

  const runExchange = createResponsesExchange(dependencies);
  // The exchange's promise is returned: one refused before it starts (lowering) reaches the error middleware.
  app.post(RESPONSES_PATH, readJsonRequestBody, (request, response) => runExchange(request.body as ParsedRequestBody, request, response, response.locals as ExchangeLocals));
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
