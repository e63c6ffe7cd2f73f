import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidRequestError, UnsupportedFeatureError, UpstreamConnectionError } from '../../../src/core/errors.ts';
import type { Logger } from '../../../src/core/logger.ts';
import { classifyEngineRefusal } from '../../../src/core/engine-error.ts';
import { answerFailure, mapFailureToHttp, mapFailureToStreamError, type Failure, type FailureTarget, type HttpAnswer, type StreamFailure } from '../../../src/server/failure-map.ts';
import { createBodyError, createInvalidUtf8Error } from '../../../src/server/request-body-checks.ts';

/** The one place a failure becomes an HTTP answer or a `response.failed`. */

function thrown(error: unknown, during: 'request' | 'backend-call' | 'bridge' = 'request'): Failure {
  return { kind: 'thrown', error, during };
}

/** A backend's error answer as the exchange reports it: classified by core, answered by the map. */
function engineRefusal(status: number, body: string, retryAfter: string | null = null): Failure {
  return { kind: 'engine-refusal', refusal: classifyEngineRefusal(status, body, { backendUrl: 'http://b/v1', model: 'm', retryAfter }) };
}

function createLogger(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { errors, debug: () => {}, info: () => {}, warn: () => {}, error: (message) => errors.push(message) };
}

function createTarget(committed: boolean, streams = true): FailureTarget & { http: HttpAnswer[]; stream: StreamFailure[] } {
  const http: HttpAnswer[] = [];
  const stream: StreamFailure[] = [];
  return { committed, http, stream, sendHttp: (answer) => http.push(answer), failStream: streams ? (failure) => stream.push(failure) : undefined };
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

  it("chooses the status of an engine's refusal, and maps a failed answer to 400 (overflow) or 503", () => {
    assert.deepEqual(mapFailureToHttp(engineRefusal(429, '{"error":{"message":"slow down"}}', '7')), {
      status: 429,
      headers: { 'retry-after': '7' },
      body: { error: { message: 'backend at http://b/v1 is rate limiting (HTTP 429): slow down', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } },
    });
    assert.deepEqual(mapFailureToHttp(engineRefusal(429, 'slow')).headers, { 'retry-after': '2' });
    const overflow = mapFailureToHttp(engineRefusal(400, '{"error":{"message":"This model\'s maximum context length is 8192 tokens"}}'));
    assert.deepEqual([overflow.status, overflow.body.error.code, overflow.body.error.param], [400, 'context_length_exceeded', 'input']);
    for (const [status, body, answered, code] of [
      [401, 'bad key', 400, 'backend_unauthorized'],
      [404, 'no such model', 400, 'model_not_found'],
      [422, 'bad field', 400, 'backend_rejected_request'],
      [500, 'tools param requires --jinja flag', 400, 'backend_rejected_request'],
      [502, 'Bad Gateway', 503, 'backend_unavailable'],
    ] as const) {
      const answer = mapFailureToHttp(engineRefusal(status, body));
      assert.deepEqual([answer.status, answer.body.error.code], [answered, code], `${status} ${body}`);
    }
    assert.equal(mapFailureToHttp({ kind: 'engine-refusal', refusal: { kind: 'url_without_v1', message: 'm' } }).body.error.code, 'backend_url_without_v1');
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
    assert.equal(mapFailureToStreamError(engineRefusal(400, '{"error":{"message":"This model\'s maximum context length is 8192 tokens"}}')).code, 'context_length_exceeded');
    assert.deepEqual(mapFailureToStreamError(engineRefusal(502, 'bad gateway')), { code: 'server_error', message: 'backend unavailable (HTTP 502 from http://b/v1): bad gateway' });
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
    answerFailure(engineRefusal(503, 'busy'), after, createLogger());
    assert.deepEqual(after.http, []);
    assert.equal(after.stream[0]?.code, 'server_error');
  });

  it('tells a failed answer as response.failed even before the commit (the stream opens for it)', () => {
    const target = createTarget(false);
    answerFailure({ kind: 'answer-failed', code: 'server_error', message: 'backend sent nothing' }, target, createLogger());
    assert.deepEqual(target.stream, [{ code: 'server_error', message: 'backend sent nothing' }]);
    assert.deepEqual(target.http, []);
  });

  it("tells a JSON request's failed answer as HTTP, once", () => {
    const target = createTarget(false, false);
    answerFailure({ kind: 'answer-failed', code: 'context_length_exceeded', message: 'too long' }, target, createLogger());
    assert.deepEqual(target.http, [{ status: 400, body: { error: { message: 'too long', type: 'invalid_request_error', param: null, code: 'context_length_exceeded' } } }]);
    assert.deepEqual(target.stream, []);
  });

  it('answers refused requests and unknown routes with their own statuses', () => {
    const refused = (reason: 'missing_host' | 'host_not_allowed' | 'invalid_bridge_token') => mapFailureToHttp({ kind: 'refused', refusal: { reason, message: reason } });
    assert.deepEqual(refused('invalid_bridge_token'), {
      status: 401,
      headers: { connection: 'close' },
      body: { error: { message: 'invalid_bridge_token', type: 'invalid_request_error', param: null, code: 'invalid_bridge_token' } },
    });
    assert.equal(refused('host_not_allowed').status, 403);
    assert.equal(refused('missing_host').status, 400);
    assert.equal(mapFailureToHttp({ kind: 'no-route', method: 'GET', path: '/v1/responses', websocket: true }).status, 426);
    const missing = mapFailureToHttp({ kind: 'no-route', method: 'POST', path: '/responses', websocket: false });
    assert.deepEqual([missing.status, missing.body.error.code], [404, 'not_found']);
    assert.match(missing.body.error.message, /no route POST \/responses .*base_url must end in \/v1/);
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
