import express, { type Express } from 'express';
import { createErrorMiddleware, MAX_REQUEST_BODY_BYTES } from './error-middleware.ts';
import { createModelsHandler } from './models-route.ts';
import { createResponsesHandler, type ResponsesRouteDependencies } from './responses-route.ts';
import { rejectDeeplyNestedBody, verifyUtf8Body } from './request-body-checks.ts';
import { createSecurityMiddleware } from './security.ts';

export interface AppDependencies extends ResponsesRouteDependencies {
  getToken: () => string | null;
  allowedHostnames: readonly string[];
  version: string;
}

/** Pure wiring (style.md §9): listening happens in start-server.ts. */
export function createApp(dependencies: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use(createSecurityMiddleware({ allowedHostnames: dependencies.allowedHostnames, getToken: dependencies.getToken }));

  app.get('/healthz', (_request, response) => {
    response.json({ status: 'ok', name: 'freeform-bridge', version: dependencies.version, backend: dependencies.upstream.baseUrl });
  });
  app.get('/v1/models', createModelsHandler(dependencies.upstream, dependencies.getSecrets));
  // Codex resends the whole history on every turn: express's 100 kB default would reject real sessions.
  app.post(
    '/v1/responses',
    // Invalid UTF-8 and absurd nesting are refused with a 400 here (request-body-checks.ts), before lowering.
    express.json({ limit: MAX_REQUEST_BODY_BYTES, strict: false, verify: verifyUtf8Body }),
    rejectDeeplyNestedBody,
    createResponsesHandler(dependencies),
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
