/**
 * The soak test's backend, run as a child process (`fork` with `--import tsx`) so the test process
 * holds only the bridge and its clients when it counts sockets, timers and memory. The turn for each
 * request is chosen from the scenario named in its last user message (`soak:<scenario>`), so every
 * client knows what its exchange must end in.
 *
 * IPC: sends `{ type: 'ready', url }`; answers `{ type: 'stats' }` with `{ type: 'stats', requests,
 * aborted }`; exits when the parent disconnects.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { startMockBackend, type MockTurn, type RecordedRequest } from '../mock-backend/create-mock-backend.ts';

export const SOAK_PATCH = '*** Begin Patch\n*** Add File: soak.txt\n+soak "quoted" — ✓\n*** End Patch\n';

export type SoakScenario =
  | 'text'
  | 'custom-call'
  | 'parallel-calls'
  | 'slow-chunks'
  | 'silent-prefill'
  | 'truncated-call'
  | 'midstream-error'
  | 'socket-cut'
  | 'rate-limited'
  | 'unavailable'
  | 'context-overflow'
  | 'headers-never'
  | 'client-abort';

export const SOAK_TURNS: Readonly<Record<SoakScenario, MockTurn>> = {
  text: { text: 'soak answer with a few words' },
  'custom-call': { toolCalls: [{ name: 'apply_patch', input: SOAK_PATCH }] },
  'parallel-calls': { toolCalls: [{ name: 'apply_patch', input: SOAK_PATCH }, { name: 'exec_command', arguments: { cmd: 'ls -la' } }] },
  'slow-chunks': { text: 'one two three four five six seven eight', delayBetweenChunksMs: 15 },
  // Longer than the bridge's 1 s keepalive: at least one response.in_progress goes out.
  'silent-prefill': { text: 'late answer', delayBeforeFirstByteMs: 1_300 },
  'truncated-call': { toolCalls: [{ name: 'apply_patch', input: SOAK_PATCH }], truncateArgumentsAt: 20, finishReason: 'length' },
  'midstream-error': { text: 'partial answer', midStreamError: 'vllm' },
  'socket-cut': { text: 'cut in the middle', midStreamError: 'socket-cut' },
  'rate-limited': { status: 429, headers: { 'retry-after': '1' } },
  unavailable: { status: 503 },
  'context-overflow': { failure: 'context-length' },
  // Ended by the bridge's idle watchdog (the soak runs it at 5 s).
  'headers-never': { text: 'never', delayBeforeHeadersMs: 60_000 },
  // The client walks away during the silent prefill.
  'client-abort': { text: 'never', delayBeforeFirstByteMs: 60_000 },
};

function readScenario(request: RecordedRequest): SoakScenario {
  const messages = (request.body as { messages?: Array<{ role: string; content: unknown }> } | undefined)?.messages ?? [];
  const last = [...messages].reverse().find((message) => message.role === 'user');
  const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  const match = /soak:([a-z-]+)/.exec(text);
  const scenario = match?.[1] as SoakScenario | undefined;
  if (scenario === undefined || !(scenario in SOAK_TURNS)) throw new Error(`soak backend: no scenario in ${text.slice(0, 100)}`);
  return scenario;
}

async function main(): Promise<void> {
  const backend = await startMockBackend({ profile: 'vllm-qwen3coder' });
  backend.setResponder((request) => SOAK_TURNS[readScenario(request)]);
  process.on('message', (message: { type?: string }) => {
    if (message.type !== 'stats') return;
    const chat = backend.requests.filter((request) => request.path === '/v1/chat/completions');
    process.send?.({ type: 'stats', requests: chat.length, aborted: chat.filter((request) => request.aborted).length });
  });
  process.on('disconnect', () => {
    void backend.close().then(() => process.exit(0));
  });
  process.send?.({ type: 'ready', url: backend.url });
}

export interface SoakBackendProcess {
  child: ChildProcess;
  /** Base URL ending in `/v1`. */
  url: string;
  /** Chat requests it received so far, and how many of them the client aborted. */
  stats(): Promise<{ requests: number; aborted: number }>;
  /** Disconnects and waits for the process to exit. */
  stop(): Promise<void>;
}

/** This backend in a process of its own (run from the repository's root, as the tests and the bench are). */
export async function startSoakBackend(): Promise<SoakBackendProcess> {
  const child = fork(resolve(process.cwd(), 'harness/soak-backend.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, FREEFORM_BRIDGE_SOAK_BACKEND: '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await readyUrl(child, 'soak backend');
  return {
    child,
    url,
    stats: () =>
      new Promise((resolveStats) => {
        child.once('message', (message: { requests: number; aborted: number }) => resolveStats(message));
        child.send({ type: 'stats' });
      }),
    stop: () => disconnectAndWait(child),
  };
}

/**
 * The soak's bridge process (soak-bridge-child.ts, from a bundle of it) against the soak backend at
 * `backendUrl`: the soak test and the bench start it the same way, with no Node options of their own.
 */
export function forkSoakBridge(bundle: string, backendUrl: string): ChildProcess {
  return fork(bundle, [], { execArgv: [], env: { ...process.env, FREEFORM_BRIDGE_SOAK_BACKEND_URL: backendUrl }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

/** The URL in the `ready` message the soak's child processes send first; rejects if `child` exits before. */
export function readyUrl(child: ChildProcess, name: string): Promise<string> {
  return new Promise<string>((resolveUrl, reject) => {
    child.once('message', (message: { type: string; url: string }) => resolveUrl(message.url));
    child.once('exit', (code) => reject(new Error(`${name} exited with ${String(code)}`)));
  });
}

/** Ends the IPC channel (the soak's child processes exit when it closes) and waits for the exit. */
export async function disconnectAndWait(child: ChildProcess): Promise<void> {
  if (child.connected) child.disconnect();
  await new Promise((resolveExit) => (child.exitCode === null && child.signalCode === null ? child.once('exit', resolveExit) : resolveExit(null)));
}

// Only when run as the child, not when the test imports the scenario table.
if (process.send !== undefined && process.env.FREEFORM_BRIDGE_SOAK_BACKEND === '1') {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
