import { isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { InvalidRequestError } from '../core/errors.ts';
import { parseRequestBody, type ParsedRequestBody } from '../core/outbound-encoding.ts';
import { exceedsJsonNestingDepth } from '../core/parse-json.ts';

/**
 * The `POST /v1/responses` body from the bytes Express's raw body reader gives (decompressed, within
 * the size limit) to the parsed request: its charset, UTF-8, JSON and nesting checked (bad input).
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
