import type { Request, Response } from 'express';
import type { BridgeOptions } from '../core/bridge-options.ts';
import { CODEX_TOOL_SURFACES, type CodexToolSurface } from '../core/model-catalog/model-catalog-entry.ts';
import { renderLiveModelCatalog } from '../core/model-catalog/render-live-model-catalog.ts';
import { InvalidRequestError, UpstreamConnectionError, UpstreamHttpError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { sendFailure } from './failure-map.ts';
import { redactSecrets } from '../core/redact-secrets.ts';
import type { TrafficListener } from '../core/traffic/traffic-event.ts';
import { discoverBackendModels, type BackendModelFacts } from './backend-models.ts';
import { reportRejectedExchange } from './error-middleware.ts';
import type { UpstreamClient } from './upstream-client.ts';
import { withTimeLimit } from './time-limit.ts';

/**
 * `GET /v1/codex/models?tool_surface=…`: Codex's own catalog format, fetched by Codex through a
 * provider's `model_catalog_url` (it appends `&client_version=…`). This is how the Codex extension in
 * VS Code, which never passes `-p`, learns the local model's tool surface and context window.
 *
 * A backend that is down gets the last catalog built from a good answer; without one the answer is a
 * 503 naming the backend and the reason, also reported to the panel and the log. Codex then keeps the
 * catalog it cached in `$CODEX_HOME/models_cache.json`, if any.
 */
export interface ModelCatalogRouteDependencies {
  upstream: UpstreamClient;
  getOptions: () => BridgeOptions;
  logger: Logger;
  onTraffic: TrafficListener;
  getSecrets: () => ReadonlyArray<string | null>;
}

/** Codex waits for the catalog at start-up: a backend that hangs must not hold it for long. */
const DISCOVERY_TIMEOUT_MS = 10_000;

function parseToolSurface(value: unknown): CodexToolSurface {
  if (value === undefined) return 'freeform';
  const surface = CODEX_TOOL_SURFACES.find((known) => known === value);
  if (surface === undefined) {
    throw new InvalidRequestError(`tool_surface must be one of ${CODEX_TOOL_SURFACES.join(', ')}, got ${JSON.stringify(value)}`, { param: 'tool_surface' });
  }
  return surface;
}

function describeDiscoveryFailure(error: unknown, backendUrl: string): string {
  if (UpstreamHttpError.is(error)) return `GET ${backendUrl}/models answered HTTP ${error.status}`;
  if (UpstreamConnectionError.is(error)) return `GET ${error.url} failed: ${error.code}`;
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `GET ${backendUrl}/models gave no answer within ${DISCOVERY_TIMEOUT_MS / 1000} s`;
  return error instanceof Error ? error.message : String(error);
}

export function createModelCatalogHandler(dependencies: ModelCatalogRouteDependencies) {
  const { upstream, logger } = dependencies;
  let lastGood: { models: BackendModelFacts[]; at: string } | null = null;
  /** Each note once per bridge: Codex refetches the catalog, the log need not repeat itself. */
  const notedAlready = new Set<string>();

  return async function handleModelCatalog(request: Request, response: Response): Promise<void> {
    const toolSurface = parseToolSurface(request.query.tool_surface);
    const abortController = new AbortController();
    response.on('close', () => abortController.abort());
    let models: BackendModelFacts[];
    try {
      models = await withTimeLimit(DISCOVERY_TIMEOUT_MS, abortController.signal, (limited) => discoverBackendModels(upstream, limited));
      lastGood = { models, at: new Date().toISOString() };
    } catch (error) {
      if (abortController.signal.aborted) return;
      const reason = redactSecrets(describeDiscoveryFailure(error, upstream.baseUrl), dependencies.getSecrets());
      if (lastGood !== null) {
        logger.warn(`Codex model catalog: the backend did not answer (${reason}); serving the catalog built from its answer at ${lastGood.at}`);
        models = lastGood.models;
      } else {
        const message = `the bridge cannot build Codex's model catalog: ${reason}. Codex keeps a catalog it cached earlier; without one it offers this provider no models and no apply_patch until the backend answers and Codex restarts.`;
        logger.error(`Codex model catalog: ${message}`);
        const answer = sendFailure(response, { kind: 'answer-failed', code: 'model_catalog_unavailable', message });
        reportRejectedExchange(dependencies.onTraffic, answer.status, answer.body.error);
        return;
      }
    }
    const options = dependencies.getOptions();
    const catalog = renderLiveModelCatalog({ models, toolSurface, modelOverride: options.modelOverride, dropsReasoningEffort: options.reasoningEffort === 'drop' });
    for (const note of catalog.notes) {
      if (notedAlready.has(note)) continue;
      notedAlready.add(note);
      logger.warn(`Codex model catalog: ${note}`);
    }
    response.status(200).type('application/json').send(catalog.text);
  };
}
