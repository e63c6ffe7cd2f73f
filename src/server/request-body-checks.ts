import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { InvalidRequestError } from '../core/errors.ts';
import { exceedsJsonNestingDepth } from '../core/parse-json.ts';

/**
 * Checks on the `POST /v1/responses` body beyond what express.json does (bad input). Each
 * failure becomes a specific 4xx through the failure map (failure-map.ts); none reaches lowering.
 */

/**
 * Deeper than any real request (tool parameter schemas nest a few dozen levels at most) and far below
 * where `JSON.stringify` (≈4000 levels on Node's default stack) or a Python backend's parser (≈1000)
 * overflow.
 */
export const MAX_JSON_NESTING_DEPTH = 512;

/** The largest body either request path reads: Codex resends the whole history on every turn. */
export const MAX_REQUEST_BODY_BYTES = 64 * 1024 * 1024;

/** The `type` the body-parser error carries, so the failure map can name the problem. */
export const INVALID_UTF8_ERROR_TYPE = 'encoding.invalid_utf8';

/**
 * Body-parser failures carry a `type` string and an HTTP status (express.json); the fast path makes
 * its own body errors the same way (createBodyError), so both map to the same answers.
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

/**
 * `express.json`'s `verify` hook: refuses a UTF-8 body holding invalid byte sequences. Codex always
 * sends valid UTF-8; decoding anyway would silently turn the bad bytes into U+FFFD inside code and
 * patches replayed to the model, so the bridge answers 400 instead of guessing.
 */
export function verifyUtf8Body(_request: IncomingMessage, _response: unknown, body: Buffer, encoding: string | null): void {
  if (encoding !== null && !/^utf-?8$/i.test(encoding)) return;
  if (!isUtf8(body)) throw createInvalidUtf8Error();
}

/** The error both request paths refuse invalid UTF-8 with (the fast path finds it while decoding). */
export function createInvalidUtf8Error(): Error {
  return createBodyError(INVALID_UTF8_ERROR_TYPE, 400, 'request body is not valid UTF-8');
}

/** A body nested deeper than MAX_JSON_NESTING_DEPTH is a 400, not a stack overflow later. */
export function assertJsonNestingDepth(body: unknown): void {
  if (exceedsJsonNestingDepth(body, MAX_JSON_NESTING_DEPTH)) {
    throw new InvalidRequestError(`request body nests JSON more than ${MAX_JSON_NESTING_DEPTH} levels deep; freeform-bridge refuses it`, {
      code: 'json_too_deeply_nested',
    });
  }
}

/** Runs after express.json. */
export function rejectDeeplyNestedBody(request: Request, _response: Response, next: NextFunction): void {
  assertJsonNestingDepth(request.body);
  next();
}
