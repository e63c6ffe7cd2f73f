import { readFileSync } from 'node:fs';
import { parseJson } from '../../src/core/parse-json.ts';
import { SseDecoder } from '../../src/core/sse/sse-decoder.ts';
import type { TrafficEvent } from '../../src/core/traffic/traffic-event.ts';
import { fixturePath } from './fixtures.ts';
import { startBridgeServer, type BridgeServerConfig, type RunningBridge } from '../../src/server/start-server.ts';


export function readCapture(name: string): Record<string, unknown> {
  const parsed = parseJson(readFileSync(fixturePath('captures', name), 'utf8'));
  if (!parsed.success || typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) throw new Error(`capture ${name} is not a JSON object`);
  return parsed.value as Record<string, unknown>;
}

export function readFixtureText(relativePath: string): string {
  return readFileSync(fixturePath(relativePath), 'utf8');
}

export interface StartedBridge extends RunningBridge {
  traffic: TrafficEvent[];
}

export async function startTestBridge(config: BridgeServerConfig): Promise<StartedBridge> {
  const traffic: TrafficEvent[] = [];
  const bridge = await startBridgeServer({
    ...config,
    onTraffic: (event) => {
      traffic.push(event);
      config.onTraffic?.(event);
    },
  });
  return Object.assign(bridge, { traffic });
}

export interface SseExchange {
  status: number;
  headers: Headers;
  events: Array<Record<string, unknown> & { type: string }>;
}

/** Reads a whole SSE response into parsed event objects (fails the test on an unparsable frame). */
export async function readSseEvents(response: Response): Promise<SseExchange> {
  const decoder = new SseDecoder();
  const events: SseExchange['events'] = [];
  const take = (frames: ReturnType<SseDecoder['push']>): void => {
    for (const frame of frames) {
      const parsed = parseJson(frame.data);
      if (!parsed.success) throw new Error(`bridge sent a frame that is not JSON: ${frame.data}`);
      events.push(parsed.value as SseExchange['events'][number]);
    }
  };
  if (response.body) {
    for await (const chunk of response.body) take(decoder.push(chunk as Uint8Array));
  }
  take(decoder.end());
  return { status: response.status, headers: response.headers, events };
}

export function postResponses(
  bridgeUrl: string,
  body: unknown,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${bridgeUrl}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...init.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: init.signal,
  });
}

export function itemsDone(events: SseExchange['events']): Array<Record<string, unknown>> {
  return events.filter((event) => event.type === 'response.output_item.done').map((event) => event.item as Record<string, unknown>);
}

export function terminalEvent(events: SseExchange['events']): SseExchange['events'][number] {
  const last = events.at(-1);
  if (!last) throw new Error('no events');
  return last;
}

export { findFreePort } from '../../src/server/free-port.ts';
