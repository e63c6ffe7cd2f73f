import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseRequestBody } from '../core/outbound-encoding.ts';
import { answerRequestError, reportRejectedExchange, type ErrorAnswerDependencies } from './error-middleware.ts';
import { assertJsonNestingDepth, createBodyError, createInvalidUtf8Error, MAX_REQUEST_BODY_BYTES } from './request-body-checks.ts';
import type { ExchangeLocals, ResponsesExchange } from './responses-exchange.ts';
import { sendSecurityRefusal, type SecurityRefusal } from './security.ts';

/**
 * `POST /v1/responses` as Codex sends it — plain `application/json`, no Content-Encoding — served
 * straight from Node's request, without Express's router, body-parser, iconv and type-is on the way
 * (together about a tenth of a millisecond per request, on every Codex turn, `npm run bench`). Anything
 * else (a compressed body, another charset, a query string, a wrong content type) goes to the Express
 * app, which answers it exactly as before; the checks and the error answers are shared, so both
 * paths refuse the same requests with the same bodies.
 */

/** `application/json`, optionally with a UTF-8 charset: the only form the fast path reads itself. */
const PLAIN_JSON_CONTENT_TYPE = /^application\/json\s*(?:;\s*charset\s*=\s*(?:"utf-?8"|utf-?8)\s*)?$/i;

export function isPlainJsonResponsesPost(request: IncomingMessage): boolean {
  if (request.method !== 'POST' || request.url !== '/v1/responses') return false;
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  const contentType = request.headers['content-type'];
  return contentType !== undefined && PLAIN_JSON_CONTENT_TYPE.test(contentType);
}

function tooLargeError(): Error {
  return createBodyError('entity.too.large', 413, `request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes`);
}

/** A UTF-8 byte order mark, dropped before parsing as express.json (through iconv-lite) drops it. */
function startsWithByteOrderMark(bytes: Buffer): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/** A body read whole and checked to be UTF-8; its JSON starts at `start` (after a byte order mark). */
interface BodyBytes {
  bytes: Buffer;
  start: number;
}

/** From this declared size on, the body is copied into one buffer as it arrives (readBody). */
const COPY_IN_PLACE_FROM_BYTES = 256 * 1024;

/**
 * Reads the body as bytes and checks that they are UTF-8, in one pass that costs under a millisecond.
 * The text is decoded once, whole, afterwards: about twice as fast as decoding each piece as it
 * arrives (a streaming decoder cannot use the bulk path: measured 24 against 50 ms for a 10 MB history
 * with non-ASCII text), and a large body's long strings are not decoded at all. Refuses as soon as the
 * body is known to exceed the limit (header or bytes read).
 */
function readBody(request: IncomingMessage): Promise<BodyBytes> {
  const declared = Number(request.headers['content-length']);
  if (declared > MAX_REQUEST_BODY_BYTES) {
    // Drained, not buffered: the client still gets its 413 on a connection that stays usable.
    request.resume();
    return Promise.reject(tooLargeError());
  }
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    // A large body that says its size is copied into place as it arrives, while the rest is still on
    // its way, instead of all at once after its last byte (about 5 ms of a 10 MB session's latency on
    // the bench machine), and no chunk is kept. Node's parser ends a body at its Content-Length, so
    // the bytes never overrun the buffer; a shorter body is an aborted request.
    let whole: Buffer | null = Number.isSafeInteger(declared) && declared >= COPY_IN_PLACE_FROM_BYTES ? Buffer.allocUnsafe(declared) : null;
    // The request outlives its body by the whole exchange (minutes of streaming): once the body is
    // read or refused, no listener may keep what was read reachable (measured: kept chunks doubled the
    // memory each exchange held and left the RSS tens of MB higher after a session of 2 MB requests).
    const stop = (): void => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      chunks = [];
      whole = null;
    };
    const refuse = (error: Error): void => {
      stop();
      // Drained, not buffered: the client still gets its answer on a connection that stays usable.
      request.resume();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      const at = size;
      size += chunk.length;
      if (size > MAX_REQUEST_BODY_BYTES) {
        refuse(tooLargeError());
        return;
      }
      if (whole !== null && size > whole.length) {
        // More than the header said (Node's parser does not let that happen): pieces from here on.
        chunks = [whole.subarray(0, at)];
        whole = null;
      }
      if (whole !== null) chunk.copy(whole, at);
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      const body = whole !== null ? whole.subarray(0, size) : chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      stop();
      if (!isUtf8(body)) {
        reject(createInvalidUtf8Error());
        return;
      }
      resolve({ bytes: body, start: startsWithByteOrderMark(body) ? 3 : 0 });
    };
    const onError = (error: Error): void => {
      stop();
      reject(createBodyError('request.aborted', 400, `request body could not be read: ${error.message}`));
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
  });
}

/** Parsed along the outbound encoding's path (outbound-encoding.ts): a large body's long strings are carried as bytes. */
function parseBody(body: BodyBytes, locals: ExchangeLocals): unknown {
  let parsed: ReturnType<typeof parseRequestBody>;
  try {
    parsed = parseRequestBody(body.bytes, body.start);
  } catch (error) {
    throw createBodyError('entity.parse.failed', 400, error instanceof Error ? error.message : String(error));
  }
  // A long string is one level deep, like the placeholder that stood for it: the same depth as the skeleton's.
  assertJsonNestingDepth(parsed.body);
  if (parsed.largeStrings !== null) locals.largeStrings = parsed.largeStrings;
  return parsed.body;
}

export interface ResponsesFastPathDependencies extends ErrorAnswerDependencies {
  runExchange: ResponsesExchange;
  checkSecurity: (request: IncomingMessage, path: string) => SecurityRefusal | null;
}

/** Returns false when the request is not one it serves; the caller hands it to the Express app. */
export function createResponsesFastPath(dependencies: ResponsesFastPathDependencies): (request: IncomingMessage, response: ServerResponse) => boolean {
  const serve = async (request: IncomingMessage, response: ServerResponse, locals: ExchangeLocals): Promise<void> => {
    // No local holds the parsed body: the exchange drops it once lowered, and a 10 MB history must
    // not stay reachable from this frame until the answer ends.
    const read = await readBody(request);
    locals.requestBytes = read.bytes.length;
    // Returned, not awaited: this frame ends here, so the body's bytes it holds are not kept alive
    // through a generation that may last minutes.
    return dependencies.runExchange(parseBody(read, locals), request, response, locals);
  };
  return (request, response) => {
    if (!isPlainJsonResponsesPost(request)) return false;
    const refusal = dependencies.checkSecurity(request, '/v1/responses');
    if (refusal) {
      // Nothing of the body is read: a refused request costs nothing. The panel still shows it: a
      // Codex profile with a stale token is otherwise hard to tell from a bridge that is down.
      request.resume();
      sendSecurityRefusal(response, refusal);
      reportRejectedExchange(dependencies.onTraffic, refusal.status, refusal);
      return true;
    }
    const locals: ExchangeLocals = {};
    serve(request, response, locals).catch((error: unknown) => {
      answerRequestError(error, { path: '/v1/responses', response, locals }, dependencies);
    });
    return true;
  };
}
