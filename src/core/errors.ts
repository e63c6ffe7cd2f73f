/**
 * The bridge's error hierarchy. Every class carries a `reason` discriminator and a
 * static `is()` guard that works across bundle copies, unlike `instanceof`. The server maps these
 * to HTTP statuses in exactly one place.
 */
export type BridgeErrorReason =
  | 'invalid_request'
  | 'unsupported_feature'
  | 'upstream_http'
  | 'upstream_connection'
  | 'upstream_stream';

export class BridgeError extends Error {
  readonly bridgeErrorReason: BridgeErrorReason;
  constructor(reason: BridgeErrorReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BridgeError';
    this.bridgeErrorReason = reason;
  }
  static is(value: unknown): value is BridgeError {
    return typeof value === 'object' && value !== null && typeof (value as BridgeError).bridgeErrorReason === 'string';
  }
}

/** A request Codex sent that the bridge cannot forward: answered with HTTP 400 `invalid_request_error`. */
export class InvalidRequestError extends BridgeError {
  readonly param: string | null;
  readonly code: string | null;
  readonly issues: readonly unknown[];
  constructor(message: string, fields: { param?: string | null; code?: string | null; issues?: readonly unknown[] } = {}) {
    super('invalid_request', message);
    this.name = 'InvalidRequestError';
    this.param = fields.param ?? null;
    this.code = fields.code ?? null;
    this.issues = fields.issues ?? [];
  }
  static override is(value: unknown): value is InvalidRequestError {
    return BridgeError.is(value) && value.bridgeErrorReason === 'invalid_request';
  }
}

/** Input that has no faithful Chat Completions representation (item_reference, previous_response_id …). */
export class UnsupportedFeatureError extends BridgeError {
  readonly param: string | null;
  constructor(message: string, param: string | null = null) {
    super('unsupported_feature', message);
    this.name = 'UnsupportedFeatureError';
    this.param = param;
  }
  static override is(value: unknown): value is UnsupportedFeatureError {
    return BridgeError.is(value) && value.bridgeErrorReason === 'unsupported_feature';
  }
}

/** The backend answered with a non-2xx status before any stream started. */
export class UpstreamHttpError extends BridgeError {
  readonly status: number;
  readonly body: string;
  readonly retryAfter: string | null;
  constructor(status: number, body: string, retryAfter: string | null = null) {
    super('upstream_http', `backend answered HTTP ${status}`);
    this.name = 'UpstreamHttpError';
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }
  static override is(value: unknown): value is UpstreamHttpError {
    return BridgeError.is(value) && value.bridgeErrorReason === 'upstream_http';
  }
}

/** The backend could not be reached (refused, DNS, TLS, reset before any byte). */
export class UpstreamConnectionError extends BridgeError {
  readonly url: string;
  readonly code: string;
  constructor(url: string, code: string, options?: { cause?: unknown }) {
    super('upstream_connection', `backend unreachable at ${url}: ${code}`, options);
    this.name = 'UpstreamConnectionError';
    this.url = url;
    this.code = code;
  }
  static override is(value: unknown): value is UpstreamConnectionError {
    return BridgeError.is(value) && value.bridgeErrorReason === 'upstream_connection';
  }
}

/** The backend stream failed after it started (error frame, EOF before finish, socket cut). */
export class UpstreamStreamError extends BridgeError {
  readonly code: 'context_length_exceeded' | 'server_error';
  constructor(message: string, code: 'context_length_exceeded' | 'server_error' = 'server_error') {
    super('upstream_stream', message);
    this.name = 'UpstreamStreamError';
    this.code = code;
  }
  static override is(value: unknown): value is UpstreamStreamError {
    return BridgeError.is(value) && value.bridgeErrorReason === 'upstream_stream';
  }
}
