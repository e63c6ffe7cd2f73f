import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidRequestError, UnsupportedFeatureError, UpstreamConnectionError } from '../../../src/core/errors.ts';
import type { Logger } from '../../../src/core/logger.ts';
import { mapUpstreamHttpError } from '../../../src/core/map-upstream-http-error.ts';
import { answerFailure, mapFailureToHttp, mapFailureToStreamError, type Failure, type FailureTarget, type HttpAnswer, type StreamFailure } from '../../../src/server/failure-map.ts';
import { createBodyError, createInvalidUtf8Error } from '../../../src/server/request-body-checks.ts';

/** The one place a failure becomes an HTTP answer or a `response.failed`. */

function thrown(error: unknown, during: 'request' | 'backend-call' | 'bridge' = 'request'): Failure {
  return { kind: 'thrown', error, during };
}

function createLogger(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { errors, debug: () => {}, info: () => {}, warn: () => {}, error: (message) => errors.push(message) };
}

function createTarget(committed: boolean): FailureTarget & { http: HttpAnswer[]; stream: StreamFailure[] } {
  const http: HttpAnswer[] = [];
  const stream: StreamFailure[] = [];
  return { committed, http, stream, sendHttp: (answer) => http.push(answer), failStream: (failure) => stream.push(failure) };
}

describe('mapFailureToHttp', () => {
  it('maps refusals of the request to 4xx with their codes', () => {
    assert.deepEqual(mapFailureToHttp(thrown(new InvalidRequestError('bad tool', { param: 'tools', code: 'tool_name_collision' }))), {
      status: 400,
      body: { error: { message: 'bad tool', type: 'invalid_request_error', param: 'tools', code: 'tool_name_collision' } },
    });
    assert.equal(mapFailureToHttp(thrown(new InvalidRequestError('not json', { code: 'unsupported_media_type' }))).status, 415);
    assert.deepEqual(mapFailureToHttp(thrown(new UnsupportedFeatureError('no previous_response_id', 'previous_response_id'))).body.error, {
      message: 'no previous_response_id',
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'unsupported_feature',
    });
  });

  it('maps body errors by their type', () => {
    assert.equal(mapFailureToHttp(thrown(createBodyError('entity.parse.failed', 400, 'Unexpected token'))).body.error.code, 'invalid_json');
    const tooLarge = mapFailureToHttp(thrown(createBodyError('entity.too.large', 413, 'too large')));
    assert.equal(tooLarge.status, 413);
    assert.match(tooLarge.body.error.message, /limit of 64 MB/);
    assert.equal(mapFailureToHttp(thrown(createInvalidUtf8Error())).body.error.code, 'invalid_utf8');
    assert.equal(mapFailureToHttp(thrown(createBodyError('charset.unsupported', 415, 'latin9'))).status, 415);
    assert.deepEqual(mapFailureToHttp(thrown(createBodyError('request.aborted', 400, 'cut'))).body.error.code, 'request.aborted');
    const corrupt = Object.assign(new Error('incorrect header check'), { status: 400, expose: true });
    assert.equal(mapFailureToHttp(thrown(corrupt)).body.error.code, 'unreadable_body');
  });

  it('maps an unreachable backend to 503 with Retry-After, and a bridge bug to 400, never 500', () => {
    const unreachable = mapFailureToHttp(thrown(new UpstreamConnectionError('http://b/v1', 'ECONNREFUSED'), 'backend-call'));
    assert.equal(unreachable.status, 503);
    assert.deepEqual(unreachable.headers, { 'retry-after': '2' });
    assert.equal(unreachable.body.error.code, 'backend_unreachable');
    const bug = mapFailureToHttp(thrown(new TypeError('x is undefined'), 'bridge'));
    assert.deepEqual(bug, { status: 400, body: { error: { message: 'freeform-bridge internal error: x is undefined', type: 'invalid_request_error', param: null, code: 'bridge_internal_error' } } });
  });

  it('passes the backend status mapping through and maps a failed answer to 400 (overflow) or 503', () => {
    const mapped = mapUpstreamHttpError(429, '{"error":{"message":"slow down"}}', { backendUrl: 'http://b/v1', model: 'm', retryAfter: '7' });
    assert.deepEqual(mapFailureToHttp({ kind: 'backend-status', answer: mapped }), { status: 429, body: mapped.body, headers: { 'retry-after': '7' } });
    assert.deepEqual(mapFailureToHttp({ kind: 'answer-failed', code: 'context_length_exceeded', message: 'too long' }), {
      status: 400,
      body: { error: { message: 'too long', type: 'invalid_request_error', param: null, code: 'context_length_exceeded' } },
    });
    assert.deepEqual(mapFailureToHttp({ kind: 'answer-failed', code: 'server_error', message: 'silent' }), {
      status: 503,
      body: { error: { message: 'silent', type: 'server_error', param: null, code: 'server_error' } },
    });
  });
});

describe('mapFailureToStreamError', () => {
  it('says what the bridge was doing when an exception reaches a committed stream', () => {
    assert.deepEqual(mapFailureToStreamError(thrown(new UpstreamConnectionError('http://b/v1', 'ECONNRESET'), 'backend-call')), {
      code: 'server_error',
      message: 'backend unreachable at http://b/v1: ECONNRESET',
    });
    assert.deepEqual(mapFailureToStreamError(thrown(new Error('odd'), 'backend-call')), { code: 'server_error', message: 'backend request failed: Error: odd' });
    assert.deepEqual(mapFailureToStreamError(thrown(new Error('odd'), 'bridge')), { code: 'server_error', message: 'freeform-bridge failed mid-stream: odd' });
  });

  it('keeps context overflow as its own code and makes every other code server_error', () => {
    const overflow = mapUpstreamHttpError(400, '{"error":{"message":"This model\'s maximum context length is 8192 tokens"}}', { backendUrl: 'http://b/v1', model: 'm', retryAfter: null });
    assert.equal(mapFailureToStreamError({ kind: 'backend-status', answer: overflow }).code, 'context_length_exceeded');
    const unavailable = mapUpstreamHttpError(502, 'bad gateway', { backendUrl: 'http://b/v1', model: 'm', retryAfter: null });
    assert.deepEqual(mapFailureToStreamError({ kind: 'backend-status', answer: unavailable }), { code: 'server_error', message: unavailable.body.error.message });
    assert.deepEqual(mapFailureToStreamError({ kind: 'answer-failed', code: 'backend_unavailable', message: 'm' }), { code: 'server_error', message: 'm' });
  });
});

describe('answerFailure', () => {
  it('answers with HTTP before the commit and with response.failed after it', () => {
    const before = createTarget(false);
    answerFailure(thrown(new InvalidRequestError('bad')), before, createLogger());
    assert.equal(before.http.length, 1);
    assert.deepEqual(before.stream, []);

    const after = createTarget(true);
    answerFailure({ kind: 'backend-status', answer: mapUpstreamHttpError(503, 'busy', { backendUrl: 'http://b/v1', model: 'm', retryAfter: null }) }, after, createLogger());
    assert.deepEqual(after.http, []);
    assert.equal(after.stream[0]?.code, 'server_error');
  });

  it('tells a failed answer as response.failed even before the commit (the stream opens for it)', () => {
    const target = createTarget(false);
    answerFailure({ kind: 'answer-failed', code: 'server_error', message: 'backend sent nothing' }, target, createLogger());
    assert.deepEqual(target.stream, [{ code: 'server_error', message: 'backend sent nothing' }]);
    assert.deepEqual(target.http, []);
  });

  it('logs bridge bugs, not refusals or an unreachable backend', () => {
    const logger = createLogger();
    answerFailure(thrown(new InvalidRequestError('bad')), createTarget(false), logger);
    answerFailure(thrown(new UpstreamConnectionError('http://b/v1', 'ECONNREFUSED'), 'backend-call'), createTarget(true), logger);
    assert.deepEqual(logger.errors, []);
    answerFailure(thrown(new TypeError('boom'), 'bridge'), createTarget(false), logger);
    answerFailure(thrown(new TypeError('boom'), 'bridge'), createTarget(true), logger);
    assert.deepEqual(logger.errors, ['unexpected error', 'error after the response started']);
  });
});
