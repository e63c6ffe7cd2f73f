import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { InvalidRequestError, UnsupportedFeatureError, UpstreamConnectionError, UpstreamHttpError } from '../core/errors.ts';
import { createItemId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import { createOpenAiErrorBody, type OpenAiErrorBody } from '../core/openai-error.ts';
import type { RoundTripLabel } from '../core/round-trip-label.ts';
import type { ExchangeRejectedEvent, TrafficListener } from '../core/traffic-event.ts';
import { INVALID_UTF8_ERROR_TYPE } from './request-body-checks.ts';
import type { ExchangeLocals } from './responses-exchange.ts';
import { sendJson } from './send-json.ts';

/**
 * Body-parser failures carry a `type` string and an HTTP status (express.json); the fast path makes
 * its own body errors the same way (createBodyError), so both map to the same answers here.
 */
export interface BodyParserError {
  type: string;
  status?: number;
  limit?: number;
  message: string;
}

export function createBodyError(type: string, status: number, message: string): Error & BodyParserError {
  return Object.assign(new Error(message), { type, status });
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return typeof error === 'object' && error !== null && typeof (error as BodyParserError).type === 'string' && 'status' in error;
}

/**
 * A client error http-errors made without a `type`: body-parser wraps decompression failures (a
 * corrupt gzip or brotli body) this way. Without this they surfaced as "freeform-bridge internal error".
 */
function isUntypedClientHttpError(error: unknown): error is { status: number; message: string } {
  if (typeof error !== 'object' || error === null) return false;
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' && status >= 400 && status < 500 && (error as { expose?: unknown }).expose === true;
}

interface MappedError {
  status: number;
  body: OpenAiErrorBody;
  headers?: Record<string, string>;
}

export const MAX_REQUEST_BODY_BYTES = 64 * 1024 * 1024;

/** The one place errors become HTTP statuses (bridge-rules.md §8). Never 500: Codex hides its body and retries. */
export function mapErrorToResponse(error: unknown): MappedError {
  if (InvalidRequestError.is(error)) {
    const status = error.code === 'unsupported_media_type' ? 415 : 400;
    return { status, body: createOpenAiErrorBody(error.message, { param: error.param, code: error.code }) };
  }
  if (UnsupportedFeatureError.is(error)) {
    return { status: 400, body: createOpenAiErrorBody(error.message, { param: error.param, code: 'unsupported_feature' }) };
  }
  if (UpstreamConnectionError.is(error)) {
    return {
      status: 503,
      headers: { 'retry-after': '2' },
      body: createOpenAiErrorBody(error.message, { type: 'server_error', code: 'backend_unreachable' }),
    };
  }
  if (UpstreamHttpError.is(error)) {
    return { status: 503, body: createOpenAiErrorBody(`backend answered HTTP ${error.status}`, { type: 'server_error', code: 'backend_unavailable' }) };
  }
  if (isBodyParserError(error)) {
    switch (error.type) {
      case 'entity.parse.failed':
        return { status: 400, body: createOpenAiErrorBody(`request body is not valid JSON: ${error.message}`, { code: 'invalid_json' }) };
      case 'entity.too.large':
        return {
          status: 413,
          body: createOpenAiErrorBody(`request body is larger than the bridge's limit of ${MAX_REQUEST_BODY_BYTES / (1024 * 1024)} MB`, {
            code: 'request_too_large',
          }),
        };
      case INVALID_UTF8_ERROR_TYPE:
        return {
          status: 400,
          body: createOpenAiErrorBody('request body is not valid UTF-8; freeform-bridge refuses it rather than replace bytes inside code and patches', {
            code: 'invalid_utf8',
          }),
        };
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return { status: 415, body: createOpenAiErrorBody(`unsupported request encoding: ${error.message}`, { code: 'unsupported_encoding' }) };
      default:
        return { status: error.status && error.status >= 400 && error.status < 500 ? error.status : 400, body: createOpenAiErrorBody(error.message, { code: error.type }) };
    }
  }
  if (isUntypedClientHttpError(error)) {
    return {
      status: error.status,
      body: createOpenAiErrorBody(`request body could not be read (check its Content-Encoding): ${error.message}`, { code: 'unreadable_body' }),
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  // A bridge bug: 400 so Codex prints it instead of retrying a hidden 500 thirty times.
  return { status: 400, body: createOpenAiErrorBody(`freeform-bridge internal error: ${message}`, { code: 'bridge_internal_error' }) };
}

export interface ErrorAnswerDependencies {
  logger: Logger;
  onTraffic: TrafficListener;
}

/**
 * Answers a request that failed with `error`, whichever path served it (the Express error middleware
 * below, or the `POST /v1/responses` fast path).
 */
export function answerRequestError(
  error: unknown,
  exchange: { path: string; response: ServerResponse; locals: ExchangeLocals },
  dependencies: ErrorAnswerDependencies,
): void {
  const { response, locals } = exchange;
  if (response.headersSent) {
    // The SSE response is committed: end it with response.failed, never a silent close.
    if (locals.failStream) locals.failStream('server_error', `freeform-bridge failed mid-stream: ${error instanceof Error ? error.message : String(error)}`);
    else response.end();
    dependencies.logger.error('error after the response started', { error: String(error) });
    return;
  }
  const mapped = mapErrorToResponse(error);
  if (
    mapped.status >= 400 &&
    !InvalidRequestError.is(error) &&
    !UnsupportedFeatureError.is(error) &&
    !UpstreamConnectionError.is(error) &&
    !isBodyParserError(error) &&
    !isUntypedClientHttpError(error)
  ) {
    dependencies.logger.error('unexpected error', { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
  if (!locals.exchangeStarted && exchange.path === '/v1/responses') {
    // Refused before the handler named it (bad JSON, too large): still a distinct log line.
    reportRejectedExchange(dependencies.onTraffic, mapped.status, mapped.body.error, locals.exchangeId, locals.roundTrip);
  }
  sendJson(response, mapped.status, mapped.body, mapped.headers);
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
