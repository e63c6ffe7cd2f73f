import type { ExchangeEndEvent, TrafficEvent } from '../../src/core/traffic/traffic-event.ts';
import { postResponses, readSseEvents, type SseExchange } from './bridge-harness.ts';

/**
 * What Codex saw for one request (an SSE stream or a JSON body) and what the panel and the log saw
 * (the exchange's `exchange-end` traffic event), for fault tests.
 */
export type JsonAnswer = { error?: { message: string; code: string | null; type: string } } & Record<string, unknown>;

export type CodexOutcome =
  | { kind: 'stream'; status: number; events: SseExchange['events']; terminal: SseExchange['events'][number] }
  | { kind: 'json'; status: number; retryAfter: string | null; body: JsonAnswer };

export interface ObservedExchange {
  codex: CodexOutcome;
  end: ExchangeEndEvent;
}

/** Guard only: a fault test that hangs fails here instead of stalling the whole run. */
const HANG_GUARD_MS = 20_000;

export async function runExchange(
  bridge: { url: string; traffic: readonly TrafficEvent[] },
  body: unknown,
  headers: Record<string, string> = {},
  options: { guardMs?: number } = {},
): Promise<ObservedExchange> {
  const endsBefore = bridge.traffic.filter((event) => event.type === 'exchange-end').length;
  // A real engine on a busy machine may need a longer guard than a mock (`guardMs`).
  const response = await postResponses(bridge.url, body, { headers, signal: AbortSignal.timeout(options.guardMs ?? HANG_GUARD_MS) });
  let codex: CodexOutcome;
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const exchange = await readSseEvents(response);
    const terminal = exchange.events.at(-1);
    if (!terminal) throw new Error('the stream carried no event at all');
    codex = { kind: 'stream', status: exchange.status, events: exchange.events, terminal };
  } else {
    codex = { kind: 'json', status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as JsonAnswer };
  }
  const end = await waitForExchangeEnd(bridge.traffic, endsBefore);
  return { codex, end };
}

/** The exchange-end following the first `endsBefore` ones; the bridge emits it right after the last byte. */
export async function waitForExchangeEnd(traffic: readonly TrafficEvent[], endsBefore: number): Promise<ExchangeEndEvent> {
  const deadline = Date.now() + HANG_GUARD_MS;
  for (;;) {
    const ends = traffic.filter((event): event is ExchangeEndEvent => event.type === 'exchange-end');
    const end = ends[endsBefore];
    if (end) return end;
    if (Date.now() > deadline) throw new Error('no exchange-end traffic event: the exchange is invisible in the panel and the log');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Polls a condition the bridge reaches asynchronously (an upstream abort seen by the mock); a guard, not a timing assertion. */
export async function waitUntil(condition: () => boolean, what: string, guardMs = HANG_GUARD_MS): Promise<void> {
  const deadline = Date.now() + guardMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The `response.failed` error of a stream, or throws naming the terminal event it ended with instead. */
export function failedStreamError(codex: CodexOutcome): { code: string; message: string } {
  if (codex.kind !== 'stream') throw new Error(`expected a stream, got HTTP ${codex.status} ${JSON.stringify(codex.body)}`);
  if (codex.terminal.type !== 'response.failed') throw new Error(`expected response.failed, got ${codex.terminal.type}`);
  const response = codex.terminal.response as { error: { code: string; message: string } };
  return response.error;
}

/** The JSON error of a non-stream answer, or throws. */
export function jsonError(codex: CodexOutcome): { status: number; retryAfter: string | null; code: string | null; message: string; type: string } {
  if (codex.kind !== 'json' || !codex.body.error) throw new Error(`expected a JSON error, got ${codex.kind === 'stream' ? `a stream ending in ${codex.terminal.type}` : JSON.stringify(codex.body)}`);
  return { status: codex.status, retryAfter: codex.retryAfter, ...codex.body.error };
}
