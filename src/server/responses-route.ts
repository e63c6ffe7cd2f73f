import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidRequestError } from '../core/errors.ts';
import { answerRequestError, reportRejectedExchange, type ErrorAnswerDependencies } from './error-middleware.ts';
import { parseJsonRequestBody, readRequestBody } from './request-body-checks.ts';
import type { ExchangeLocals, ResponsesExchange } from './responses-exchange.ts';
import type { SecurityRefusal } from './failure-map.ts';
import { sendSecurityRefusal } from './security.ts';

/*
 * `POST /v1/responses`, every Codex turn, in any form (compressed, with a query string): one path and
 * one body reader. It is served beside the Express app, which serves every other route, because
 * Express's per-request machinery kept an ended exchange alive longer and the bridge's memory under
 * load grew with it (docs/PERFORMANCE.md). The security check and the error answers are the app's
 * own (security.ts, error-middleware.ts).
 */

export const RESPONSES_PATH = '/v1/responses';

/** A POST to /v1/responses, with or without a query string. */
export function isResponsesPost(request: IncomingMessage): boolean {
  if (request.method !== 'POST' || request.url === undefined) return false;
  const url = request.url;
  return url === RESPONSES_PATH || url.startsWith(`${RESPONSES_PATH}?`);
}

/** `application/json`, whatever its parameters. */
const JSON_MEDIA_TYPE = /^\s*application\/json\s*(?:;|$)/i;

/** The charset a Content-Type names, or null. */
function readCharset(contentType: string | undefined): string | null {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return match?.[1] ?? null;
}

export interface ResponsesRouteDependencies extends ErrorAnswerDependencies {
  runExchange: ResponsesExchange;
  checkSecurity: (request: IncomingMessage, path: string) => SecurityRefusal | null;
}

export function createResponsesRoute(dependencies: ResponsesRouteDependencies): (request: IncomingMessage, response: ServerResponse) => void {
  const serve = async (request: IncomingMessage, response: ServerResponse, locals: ExchangeLocals): Promise<void> => {
    const contentType = request.headers['content-type'];
    if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType)) {
      request.resume();
      throw new InvalidRequestError(`expected a JSON body with Content-Type: application/json, got '${contentType ?? '(none)'}'`, { code: 'unsupported_media_type' });
    }
    const bytes = await readRequestBody(request);
    // The decompressed size: a compressed or chunked request's Content-Length does not say it.
    locals.requestBytes = bytes.length;
    const parsed = parseJsonRequestBody(bytes, readCharset(contentType));
    if (parsed.largeStrings !== null) locals.largeStrings = parsed.largeStrings;
    // Returned, not awaited: this frame ends here, so the body's bytes it holds are not kept alive
    // through a generation that may last minutes.
    return dependencies.runExchange(parsed.body, request, response, locals);
  };
  return (request, response) => {
    const refusal = dependencies.checkSecurity(request, RESPONSES_PATH);
    if (refusal) {
      // Nothing of the body is read: a refused request costs nothing. The panel still shows it: a
      // Codex profile with a stale token is otherwise hard to tell from a bridge that is down.
      request.resume();
      const answer = sendSecurityRefusal(response, refusal);
      reportRejectedExchange(dependencies.onTraffic, answer.status, answer.body.error);
      return;
    }
    const locals: ExchangeLocals = {};
    serve(request, response, locals).catch((error: unknown) => {
      answerRequestError(error, { path: RESPONSES_PATH, response, locals }, dependencies);
    });
  };
}
