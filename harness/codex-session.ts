/**
 * Runs the real Codex CLI through the bridge against the project's mock backend.
 *
 * One session = a mock Chat Completions backend (an engine profile, scripted by a responder that sees
 * each recorded request), a bridge started in-process with its traffic collected and its exchange log
 * written, a scratch CODEX_HOME written by our own config writer, and a scratch git workspace.
 * `runCodex` spawns `codex exec -p <profile> --json` there with stdin closed.
 *
 * The Codex build is the pinned `@openai/codex` devDependency, or the executable named by the
 * `CODEX_BIN` environment variable (to run the suite against another version).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ChatFunctionTool, ChatRequest } from '../src/core/chat/chat-completions-api.ts';
import type { CodexToolSurface } from '../src/core/model-catalog/model-catalog-entry.ts';
import type { RoundTripLabel } from '../src/core/traffic/round-trip-label.ts';
import type { ExchangeStartEvent, TrafficEvent } from '../src/core/traffic/traffic-event.ts';
import { applyCodexConfigWrite } from '../src/codex-config/apply-codex-config-write.ts';
import { planCodexConfigWrite } from '../src/codex-config/plan-codex-config-write.ts';
import { startBridgeServer, type BridgeServerConfig, type RunningBridge } from '../src/server/start-server.ts';
import {
  startMockBackend,
  type EngineProfile,
  type MockBackend,
  type MockBackendOptions,
  type MockTurn,
  type RecordedRequest,
} from '../mock-backend/create-mock-backend.ts';

const repositoryRoot = resolve(__dirname, '..');

export const CODEX_PROFILE = 'e2e';
export const CODEX_PROVIDER_ID = 'freeform-bridge-e2e';
export const CODEX_MODEL = 'qwen3-coder';
/**
 * How the tests, the demo and the screenshots run Codex on their scratch repositories: as root in a
 * container, Codex's own sandbox often cannot start, and it is not what they exercise. What a user is
 * told to run keeps the sandbox (`-s workspace-write`).
 */
export const WITHOUT_CODEX_SANDBOX = ['--dangerously-bypass-approvals-and-sandbox'] as const;

/** `CODEX_BIN` when set, else the pinned devDependency. */
export function resolveCodexBinary(): string {
  const fromEnvironment = process.env.CODEX_BIN;
  if (fromEnvironment !== undefined && fromEnvironment !== '') return resolve(fromEnvironment);
  return join(repositoryRoot, 'node_modules', '.bin', process.platform === 'win32' ? 'codex.cmd' : 'codex');
}

export interface CodexAvailability {
  binary: string;
  /** What `codex --version` printed, e.g. `codex-cli 0.171.0`. */
  version: string;
}

let availability: CodexAvailability | null = null;

/**
 * The real Codex CLI is a prerequisite of these tiers, installed by `npm ci` (devDependency
 * `@openai/codex`). Missing or broken, the test file fails at once with a message naming it; it is
 * never skipped, so a run without Codex cannot look green.
 */
export function checkCodexAvailability(): CodexAvailability {
  if (availability !== null) return availability;
  const binary = resolveCodexBinary();
  if (!existsSync(binary)) throw new Error(`the real Codex CLI is missing at ${binary}: run npm ci (it installs @openai/codex), or set CODEX_BIN`);
  const result = spawnSync(binary, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  if (result.status !== 0) {
    throw new Error(`the real Codex CLI at ${binary} does not run (\`codex --version\` failed; is its platform package missing?): ${(result.stderr ?? '').trim().split('\n')[0] ?? ''}`);
  }
  availability = { binary, version: result.stdout.trim() };
  return availability;
}

export function codexSuiteTitle(title: string): string {
  const { version } = checkCodexAvailability();
  return `real Codex (${version}), ${title}`;
}

// ---------------------------------------------------------------------------------------------
// What Codex printed

/** One line of `codex exec --json`. */
export interface CodexJsonEvent {
  type: string;
  item?: { id?: string; type: string; text?: string; command?: string; aggregated_output?: string; exit_code?: number | null; status?: string; message?: string; changes?: unknown };
  error?: { message?: string };
  message?: string;
  usage?: unknown;
  [key: string]: unknown;
}

export interface CodexRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  events: CodexJsonEvent[];
  durationMs: number;
  /** Text of the `agent_message` items, in order. */
  agentMessages: string[];
  /** The `command_execution` items Codex completed. */
  commands: Array<NonNullable<CodexJsonEvent['item']>>;
  /** Messages of `error` events, `turn.failed` errors and `error` items. */
  errors: string[];
}

function parseJsonLines(stdout: string): CodexJsonEvent[] {
  const events: CodexJsonEvent[] = [];
  for (const line of stdout.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('{')) continue;
    try {
      const value = JSON.parse(trimmed) as unknown;
      if (typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string') events.push(value as CodexJsonEvent);
    } catch {
      // Not every stdout line is guaranteed JSON; ignore the rest.
    }
  }
  return events;
}

function summariseRun(code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, durationMs: number): CodexRun {
  const events = parseJsonLines(stdout);
  const completed = events.filter((event) => event.type === 'item.completed' && event.item !== undefined).map((event) => event.item!);
  const errors: string[] = [];
  for (const event of events) {
    if (event.type === 'error' && typeof event.message === 'string') errors.push(event.message);
    if (event.type === 'turn.failed' && typeof event.error?.message === 'string') errors.push(event.error.message);
    if (event.type === 'item.completed' && event.item?.type === 'error' && typeof event.item.message === 'string') errors.push(event.item.message);
  }
  return {
    code,
    signal,
    stdout,
    stderr,
    events,
    durationMs,
    agentMessages: completed.filter((item) => item.type === 'agent_message').map((item) => item.text ?? ''),
    commands: completed.filter((item) => item.type === 'command_execution'),
    errors,
  };
}

/** A short description of a run for assertion messages. */
export function describeRun(run: CodexRun): string {
  const tail = (text: string): string => (text.length > 4_000 ? `…${text.slice(-4_000)}` : text);
  return `codex exited ${run.code}${run.signal ? ` (${run.signal})` : ''} after ${run.durationMs} ms\n--- stdout ---\n${tail(run.stdout)}\n--- stderr ---\n${tail(run.stderr)}`;
}

// ---------------------------------------------------------------------------------------------
// What the mock received

type ChatMessage = ChatRequest['messages'][number];

export function chatBody(request: RecordedRequest): ChatRequest {
  return request.body as ChatRequest;
}

export function chatRequests(backend: MockBackend): RecordedRequest[] {
  return backend.requests.filter((request) => request.method === 'POST' && request.path === '/v1/chat/completions');
}

export function chatMessages(request: RecordedRequest): ChatMessage[] {
  return chatBody(request).messages ?? [];
}

export interface ReplayedCall {
  id: string;
  name: string;
  arguments: string;
}

/** Every assistant tool call replayed in the request, in order. */
export function replayedCalls(request: RecordedRequest): ReplayedCall[] {
  const calls: ReplayedCall[] = [];
  for (const message of chatMessages(request)) {
    if (message.role !== 'assistant' || !Array.isArray(message.tool_calls)) continue;
    for (const call of message.tool_calls) calls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  return calls;
}

export interface ReplayedOutput {
  toolCallId: string;
  content: string;
}

/** Every tool message in the request, content flattened to text. */
export function replayedOutputs(request: RecordedRequest): ReplayedOutput[] {
  const outputs: ReplayedOutput[] = [];
  for (const message of chatMessages(request)) {
    if (message.role !== 'tool') continue;
    outputs.push({ toolCallId: message.tool_call_id, content: messageText(message.content) });
  }
  return outputs;
}

export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('');
  }
  return '';
}

/** The last message the mock received (the newest tool output or the user prompt). */
export function lastMessage(request: RecordedRequest): ChatMessage | undefined {
  return chatMessages(request).at(-1);
}

/** Names of the function tools the backend was offered (the lowered names). */
export function loweredTools(request: RecordedRequest): ChatFunctionTool[] {
  return (chatBody(request).tools ?? []).filter((tool): tool is ChatFunctionTool => tool.type === 'function');
}

export function loweredToolNames(request: RecordedRequest): string[] {
  return loweredTools(request).map((tool) => tool.function.name);
}

export function loweredTool(request: RecordedRequest, name: string): ChatFunctionTool | undefined {
  return loweredTools(request).find((tool) => tool.function.name === name);
}

// ---------------------------------------------------------------------------------------------
// The session

export interface CodexBridgeSessionOptions {
  /** The Chat Completions backend the bridge forwards to (a mock, or a real engine), ending in /v1. */
  backendUrl: string;
  surface: CodexToolSurface;
  bridge?: Partial<Omit<BridgeServerConfig, 'backendUrl'>>;
  /** Extra keys for the provider table, passed to Codex as `-c model_providers.<id>.<key>=<value>`. */
  providerSettings?: Record<string, number>;
  /** Keep the scratch folders (to look at them after a failure). */
  keepScratch?: boolean;
  /** Stops whatever serves `backendUrl`, after the bridge (the mock; nothing for an engine the caller owns). */
  stopBackend?: () => Promise<void>;
}

export interface E2eSessionOptions extends Omit<CodexBridgeSessionOptions, 'backendUrl' | 'stopBackend'> {
  profile: EngineProfile;
  /** Plays the model: sees each recorded chat request, returns the turn. */
  responder?: (request: RecordedRequest) => MockTurn | Promise<MockTurn>;
  backend?: Partial<Omit<MockBackendOptions, 'profile'>>;
}

export interface RunCodexOptions {
  extraArguments?: string[];
  timeoutMs?: number;
  /** Called with each stdout/stderr chunk as it arrives (the demo's live view). */
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
}

/** The bridge, a scratch CODEX_HOME with the bridge's profile, a scratch git workspace, and Codex to run there. */
export interface CodexBridgeSession {
  bridge: RunningBridge;
  traffic: TrafficEvent[];
  scratch: string;
  codexHome: string;
  workspace: string;
  logFile: string;
  runCodex(prompt: string, options?: RunCodexOptions): Promise<CodexRun>;
  /** Stops the bridge (flushing its log file) and the backend; the scratch folders stay. */
  stopServers(): Promise<void>;
  /** The bridge's exchange log, one record per line (call after `stopServers` for a complete file). */
  readExchangeLog(): Array<Record<string, unknown>>;
  /** Stops the servers and removes the scratch folders. */
  close(): Promise<void>;
}

export interface E2eSession extends CodexBridgeSession {
  backend: MockBackend;
}

function runGit(workspace: string, gitArguments: string[]): void {
  const result = spawnSync('git', gitArguments, { cwd: workspace, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) throw new Error(`git ${gitArguments.join(' ')} failed in ${workspace}: ${result.stderr}`);
}

export async function startE2eSession(options: E2eSessionOptions): Promise<E2eSession> {
  const backend = await startMockBackend({ profile: options.profile, ...options.backend });
  if (options.responder) backend.setResponder(options.responder);
  try {
    const session = await startCodexBridgeSession({ ...options, backendUrl: backend.url, stopBackend: () => backend.close() });
    return { ...session, backend };
  } catch (error) {
    await backend.close();
    throw error;
  }
}

export async function startCodexBridgeSession(options: CodexBridgeSessionOptions): Promise<CodexBridgeSession> {
  const scratch = mkdtempSync(join(tmpdir(), `freeform-bridge-e2e-${options.surface}-`));
  const codexHome = join(scratch, 'codex-home');
  const workspace = join(scratch, 'workspace');
  const logFile = join(scratch, 'bridge-exchanges.jsonl');
  const removeScratch = (): void => {
    if (!options.keepScratch && process.env.FREEFORM_BRIDGE_KEEP_E2E !== '1') rmSync(scratch, { recursive: true, force: true });
  };
  const traffic: TrafficEvent[] = [];
  let bridge: RunningBridge | null = null;
  try {
    mkdirSync(workspace);
    // A scratch git repository: Codex's git check passes without --skip-git-repo-check.
    runGit(workspace, ['init', '-q']);
    bridge = await startBridgeServer({
      ...options.bridge,
      backendUrl: options.backendUrl,
      logFile,
      onTraffic: (event) => {
        traffic.push(event);
        options.bridge?.onTraffic?.(event);
      },
    });
    const plan = await planCodexConfigWrite({
      codexHome,
      profile: CODEX_PROFILE,
      providerId: CODEX_PROVIDER_ID,
      baseUrl: `${bridge.url}/v1`,
      model: CODEX_MODEL,
      toolSurface: options.surface,
      token: null,
      contextWindow: 32_768,
    });
    await applyCodexConfigWrite(plan);
  } catch (error) {
    await bridge?.close();
    removeScratch();
    throw error;
  }
  const runningBridge = bridge;

  const providerArguments = Object.entries(options.providerSettings ?? {}).flatMap(([key, value]) => ['-c', `model_providers.${CODEX_PROVIDER_ID}.${key}=${value}`]);

  const runCodex = (prompt: string, runOptions: RunCodexOptions = {}): Promise<CodexRun> => {
    const { binary } = checkCodexAvailability();
    const environment: NodeJS.ProcessEnv = { ...process.env, CODEX_HOME: codexHome };
    delete environment.OPENAI_API_KEY;
    delete environment.OPENAI_BASE_URL;
    const codexArguments = [
      'exec',
      '-p',
      CODEX_PROFILE,
      '--json',
      '--ephemeral',
      ...WITHOUT_CODEX_SANDBOX,
      ...providerArguments,
      ...(runOptions.extraArguments ?? []),
      prompt,
    ];
    const started = Date.now();
    // stdin closed: `codex exec` waits for EOF on a piped stdin.
    const child = spawn(binary, codexArguments, { cwd: workspace, env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      stdout += text;
      runOptions.onOutput?.('stdout', text);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      stderr += text;
      runOptions.onOutput?.('stderr', text);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), runOptions.timeoutMs ?? 90_000);
    return new Promise((resolvePromise, reject) => {
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolvePromise(summariseRun(code, signal, stdout, stderr, Date.now() - started));
      });
    });
  };

  let stopping: Promise<void> | null = null;
  const stopServers = (): Promise<void> => {
    stopping ??= (async () => {
      await runningBridge.close();
      await options.stopBackend?.();
    })();
    return stopping;
  };
  let closed = false;
  return {
    bridge: runningBridge,
    traffic,
    scratch,
    codexHome,
    workspace,
    logFile,
    runCodex,
    stopServers,
    readExchangeLog() {
      if (!existsSync(logFile)) return [];
      return readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    async close() {
      if (closed) return;
      closed = true;
      await stopServers();
      removeScratch();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Traffic

export function trafficWarnings(traffic: readonly TrafficEvent[]): Array<{ exchangeId: string; kind: string; tool: string | null; callId: string | null; detail: string }> {
  const warnings: Array<{ exchangeId: string; kind: string; tool: string | null; callId: string | null; detail: string }> = [];
  for (const event of traffic) {
    if (event.type !== 'exchange-end') continue;
    for (const warning of event.warnings) warnings.push({ exchangeId: event.exchangeId, kind: warning.kind, tool: warning.tool, callId: warning.callId, detail: warning.detail });
  }
  return warnings;
}

export function exchangeEnds(traffic: readonly TrafficEvent[]): Array<Extract<TrafficEvent, { type: 'exchange-end' }>> {
  return traffic.filter((event): event is Extract<TrafficEvent, { type: 'exchange-end' }> => event.type === 'exchange-end');
}

/**
 * Warnings every Codex session produces by design: the hosted `web_search` tool is dropped and a
 * lowered custom tool's grammar is not enforced by the backend (once per tool).
 */
const EXPECTED_SESSION_WARNINGS = new Set(['hosted_tool_dropped', 'grammar_not_enforced']);

export function unexpectedWarnings(traffic: readonly TrafficEvent[]): ReturnType<typeof trafficWarnings> {
  return trafficWarnings(traffic).filter((warning) => !EXPECTED_SESSION_WARNINGS.has(warning.kind));
}

/**
 * The exchange that sent this backend request: the bridge sends its lowered request as
 * `JSON.stringify` writes it, so the bytes the mock received name the exchange. The start event is
 * emitted before the backend is called, so a responder can ask while it answers.
 */
export function exchangeStartOf(traffic: readonly TrafficEvent[], request: RecordedRequest): ExchangeStartEvent | null {
  for (let index = traffic.length - 1; index >= 0; index -= 1) {
    const event = traffic[index];
    if (event?.type === 'exchange-start' && JSON.stringify(event.loweredRequest) === request.rawBody) return event;
  }
  return null;
}

/** What the round trip behind this backend request is for Codex (from its `x-codex-turn-metadata`). */
export function roundTripOf(traffic: readonly TrafficEvent[], request: RecordedRequest): RoundTripLabel | null {
  return exchangeStartOf(traffic, request)?.roundTrip ?? null;
}
