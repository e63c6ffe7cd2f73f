import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerRequestError, createBodyError, MAX_REQUEST_BODY_BYTES, reportRejectedExchange, type ErrorAnswerDependencies } from './error-middleware.ts';
import { assertJsonNestingDepth, assertUtf8Body } from './request-body-checks.ts';
import type { ExchangeLocals, ResponsesExchange } from './responses-exchange.ts';
import { sendSecurityRefusal, type SecurityRefusal } from './security.ts';

/**
 * `POST /v1/responses` as Codex sends it — plain `application/json`, no Content-Encoding — served
 * straight from Node's request, without Express's router, body-parser, iconv and type-is on the way
 * (issue #7: together about a tenth of a millisecond per request, on every Codex turn). Anything
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

/** Collects the body, refusing it as soon as it is known to exceed the limit (header or bytes read). */
function readBody(request: IncomingMessage): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (declared > MAX_REQUEST_BODY_BYTES) {
    // Drained, not buffered: the client still gets its 413 on a connection that stays usable.
    request.resume();
    return Promise.reject(tooLargeError());
  }
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    // The request outlives its body by the whole exchange (minutes of streaming): once the body is
    // read or refused, no listener may keep the chunks reachable (issue #7: they doubled the memory
    // each exchange held and left the RSS tens of MB higher after a session of 2 MB requests).
    const stop = (): void => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MAX_REQUEST_BODY_BYTES) {
        stop();
        chunks = [];
        // Drained, not buffered: the client still gets its 413 on a connection that stays usable.
        request.resume();
        reject(tooLargeError());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      chunks = [];
      resolve(body);
    };
    const onError = (error: Error): void => {
      stop();
      chunks = [];
      reject(createBodyError('request.aborted', 400, `request body could not be read: ${error.message}`));
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
  });
}

function parseBody(bytes: Buffer): unknown {
  assertUtf8Body(bytes);
  // express.json answers an empty body with {}; validation then names the missing fields.
  if (bytes.length === 0) return {};
  let text = bytes.toString('utf8');
  // A leading BOM is tolerated, as express.json (through iconv-lite) tolerates it.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw createBodyError('entity.parse.failed', 400, error instanceof Error ? error.message : String(error));
  }
  assertJsonNestingDepth(value);
  return value;
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
    await dependencies.runExchange(parseBody(await readBody(request)), request, response, locals);
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
