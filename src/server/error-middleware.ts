import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { createItemId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { RoundTripLabel } from '../core/traffic/round-trip-label.ts';
import type { ExchangeRejectedEvent, TrafficListener } from '../core/traffic/traffic-event.ts';
import { answerFailure, type FailureTarget } from './failure-map.ts';
import type { ExchangeLocals } from './responses-exchange.ts';
import { sendJson } from './send-json.ts';

export interface ErrorAnswerDependencies {
  logger: Logger;
  onTraffic: TrafficListener;
}

/**
 * Answers a request that failed with `error` before an exchange took it over, whichever route served
 * it (the Express error middleware below, or the `POST /v1/responses` route). An exchange that
 * started answers its own failures (responses-exchange.ts), through the same failure map.
 */
export function answerRequestError(
  error: unknown,
  exchange: { path: string; response: ServerResponse; locals: ExchangeLocals },
  dependencies: ErrorAnswerDependencies,
): void {
  const { response, locals } = exchange;
  if (response.headersSent) {
    // Another route's answer had started (the traffic stream): it can only be ended.
    response.end();
    dependencies.logger.error('error after the response started', { error: String(error) });
    return;
  }
  // No stream was opened: whatever failed is told as HTTP.
  const target: FailureTarget = {
    committed: false,
    sendHttp: (answer) => {
      // Refused before an exchange started (bad JSON, too large, a refused request): still a distinct log line.
      if (exchange.path === '/v1/responses') reportRejectedExchange(dependencies.onTraffic, answer.status, answer.body.error, locals.exchangeId, locals.roundTrip);
      sendJson(response, answer.status, answer.body, answer.headers);
    },
  };
  answerFailure({ kind: 'thrown', error, during: 'request' }, target, dependencies.logger);
}

/** A `/v1/responses` request refused before lowering, for the panel and the log. */
export function reportRejectedExchange(
  onTraffic: TrafficListener,
  httpStatus: number,
  error: { code: string | null; message: string },
  exchangeId: string = createItemId('resp'),
  roundTrip?: RoundTripLabel,
): void {
  const event: ExchangeRejectedEvent = { type: 'exchange-rejected', exchangeId, startedAt: new Date().toISOString(), httpStatus, error: { code: error.code, message: error.message } };
  if (roundTrip !== undefined) event.roundTrip = roundTrip;
  onTraffic(event);
}

export function createErrorMiddleware(dependencies: ErrorAnswerDependencies) {
  return function handleError(error: unknown, request: Request, response: Response, _next: NextFunction): void {
    answerRequestError(error, { path: request.path, response, locals: response.locals as ExchangeLocals }, dependencies);
  };
}
