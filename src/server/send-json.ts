import type { ServerResponse } from 'node:http';

/**
 * Writes one JSON body, headers and all, in a single call: every JSON answer of the bridge goes
 * through it, so a refusal looks the same wherever it comes from.
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
