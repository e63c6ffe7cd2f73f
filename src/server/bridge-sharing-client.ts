import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as z from '../core/schema/zod.ts';
import { parseJson } from '../core/parse-json.ts';
import { SseDecoder } from '../core/sse/sse-decoder.ts';
import type { TrafficEvent } from '../core/traffic/traffic-event.ts';
import { readBoundedResponseText } from './read-bounded-response.ts';
import { BRIDGE_IDENTITY_PATH, BRIDGE_NAME, BRIDGE_TRAFFIC_PATH, computeIdentityProof, type BridgeIdentity } from './bridge-sharing-routes.ts';
import { withTimeLimit } from './time-limit.ts';

/**
 * The other side of bridge-sharing-routes.ts: how a VS Code window checks that the program holding
 * its port is a bridge started with the same token, and follows that bridge's traffic.
 */

export type BridgeIdentityCheck = { ours: true; identity: BridgeIdentity } | { ours: false; reason: string };

const identitySchema = z.looseObject({
  name: z.literal(BRIDGE_NAME),
  version: z.string(),
  instanceId: z.string(),
  pid: z.number(),
  backend: z.string(),
  proof: z.nullable(z.string()),
});

const IDENTITY_TIMEOUT_MS = 2_000;

function describeFailure(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${IDENTITY_TIMEOUT_MS / 1000} s`;
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' ? cause.code : error instanceof Error ? error.message : String(error);
}

/** A real identity answer is a few hundred bytes; whatever holds the port may send without end. */
const MAX_IDENTITY_ANSWER_BYTES = 16 * 1024;

/**
 * `url` is the bridge's origin, e.g. http://127.0.0.1:18080. Never throws: a foreign program is an
 * answer too. The token is never sent here: the holder of the port must first prove it knows it, by
 * answering our fresh random challenge (bridge-sharing-routes.ts); only a proven bridge is ever sent
 * the token afterwards.
 */
export async function checkBridgeIdentity(url: string, token: string): Promise<BridgeIdentityCheck> {
  const challenge = randomBytes(32).toString('hex');
  const port = Number(new URL(url).port);
  let response: Response;
  let text: string;
  try {
    // redirect: 'error' — a redirect would send the check somewhere else than the port being checked.
    ({ response, text } = await withTimeLimit(IDENTITY_TIMEOUT_MS, undefined, async (signal) => {
      const answer = await fetch(`${url}${BRIDGE_IDENTITY_PATH}?challenge=${challenge}`, { redirect: 'error', signal });
      return { response: answer, text: await readBoundedResponseText(answer, MAX_IDENTITY_ANSWER_BYTES) };
    }));
  } catch (error) {
    return { ours: false, reason: `it does not answer HTTP (${describeFailure(error)})` };
  }
  if (response.status === 401) return { ours: false, reason: 'it asks for the bridge token before proving it knows it (an older bridge or another program), so it was not sent' };
  if (response.status !== 200) return { ours: false, reason: `it is not a Freeform Bridge (GET ${BRIDGE_IDENTITY_PATH} answered HTTP ${response.status})` };
  const json = parseJson(text);
  const parsed = identitySchema.safeParse(json.success ? json.value : null);
  if (!parsed.success) return { ours: false, reason: `it is not a Freeform Bridge (unexpected answer to ${BRIDGE_IDENTITY_PATH})` };
  const expected = Buffer.from(computeIdentityProof(token, challenge, port), 'hex');
  const presented = Buffer.from(parsed.data.proof ?? '', 'hex');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
    return { ours: false, reason: 'it could not prove it knows the bridge token (a bridge with another token, or a program posing as one); the token was not sent to it' };
  }
  return { ours: true, identity: parsed.data as BridgeIdentity };
}

const TRAFFIC_EVENT_TYPES = new Set(['exchange-start', 'exchange-delta', 'exchange-end', 'exchange-rejected']);

export interface TrafficFollower {
  stop(): void;
}

/**
 * Streams the bridge's traffic events to `onEvent` until the stream ends; `onEnd` hears why (once),
 * unless `stop()` ended it. Frames that are not traffic events are skipped with `onSkipped`.
 */
export function followBridgeTraffic(
  url: string,
  token: string,
  handlers: { onEvent: (event: TrafficEvent) => void; onEnd: (reason: string) => void; onSkipped?: (detail: string) => void; onOpen?: () => void },
): TrafficFollower {
  const controller = new AbortController();
  let ended = false;
  const finish = (reason: string): void => {
    if (ended || controller.signal.aborted) return;
    ended = true;
    handlers.onEnd(reason);
  };
  const take = (frames: ReturnType<SseDecoder['push']>): void => {
    for (const frame of frames) {
      const json = parseJson(frame.data);
      const value = json.success ? json.value : null;
      const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
      const exchangeId = typeof value === 'object' && value !== null ? (value as { exchangeId?: unknown }).exchangeId : undefined;
      if (typeof type !== 'string' || !TRAFFIC_EVENT_TYPES.has(type) || typeof exchangeId !== 'string') {
        handlers.onSkipped?.(`a traffic frame that is not a traffic event: ${frame.data.slice(0, 200)}`);
        continue;
      }
      handlers.onEvent(value as TrafficEvent);
    }
  };
  void (async () => {
    try {
      const response = await fetch(`${url}${BRIDGE_TRAFFIC_PATH}`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: controller.signal });
      if (response.status !== 200 || !response.body) {
        await response.body?.cancel();
        finish(`GET ${BRIDGE_TRAFFIC_PATH} answered HTTP ${response.status}`);
        return;
      }
      handlers.onOpen?.();
      const decoder = new SseDecoder();
      for await (const chunk of response.body) take(decoder.push(chunk as Uint8Array));
      take(decoder.end());
      finish('the bridge ended the stream (it stopped)');
    } catch (error) {
      finish(`the connection to the bridge broke (${describeFailure(error)})`);
    }
  })();
  return {
    stop() {
      controller.abort();
    },
  };
}
