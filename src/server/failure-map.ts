import type { ServerResponse } from 'node:http';
import type { EngineRefusal } from '../core/engine-error.ts';
import { InvalidRequestError, UnsupportedFeatureError, UpstreamConnectionError, UpstreamHttpError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { createOpenAiErrorBody, type OpenAiErrorBody } from '../core/openai-error.ts';
import type { StreamFailureCode } from '../core/stream/chat-stream-to-responses-events.ts';
import { sendJson } from './send-json.ts';
import { INVALID_UTF8_ERROR_TYPE, MAX_REQUEST_BODY_BYTES, type BodyParserError } from './request-body-checks.ts';

/**
 * The one place a failure becomes what a client is told, for every route of the bridge: an HTTP
 * status with an OpenAI error body while nothing of the answer is on the wire, or a `response.failed`
 * event once a stream is committed. The core says what went wrong (its errors, an engine's refusal,
 * a failed answer) and never picks a status. Never 500: Codex hides a 500's body behind "high demand"
 * and retries it many times.
 */

/** Every way a request can fail, by where the failure comes from. */
export type Failure =
  /**
   * An exception: a refused body, a refused request (lowering), the backend call that could not be
   * made, or a bridge bug. `during` says what the bridge was doing, for a committed stream's message.
   */
  | { kind: 'thrown'; error: unknown; during: 'request' | 'backend-call' | 'bridge' }
  /** The backend answered a non-2xx status before streaming, as core's engine-error reader classified it. */
  | { kind: 'engine-refusal'; refusal: EngineRefusal }
  /**
   * The answer itself failed: an error frame, a broken, unreadable or silent backend stream, the bridge
   * stopping. A stream request tells it as `response.failed`, opening its stream if it has to; a JSON
   * request as 400 (context overflow) or 503.
   */
  | { kind: 'answer-failed'; code: string; message: string }
  /** The request was refused before it was read (security.ts). */
  | { kind: 'refused'; refusal: SecurityRefusal }
  /** No route serves the request; `websocket` is Codex trying a WebSocket before HTTP. */
  | { kind: 'no-route'; method: string; path: string; websocket: boolean };

/** Why security.ts refuses a request before anything else happens. */
export interface SecurityRefusal {
  reason: 'missing_host' | 'malformed_host' | 'host_not_allowed' | 'origin_not_allowed' | 'invalid_bridge_token';
  message: string;
}

export interface HttpAnswer {
  status: number;
  body: OpenAiErrorBody;
  headers?: Record<string, string>;
}

export interface StreamFailure {
  code: StreamFailureCode;
  message: string;
}

/** Where a failure is told: a response that may still get a status, and for a stream request its stream. */
export interface FailureTarget {
  /** The HTTP status is on the wire: from now on a failure can only be a `response.failed` event. */
  readonly committed: boolean;
  sendHttp(answer: HttpAnswer): void;
  /** Present when the client asked for a stream: a failed answer is told in it as `response.failed`. */
  readonly failStream?: (failure: StreamFailure) => void;
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

/** Whether an exception is one the bridge expects (a refusal, an unreachable backend); anything else is a bug worth a log line. */
export function isExpectedError(error: unknown): boolean {
  return InvalidRequestError.is(error) || UnsupportedFeatureError.is(error) || UpstreamConnectionError.is(error) || isBodyParserError(error) || isUntypedClientHttpError(error);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function mapBodyParserError(error: BodyParserError): HttpAnswer {
  switch (error.type) {
    case 'entity.parse.failed':
      return { status: 400, body: createOpenAiErrorBody(`request body is not valid JSON: ${error.message}`, { code: 'invalid_json' }) };
    case 'entity.too.large':
      return {
        status: 413,
        body: createOpenAiErrorBody(`request body is larger than the bridge's limit of ${MAX_REQUEST_BODY_BYTES / (1024 * 1024)} MB`, { code: 'request_too_large' }),
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

function mapThrownError(error: unknown): HttpAnswer {
  if (InvalidRequestError.is(error)) {
    const status = error.code === 'unsupported_media_type' ? 415 : 400;
    return { status, body: createOpenAiErrorBody(error.message, { param: error.param, code: error.code }) };
  }
  if (UnsupportedFeatureError.is(error)) {
    return { status: 400, body: createOpenAiErrorBody(error.message, { param: error.param, code: 'unsupported_feature' }) };
  }
  if (UpstreamConnectionError.is(error)) {
    return { status: 503, headers: { 'retry-after': '2' }, body: createOpenAiErrorBody(error.message, { type: 'server_error', code: 'backend_unreachable' }) };
  }
  if (UpstreamHttpError.is(error)) {
    return { status: 503, body: createOpenAiErrorBody(`backend answered HTTP ${error.status}`, { type: 'server_error', code: 'backend_unavailable' }) };
  }
  if (isBodyParserError(error)) return mapBodyParserError(error);
  if (isUntypedClientHttpError(error)) {
    return {
      status: error.status,
      body: createOpenAiErrorBody(`request body could not be read (check its Content-Encoding): ${error.message}`, { code: 'unreadable_body' }),
    };
  }
  // A bridge bug: 400 so Codex prints it instead of retrying a hidden 500 many times.
  return { status: 400, body: createOpenAiErrorBody(`freeform-bridge internal error: ${messageOf(error)}`, { code: 'bridge_internal_error' }) };
}

/** Advertised on a 429 without the backend's own Retry-After (Codex fails at once without one). */
export const DEFAULT_RETRY_AFTER_SECONDS = '2';

function mapEngineRefusal(refusal: EngineRefusal): HttpAnswer {
  switch (refusal.kind) {
    // Permanent: 400, which Codex prints and does not retry.
    case 'context_overflow':
      return { status: 400, headers: {}, body: createOpenAiErrorBody(refusal.message, { code: 'context_length_exceeded', param: 'input' }) };
    case 'unauthorized':
      return { status: 400, headers: {}, body: createOpenAiErrorBody(refusal.message, { code: 'backend_unauthorized' }) };
    case 'url_without_v1':
      return { status: 400, headers: {}, body: createOpenAiErrorBody(refusal.message, { code: 'backend_url_without_v1' }) };
    case 'model_not_found':
      return { status: 400, headers: {}, body: createOpenAiErrorBody(refusal.message, { code: 'model_not_found', param: 'model' }) };
    case 'rejected':
      return { status: 400, headers: {}, body: createOpenAiErrorBody(refusal.message, { code: 'backend_rejected_request' }) };
    // Transient: Codex retries a 429 after its Retry-After and a 503, and prints the message.
    case 'rate_limited':
      return {
        status: 429,
        headers: { 'retry-after': refusal.retryAfter ?? DEFAULT_RETRY_AFTER_SECONDS },
        body: createOpenAiErrorBody(refusal.message, { type: 'rate_limit_error', code: 'rate_limit_exceeded' }),
      };
    case 'unavailable':
      return {
        status: 503,
        headers: refusal.retryAfter ? { 'retry-after': refusal.retryAfter } : {},
        body: createOpenAiErrorBody(refusal.message, { type: 'server_error', code: 'backend_unavailable' }),
      };
    default: {
      const unexpected: never = refusal;
      throw new Error(`unhandled engine refusal ${String(unexpected)}`);
    }
  }
}

const SECURITY_STATUS: Readonly<Record<SecurityRefusal['reason'], number>> = {
  missing_host: 400,
  malformed_host: 400,
  host_not_allowed: 403,
  origin_not_allowed: 403,
  invalid_bridge_token: 401,
};

/**
 * `Connection: close` makes Node close the socket once the answer is out instead of reading the
 * request's body to its end to keep the connection: a process without the token could otherwise hold
 * the socket (and a file descriptor of the bridge's process) for as long as it sends body bytes.
 */
function mapSecurityRefusal(refusal: SecurityRefusal): HttpAnswer {
  return { status: SECURITY_STATUS[refusal.reason], headers: { connection: 'close' }, body: createOpenAiErrorBody(refusal.message, { code: refusal.reason }) };
}

/** The failure as an HTTP answer, for a response whose status is not written yet. */
export function mapFailureToHttp(failure: Failure): HttpAnswer {
  switch (failure.kind) {
    case 'thrown':
      return mapThrownError(failure.error);
    case 'engine-refusal':
      return mapEngineRefusal(failure.refusal);
    case 'refused':
      return mapSecurityRefusal(failure.refusal);
    case 'no-route':
      // A provider with `supports_websockets` makes Codex try a WebSocket first. 426 is the one answer
      // it takes as "use HTTP" at once and silently; 404/501 cost seconds of reconnecting, and a 400
      // fails the turn with an empty message.
      if (failure.websocket) {
        return { status: 426, body: createOpenAiErrorBody('freeform-bridge serves the Responses API over HTTP only: send POST /v1/responses (no WebSocket)', { code: 'websocket_not_supported' }) };
      }
      return {
        status: 404,
        body: createOpenAiErrorBody(`freeform-bridge has no route ${failure.method} ${failure.path} (Codex posts to /v1/responses; base_url must end in /v1)`, { code: 'not_found' }),
      };
    case 'answer-failed': {
      // Context overflow is permanent (Codex must not retry it); anything else may pass, so 503.
      const status = failure.code === 'context_length_exceeded' ? 400 : 503;
      return { status, body: createOpenAiErrorBody(failure.message, { type: status === 400 ? 'invalid_request_error' : 'server_error', code: failure.code }) };
    }
    default: {
      const unexpected: never = failure;
      throw new Error(`unhandled failure ${String(unexpected)}`);
    }
  }
}

function toStreamCode(code: string | null): StreamFailureCode {
  return code === 'context_length_exceeded' ? 'context_length_exceeded' : 'server_error';
}

/** The failure as the error of a `response.failed` event, for a committed stream. */
export function mapFailureToStreamError(failure: Failure): StreamFailure {
  switch (failure.kind) {
    case 'thrown': {
      const { error } = failure;
      if (failure.during === 'backend-call') {
        return { code: 'server_error', message: UpstreamConnectionError.is(error) ? error.message : `backend request failed: ${String(error)}` };
      }
      return { code: 'server_error', message: `freeform-bridge failed mid-stream: ${messageOf(error)}` };
    }
    case 'engine-refusal':
      return { code: failure.refusal.kind === 'context_overflow' ? 'context_length_exceeded' : 'server_error', message: failure.refusal.message };
    case 'refused':
    case 'no-route':
      // Refused before any stream could start; listed so that every kind has its answer here.
      return { code: 'server_error', message: mapFailureToHttp(failure).body.error.message };
    case 'answer-failed':
      return { code: toStreamCode(failure.code), message: failure.message };
    default: {
      const unexpected: never = failure;
      throw new Error(`unhandled failure ${String(unexpected)}`);
    }
  }
}

/**
 * Tells `failure` to `target`, once: as `response.failed` once committed, and for a failed answer of
 * a stream request (which always hears it as an event); otherwise as an HTTP answer, a JSON
 * request's failed answer included. A bridge bug is logged.
 */
export function answerFailure(failure: Failure, target: FailureTarget, logger: Logger): void {
  if (failure.kind === 'thrown' && !isExpectedError(failure.error)) {
    const { error } = failure;
    if (target.committed) logger.error('error after the response started', { error: String(error) });
    else logger.error('unexpected error', { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
  if (target.failStream && (target.committed || failure.kind === 'answer-failed')) target.failStream(mapFailureToStreamError(failure));
  else target.sendHttp(mapFailureToHttp(failure));
}

/** Answers, as HTTP, a request of a route that is not an exchange (or refused before one); returns what was sent. */
export function sendFailure(response: ServerResponse, failure: Failure): HttpAnswer {
  const answer = mapFailureToHttp(failure);
  sendJson(response, answer.status, answer.body, answer.headers);
  return answer;
}
