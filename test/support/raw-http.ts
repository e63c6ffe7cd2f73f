import { request } from 'node:http';

/**
 * Sends exactly the bytes and headers given (fetch would fix the Host header, re-encode the body or
 * refuse some headers), for tests of hostile and malformed requests.
 */
export interface RawHttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface RawHttpRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** A Buffer is sent as is; an array is sent as separate chunks (chunked transfer encoding, no length). */
  body?: string | Buffer | ReadonlyArray<string | Buffer>;
}

export function sendRawHttpRequest(baseUrl: string, options: RawHttpRequest): Promise<RawHttpResponse> {
  return new Promise((resolve, reject) => {
    const body = options.body;
    const headers: Record<string, string> = { ...options.headers };
    if (typeof body === 'string' || Buffer.isBuffer(body)) headers['content-length'] ??= String(Buffer.byteLength(body));
    const outgoing = request(new URL(options.path, baseUrl), { method: options.method ?? 'POST', headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    if (body === undefined) outgoing.end();
    else if (typeof body === 'string' || Buffer.isBuffer(body)) outgoing.end(body);
    else {
      for (const chunk of body) outgoing.write(chunk);
      outgoing.end();
    }
  });
}

/** The OpenAI error envelope every refusal must use: `{"error":{"message","type","param","code"}}`. */
export interface OpenAiErrorEnvelope {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function parseOpenAiError(text: string): OpenAiErrorEnvelope {
  const value = JSON.parse(text) as unknown;
  if (typeof value !== 'object' || value === null || !('error' in value)) throw new Error(`not an OpenAI error body: ${text.slice(0, 300)}`);
  const error = (value as { error: Record<string, unknown> }).error;
  const keys = Object.keys(error).sort();
  if (keys.join(',') !== 'code,message,param,type') throw new Error(`error body keys are ${keys.join(',')}: ${text.slice(0, 300)}`);
  if (typeof error.message !== 'string' || typeof error.type !== 'string') throw new Error(`error message/type are not strings: ${text.slice(0, 300)}`);
  return value as OpenAiErrorEnvelope;
}
