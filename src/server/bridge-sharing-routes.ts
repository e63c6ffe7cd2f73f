import { createHmac } from 'node:crypto';
import type { Request, Response } from 'express';
import { InvalidRequestError } from '../core/errors.ts';
import { encodeSseComment, encodeSseEvent } from '../core/sse/sse-encoder.ts';
import type { TrafficEvent, TrafficListener } from '../core/traffic/traffic-event.ts';

/**
 * Every VS Code window runs the extension in its own extension host, but Codex's config names one
 * port. A second window finds the bridge already listening there and attaches to it instead of
 * starting another one; these two routes (behind the bridge token like every /v1 route) are how.
 *
 * - `GET /v1/bridge/identity?challenge=<hex>` proves which bridge this is: the answer carries
 *   HMAC-SHA256(token, challenge), which only a process that knows the token can compute, so a foreign
 *   program on the port cannot pass for the bridge by answering the right JSON.
 * - `GET /v1/bridge/traffic` streams every traffic event as SSE, so the attached window's panel shows
 *   the same live round trips. The stream ends when the bridge stops: the attached window takes over.
 */

export const BRIDGE_IDENTITY_PATH = '/v1/bridge/identity';
export const BRIDGE_TRAFFIC_PATH = '/v1/bridge/traffic';

export const BRIDGE_NAME = 'freeform-bridge';

/** The identity answer; `proof` is null when the bridge runs without a token. */
export interface BridgeIdentity {
  name: typeof BRIDGE_NAME;
  version: string;
  instanceId: string;
  pid: number;
  backend: string;
  proof: string | null;
}

export function computeIdentityProof(token: string, challenge: string, port: number): string {
  return createHmac('sha256', token).update(`${BRIDGE_NAME} identity\n${port}\n${challenge}`, 'utf8').digest('hex');
}

export interface BridgeSharingDependencies {
  version: string;
  instanceId: string;
  backendUrl: string;
  getToken: () => string | null;
  subscribeTraffic: (listener: TrafficListener) => () => void;
  shutdownSignal?: AbortSignal;
}

const CHALLENGE_PATTERN = /^[0-9a-f]{16,128}$/;
/** A comment now and then keeps idle-connection reapers (proxies, OS) from cutting a quiet stream. */
const TRAFFIC_HEARTBEAT_MS = 15_000;

export function createBridgeIdentityHandler(dependencies: BridgeSharingDependencies) {
  return function handleIdentity(request: Request, response: Response): void {
    const challenge = request.query.challenge;
    if (typeof challenge !== 'string' || !CHALLENGE_PATTERN.test(challenge)) {
      throw new InvalidRequestError('challenge must be 16 to 128 lowercase hex digits', { param: 'challenge' });
    }
    const token = dependencies.getToken();
    const identity: BridgeIdentity = {
      name: BRIDGE_NAME,
      version: dependencies.version,
      instanceId: dependencies.instanceId,
      pid: process.pid,
      backend: dependencies.backendUrl,
      proof: token === null ? null : computeIdentityProof(token, challenge, request.socket.localPort ?? 0),
    };
    response.status(200).json(identity);
  };
}

export function createBridgeTrafficHandler(dependencies: BridgeSharingDependencies) {
  return function handleTraffic(request: Request, response: Response): void {
    // Subscribed before the headers go out: a client that sees the stream open misses no event.
    const unsubscribe = dependencies.subscribeTraffic((event: TrafficEvent) => {
      response.write(encodeSseEvent(event as unknown as { type: string } & Record<string, unknown>));
    });
    response.status(200).set({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    response.flushHeaders();
    response.write(encodeSseComment(`${BRIDGE_NAME} ${dependencies.instanceId}`));
    const heartbeat = setInterval(() => response.write(encodeSseComment('heartbeat')), TRAFFIC_HEARTBEAT_MS);
    heartbeat.unref();
    const stop = (): void => {
      clearInterval(heartbeat);
      unsubscribe();
      dependencies.shutdownSignal?.removeEventListener('abort', end);
    };
    // Ending the stream on shutdown (rather than a cut socket) tells the attached window at once.
    const end = (): void => {
      stop();
      response.end();
    };
    dependencies.shutdownSignal?.addEventListener('abort', end, { once: true });
    request.on('close', stop);
  };
}
