import type { Request, Response } from 'express';
import { classifyEngineRefusal } from '../core/engine-error.ts';
import { redactSecrets } from '../core/redact-secrets.ts';
import { sendFailure } from './failure-map.ts';
import { MAX_SERVER_INFO_BYTES, type UpstreamClient } from './upstream-client.ts';

/** `GET /v1/models` is proxied so a user can check the bridge sees their backend's model names. */
export function createModelsHandler(upstream: UpstreamClient, getSecrets: () => ReadonlyArray<string | null> = () => []) {
  return async function handleModels(request: Request, response: Response): Promise<void> {
    const abortController = new AbortController();
    response.on('close', () => abortController.abort());
    const upstreamResponse = await upstream.getModels(abortController.signal);
    const text = await upstreamResponse.text(MAX_SERVER_INFO_BYTES, 'model list');
    if (upstreamResponse.status !== 200) {
      // A backend refusing the key may quote it back (as it can on /chat/completions): never pass it on.
      // The body is redacted before the message is cut to length, so a cut never leaves half a key.
      const refusal = classifyEngineRefusal(upstreamResponse.status, redactSecrets(text, getSecrets()), { backendUrl: upstream.baseUrl, model: '(listing models)', retryAfter: null });
      sendFailure(response, { kind: 'engine-refusal', refusal: { ...refusal, message: redactSecrets(refusal.message, getSecrets()) } });
      return;
    }
    response.status(200).type('application/json').send(text);
  };
}
