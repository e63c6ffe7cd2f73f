import type { ServerResponse } from 'node:http';

/**
 * Writes one JSON body, headers and all, in a single call. Both the Express routes and the
 * `POST /v1/responses` fast path (responses-fast-path.ts) answer through it, so a refusal looks the
 * same whichever path served it.
 */
export function sendJson(response: ServerResponse, status: number, body: unknown, headers?: Readonly<Record<string, string>>): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}
