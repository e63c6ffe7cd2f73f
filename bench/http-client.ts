/**
 * The benchmark's client side: undici with keep-alive agents, bodies prepared once as bytes, and
 * timings on the monotonic clock (`process.hrtime`), which the mock child reads too.
 */
import { Agent, request, type Dispatcher } from 'undici';
import { EVENT_TOKEN_PATTERN, LONG_ANSWER_EVENTS } from './answers.ts';
import { monotonicMilliseconds } from './child-protocol.ts';

export function createClientAgent(connections: number): Agent {
  // Below the mock's 5 s idle close (vLLM's), like the bridge's own upstream agent.
  return new Agent({ connections, pipelining: 1, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000, headersTimeout: 0, bodyTimeout: 0 });
}

export interface Endpoint {
  /** Full URL (`…/v1/chat/completions` or `…/v1/responses`). */
  url: string;
  dispatcher: Dispatcher;
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export interface TimedResponse {
  status: number;
  elapsedMs: number;
  bytes: number;
}

/** One POST, body read to the end (not parsed: both sides pay the same, nothing). */
export async function postTimed(endpoint: Endpoint, body: Buffer): Promise<TimedResponse> {
  const started = monotonicMilliseconds();
  const response = await request(endpoint.url, { method: 'POST', headers: JSON_HEADERS, body, dispatcher: endpoint.dispatcher });
  let bytes = 0;
  for await (const chunk of response.body) bytes += (chunk as Buffer).length;
  return { status: response.statusCode, elapsedMs: monotonicMilliseconds() - started, bytes };
}

/** One POST whose body is returned as text (for checking answers outside the timed loops). */
export async function postForText(endpoint: Endpoint, body: Buffer): Promise<{ status: number; text: string }> {
  const response = await request(endpoint.url, { method: 'POST', headers: JSON_HEADERS, body, dispatcher: endpoint.dispatcher });
  return { status: response.statusCode, text: await response.body.text() };
}

export type StreamSide = 'direct' | 'bridge';

/** The first frame that carries answer text: a Chat `content` delta, or a Responses `output_text.delta`. */
const FIRST_DELTA_PATTERN: Record<StreamSide, RegExp> = {
  direct: /"content":"[^"]/,
  bridge: /"type":"response\.output_text\.delta"/,
};

export interface TimedStream {
  status: number;
  startedAt: number;
  /** Request start → first answer text, milliseconds. */
  firstDeltaMs: number;
  /** Request start → end of the body. */
  totalMs: number;
  /** Monotonic arrival time of each ` tNNNN` event token (NaN when not seen); empty unless tracked. */
  tokenArrivals: Float64Array;
}

/**
 * One streaming POST, timing the first answer text and, when asked, the arrival of each numbered
 * event token. Frames are scanned as text with two regular expressions and never parsed, so the
 * client adds the same small cost to both sides.
 */
export async function postStreamTimed(endpoint: Endpoint, body: Buffer, side: StreamSide, trackTokens: boolean): Promise<TimedStream> {
  const tokenArrivals = new Float64Array(trackTokens ? LONG_ANSWER_EVENTS : 0).fill(Number.NaN);
  const firstDeltaPattern = FIRST_DELTA_PATTERN[side];
  const startedAt = monotonicMilliseconds();
  const response = await request(endpoint.url, { method: 'POST', headers: JSON_HEADERS, body, dispatcher: endpoint.dispatcher });
  let firstDeltaAt = Number.NaN;
  // A token or marker may straddle two reads: keep the tail of the previous one.
  let carry = '';
  for await (const chunk of response.body) {
    const arrivedAt = monotonicMilliseconds();
    const text = carry + (chunk as Buffer).toString('latin1');
    if (Number.isNaN(firstDeltaAt) && firstDeltaPattern.test(text)) firstDeltaAt = arrivedAt;
    if (trackTokens) {
      EVENT_TOKEN_PATTERN.lastIndex = 0;
      for (let match = EVENT_TOKEN_PATTERN.exec(text); match !== null; match = EVENT_TOKEN_PATTERN.exec(text)) {
        const index = Number(match[1]);
        if (index < tokenArrivals.length && Number.isNaN(tokenArrivals[index] as number)) tokenArrivals[index] = arrivedAt;
      }
    }
    carry = text.slice(-48);
  }
  return { status: response.statusCode, startedAt, firstDeltaMs: firstDeltaAt - startedAt, totalMs: monotonicMilliseconds() - startedAt, tokenArrivals };
}
