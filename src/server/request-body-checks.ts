import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { InvalidRequestError } from '../core/errors.ts';
import { parseRequestBody, type ParsedRequestBody } from '../core/outbound/outbound-encoding.ts';
import { exceedsJsonNestingDepth } from '../core/parse-json.ts';
import type { ExchangeLocals } from './responses-exchange.ts';

/**
 * The `POST /v1/responses` body, from the request's bytes to the parsed request: its media type, read
 * (decompressed, within the size limit), its charset, UTF-8, JSON and nesting checked (bad input).
 * Each failure becomes a specific 4xx through the failure map (failure-map.ts); none reaches lowering.
 */

/**
 * Deeper than any real request (tool parameter schemas nest a few dozen levels at most) and far below
 * where `JSON.stringify` (≈4000 levels on Node's default stack) or a Python backend's parser (≈1000)
 * overflow.
 */
export const MAX_JSON_NESTING_DEPTH = 512;

/** The largest body the bridge reads, decompressed: Codex resends the whole history on every turn. */
export const MAX_REQUEST_BODY_BYTES = 64 * 1024 * 1024;

/** The `type` the body-parser error carries, so the failure map can name the problem. */
export const INVALID_UTF8_ERROR_TYPE = 'encoding.invalid_utf8';

/**
 * Body-parser failures carry a `type` string and an HTTP status; the checks here make their own body
 * errors the same way (createBodyError), so all map to the same answers.
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

export function createInvalidUtf8Error(): Error {
  return createBodyError(INVALID_UTF8_ERROR_TYPE, 400, 'request body is not valid UTF-8');
}

function createTooLargeError(): Error {
  return createBodyError('entity.too.large', 413, `request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes`);
}

/** The body's bytes as they arrive: the request itself, or a decompressor it is piped into. */
function openBodyStream(request: IncomingMessage): Readable {
  const encoding = (request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  switch (encoding) {
    case 'identity':
      return request;
    case 'gzip':
    case 'x-gzip':
      return request.pipe(createGunzip());
    case 'deflate':
      return request.pipe(createInflate());
    case 'br':
      return request.pipe(createBrotliDecompress());
    default:
      throw createBodyError('encoding.unsupported', 415, `unsupported content encoding "${encoding}"`);
  }
}

/**
 * Reads the whole body as bytes, decompressed, and refuses it as soon as it is known to exceed the
 * limit (the header, or the bytes read, so a compressed bomb is cut off too). A refused body is
 * drained, not kept: the client still gets its answer on a connection that stays usable. Once the body
 * is read or refused no listener keeps what was read: the request outlives its body by the whole
 * exchange.
 */
export function readRequestBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // A compressed body is never smaller than what it says it sent.
    if (Number(request.headers['content-length']) > MAX_REQUEST_BODY_BYTES) {
      request.resume();
      reject(createTooLargeError());
      return;
    }
    let source: Readable;
    try {
      source = openBodyStream(request);
    } catch (error) {
      request.resume();
      reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    let chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: Error | null): void => {
      if (settled) return;
      settled = true;
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      chunks = [];
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onSourceError);
      request.off('error', onRequestError);
      if (source !== request) {
        request.unpipe();
        source.destroy();
      }
      if (error === null) {
        resolve(body);
        return;
      }
      request.resume();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MAX_REQUEST_BODY_BYTES) finish(createTooLargeError());
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish(null);
    const onRequestError = (error: Error): void => finish(createBodyError('request.aborted', 400, `request body could not be read: ${error.message}`));
    const onSourceError = (error: Error): void =>
      finish(source === request ? createBodyError('request.aborted', 400, `request body could not be read: ${error.message}`) : createBodyError('unreadable_body', 400, `request body could not be read (check its Content-Encoding): ${error.message}`));
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onSourceError);
    if (source !== request) request.on('error', onRequestError);
  });
}

/** A UTF-8 byte order mark, dropped before parsing as a JSON body parser drops it. */
function startsWithByteOrderMark(bytes: Buffer): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/**
 * The body as UTF-8 bytes. Codex sends UTF-8 and names no charset. Another UTF charset (UTF-16) is
 * decoded first; any other charset is refused, as JSON allows only UTF encodings. A UTF-8 body
 * holding invalid byte sequences is refused too: decoding it anyway would silently turn the bad
 * bytes into U+FFFD inside code and patches replayed to the model, so the bridge answers 400 instead
 * of guessing.
 */
function readUtf8Bytes(bytes: Buffer, charset: string | null): Buffer {
  if (charset === null || /^utf-?8$/i.test(charset)) {
    if (!isUtf8(bytes)) throw createInvalidUtf8Error();
    return bytes;
  }
  let decoder: TextDecoder | null = null;
  try {
    if (/^utf-/i.test(charset)) decoder = new TextDecoder(charset, { fatal: true });
  } catch {
    // An encoding TextDecoder does not know: refused below.
  }
  if (decoder === null) throw createBodyError('charset.unsupported', 415, `unsupported charset "${charset.toUpperCase()}"`);
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw createBodyError('entity.parse.failed', 400, `the body is not valid ${charset.toUpperCase()}`);
  }
  return Buffer.from(text, 'utf8');
}

/**
 * The request body, parsed along the outbound encoding's path (outbound-encoding.ts): a large body's
 * long strings are carried as bytes. `bytes` is undefined for a request without a body; an empty body
 * is `{}`, and validation then names the missing fields.
 */
export function parseJsonRequestBody(bytes: Buffer | undefined, charset: string | null): ParsedRequestBody {
  const utf8 = readUtf8Bytes(bytes ?? Buffer.alloc(0), charset);
  let parsed: ParsedRequestBody;
  try {
    parsed = parseRequestBody(utf8, startsWithByteOrderMark(utf8) ? 3 : 0);
  } catch (error) {
    throw createBodyError('entity.parse.failed', 400, error instanceof Error ? error.message : String(error));
  }
  // A long string is one level deep, like the placeholder that stood for it: the same depth as the skeleton's.
  assertJsonNestingDepth(parsed.body);
  return parsed;
}

/** A body nested deeper than MAX_JSON_NESTING_DEPTH is a 400, not a stack overflow later. */
export function assertJsonNestingDepth(body: unknown): void {
  if (exceedsJsonNestingDepth(body, MAX_JSON_NESTING_DEPTH)) {
    throw new InvalidRequestError(`request body nests JSON more than ${MAX_JSON_NESTING_DEPTH} levels deep; freeform-bridge refuses it`, {
      code: 'json_too_deeply_nested',
    });
  }
}

/** `application/json`, whatever its parameters. */
const JSON_MEDIA_TYPE = /^\s*application\/json\s*(?:;|$)/i;

/** The charset a Content-Type names, or null. */
function readCharset(contentType: string | undefined): string | null {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return match?.[1] ?? null;
}

/**
 * The body middleware of `POST /v1/responses`: the request's JSON body, parsed, in `request.body`
 * (a ParsedRequestBody), or the failure passed on to the error middleware. The security middleware
 * runs first, so nothing of a refused request's body is read.
 */
export async function readJsonRequestBody(request: Request, response: Response, next: NextFunction): Promise<void> {
  const contentType = request.headers['content-type'];
  try {
    if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType)) {
      request.resume();
      throw new InvalidRequestError(`expected a JSON body with Content-Type: application/json, got '${contentType ?? '(none)'}'`, { code: 'unsupported_media_type' });
    }
    const bytes = await readRequestBody(request);
    // The decompressed size: a compressed or chunked request's Content-Length does not say it.
    (response.locals as ExchangeLocals).requestBytes = bytes.length;
    request.body = parseJsonRequestBody(bytes, readCharset(contentType));
  } catch (error) {
    next(error);
    return;
  }
  next();
}
