import { Agent, request } from 'undici';
import { SseDecoder } from '../src/core/sse/sse-decoder.ts';
import type { ExchangeOutcome } from '../src/core/traffic/traffic-event.ts';
import { createRandom } from './deterministic-random.ts';
import { SOAK_PATCH } from './soak-backend.ts';
import { createRequestBody, pickScenario, type Scenario } from './soak-workload.ts';

/*
 * The soak's simulated Codex sessions: what each turn sends, what it must see, and the sessions that
 * send them. Shared by the soak test (soak.test.ts), which asserts on them, and the benchmark's memory
 * phase (bench/soak-memory.ts), which measures the bridge's RSS through the same load.
 */

export const SESSIONS = 16;
/** The seed of the sessions' turns unless the soak test is given SOAK_SEED; the bench always uses it. */
export const DEFAULT_SEED = 8;

/** What Codex saw, reduced to what a scenario is checked against. */
export interface Observed {
  httpStatus: number;
  terminal: string | null;
  errorCode: string | null;
  message: string;
  items: Array<Record<string, unknown>>;
  keepalives: number;
  aborted: boolean;
}

type Check = (observed: Observed, stream: boolean) => string | null;

const expectCompleted =
  (verify?: (items: Array<Record<string, unknown>>) => string | null): Check =>
  (observed, stream) => {
    if (observed.httpStatus !== 200) return `HTTP ${observed.httpStatus}: ${observed.message}`;
    const expected = stream ? 'response.completed' : 'completed';
    if (observed.terminal !== expected) return `ended ${String(observed.terminal)}: ${observed.message}`;
    return verify ? verify(observed.items) : null;
  };

/** A failure Codex sees clearly: the HTTP status before the stream was committed, response.failed after. */
const expectFailure =
  (jsonStatus: number, code: string, message: RegExp): Check =>
  (observed, stream) => {
    if (!message.test(observed.message)) return `message ${JSON.stringify(observed.message)} does not match ${String(message)}`;
    if (observed.httpStatus === jsonStatus && observed.errorCode === code) return null;
    // A stream whose backend answered after the grace window: the same error as response.failed.
    if (stream && observed.httpStatus === 200 && observed.terminal === 'response.failed') return null;
    return `HTTP ${observed.httpStatus} ${String(observed.terminal)} ${String(observed.errorCode)}`;
  };

const customCallKeepsPayload = (items: Array<Record<string, unknown>>): string | null => {
  const call = items.find((item) => item.type === 'custom_tool_call');
  if (call?.name !== 'apply_patch') return `no apply_patch call in ${JSON.stringify(items).slice(0, 200)}`;
  // The qwen3_coder parser drops one trailing newline.
  return call.input === SOAK_PATCH.replace(/\n$/, '') ? null : `payload changed: ${JSON.stringify(call.input)}`;
};

export const CHECKS: Readonly<Record<Scenario, { check: Check; logOutcome: ExchangeOutcome }>> = {
  text: { check: expectCompleted(), logOutcome: 'completed' },
  'custom-call': { check: expectCompleted(customCallKeepsPayload), logOutcome: 'completed' },
  'parallel-calls': {
    check: expectCompleted((items) => customCallKeepsPayload(items) ?? (items.some((item) => item.type === 'function_call' && item.name === 'exec_command') ? null : 'no exec_command call')),
    logOutcome: 'completed',
  },
  'slow-chunks': { check: expectCompleted(), logOutcome: 'completed' },
  'silent-prefill': { check: expectCompleted(), logOutcome: 'completed' },
  'truncated-call': {
    check: (observed, stream) => {
      if (observed.terminal !== (stream ? 'response.incomplete' : 'incomplete')) return `ended ${String(observed.terminal)}`;
      return observed.items.some((item) => item.type === 'custom_tool_call') ? 'a truncated call was delivered' : null;
    },
    logOutcome: 'incomplete',
  },
  'midstream-error': { check: expectFailure(503, 'server_error', /Internal server error/), logOutcome: 'failed' },
  'socket-cut': { check: expectFailure(503, 'server_error', /backend stream broke/), logOutcome: 'failed' },
  'rate-limited': { check: expectFailure(429, 'rate_limit_exceeded', /HTTP 429/), logOutcome: 'failed' },
  unavailable: { check: expectFailure(503, 'backend_unavailable', /HTTP 503/), logOutcome: 'failed' },
  'context-overflow': { check: expectFailure(400, 'context_length_exceeded', /context/), logOutcome: 'failed' },
  'headers-never': { check: expectFailure(503, 'server_error', /sent nothing for 5 s/), logOutcome: 'failed' },
  'client-abort': { check: (observed) => (observed.aborted ? null : 'the client did not abort'), logOutcome: 'aborted' },
  'malformed-json': { check: expectFailure(400, 'invalid_json', /not valid JSON/), logOutcome: 'rejected' },
};

export async function exchange(agent: Agent, bridgeUrl: string, scenario: Scenario, stream: boolean, body: string): Promise<Observed> {
  const controller = new AbortController();
  const observed: Observed = { httpStatus: 0, terminal: null, errorCode: null, message: '', items: [], keepalives: 0, aborted: false };
  try {
    const response = await request(`${bridgeUrl}/v1/responses`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body,
      signal: controller.signal,
      // Guard only: no exchange may hang.
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    observed.httpStatus = response.statusCode;
    const contentType = String(response.headers['content-type'] ?? '');
    if (scenario === 'client-abort') {
      // Walk away during the silent prefill, once the stream started (the backend call is under way).
      controller.abort(new Error('client walked away'));
      await response.body.text().catch(() => undefined);
      observed.aborted = true;
      return observed;
    }
    if (contentType.startsWith('text/event-stream')) {
      const decoder = new SseDecoder();
      const events: Array<Record<string, unknown> & { type: string }> = [];
      for await (const bytes of response.body) for (const event of decoder.push(bytes as Uint8Array)) events.push(JSON.parse(event.data) as (typeof events)[number]);
      for (const event of decoder.end()) events.push(JSON.parse(event.data) as (typeof events)[number]);
      const terminal = events.at(-1);
      observed.terminal = terminal?.type ?? null;
      const snapshot = terminal?.response as { error?: { code: string; message: string } } | undefined;
      observed.errorCode = snapshot?.error?.code ?? null;
      observed.message = snapshot?.error?.message ?? '';
      observed.items = events.flatMap((event) => (event.type === 'response.output_item.done' ? [event.item as Record<string, unknown>] : []));
      const firstItem = events.findIndex((event) => event.type === 'response.output_item.added');
      observed.keepalives = events.slice(2, firstItem === -1 ? undefined : firstItem).filter((event) => event.type === 'response.in_progress').length;
    } else {
      const value = (await response.body.json()) as { status?: string; output?: Array<Record<string, unknown>>; error?: { code: string | null; message: string } };
      observed.terminal = value.status ?? null;
      observed.items = value.output ?? [];
      observed.errorCode = value.error?.code ?? null;
      observed.message = value.error?.message ?? '';
    }
  } catch (error) {
    if (scenario !== 'client-abort') throw error;
    observed.aborted = true;
  }
  return observed;
}

export interface SessionsResult {
  sent: Map<Scenario, number>;
  expectedLogOutcomes: Map<ExchangeOutcome, number>;
  problems: string[];
  streamed: number;
  keepalives: number;
  elapsedSeconds: number;
}

/** A few exchanges one after another, so the code paths are loaded before anything is measured. */
export async function warmUp(bridgeUrl: string): Promise<void> {
  const agent = new Agent();
  try {
    for (const scenario of ['text', 'custom-call', 'midstream-error', 'malformed-json'] as const) {
      for (const stream of [true, false]) await exchange(agent, bridgeUrl, scenario, stream, createRequestBody(scenario, stream, 0, 0));
    }
  } finally {
    await agent.close();
  }
}

/** SESSIONS simulated Codex sessions against the bridge for `seconds`, each turn checked against its scenario. */
export async function runSessions(bridgeUrl: string, seconds: number, seed: number): Promise<SessionsResult> {
  const agent = new Agent({ connections: SESSIONS * 2 });
  const deadline = Date.now() + seconds * 1000;
  const result: SessionsResult = { sent: new Map(), expectedLogOutcomes: new Map(), problems: [], streamed: 0, keepalives: 0, elapsedSeconds: 0 };
  const started = Date.now();
  try {
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, session) => {
        const random = createRandom(seed * 1000 + session);
        for (let turn = 1; Date.now() < deadline; turn++) {
          const scenario = pickScenario(random);
          // Codex always streams; a client walking away mid-prefill is a streaming client.
          const stream = scenario === 'client-abort' || random() < 0.6;
          if (stream) result.streamed += 1;
          result.sent.set(scenario, (result.sent.get(scenario) ?? 0) + 1);
          const { check, logOutcome } = CHECKS[scenario];
          result.expectedLogOutcomes.set(logOutcome, (result.expectedLogOutcomes.get(logOutcome) ?? 0) + 1);
          const observed = await exchange(agent, bridgeUrl, scenario, stream, createRequestBody(scenario, stream, session + 1, turn));
          result.keepalives += observed.keepalives;
          const problem = check(observed, stream);
          if (problem !== null && result.problems.length < 20) result.problems.push(`session ${session + 1} turn ${turn} ${scenario} (${stream ? 'stream' : 'JSON'}): ${problem}`);
        }
      }),
    );
  } finally {
    result.elapsedSeconds = (Date.now() - started) / 1000;
    await agent.close();
  }
  return result;
}

