import type { Dispatcher } from 'undici';
import { UpstreamConnectionError, UpstreamHttpError } from '../core/errors.ts';
import { chooseDoctorModel, diagnoseEngine, type DoctorConnection, type DoctorProbes, type DoctorReport } from '../core/doctor/diagnose.ts';
import { ENGINE_DEFAULT_PORTS, findEngineOwner, identifyEngine, type EngineAnswers, type EngineIdentity, type EngineKind } from '../core/doctor/engine-identity.ts';
import { parseModelListText } from '../core/doctor/model-list.ts';
import { buildProbeRequests } from '../core/doctor/probe-requests.ts';
import { readChatProbeAnswer, type ChatProbeResult } from '../core/doctor/read-probe-answer.ts';
import { buildGrammarSelfTestRequest, decideGrammarEnforcement, judgeGrammarSelfTest, SELF_TEST_FORMS, type GrammarSelfTestVerdict } from '../core/doctor/grammar-self-test.ts';
import type { GrammarEnforcement } from '../core/bridge-options.ts';
import type { PatternForm } from '../core/grammar/grammar-to-pattern.ts';
import { withTimeLimit } from './time-limit.ts';
import { createUpstreamClient, MAX_SERVER_INFO_BYTES, type UpstreamClient } from './upstream-client.ts';

/**
 * The engine doctor's I/O, through the bridge's own upstream client (undici, the backend's key): find
 * an engine on the usual ports, identify it from its own endpoints, and send the few small probe
 * requests. What the answers mean is decided in `src/core/doctor/`.
 */

/** The most models asked about one by one (Ollama's /api/show); a bigger list keeps what /v1/models said. */
const MAXIMUM_SHOWN_MODELS = 16;

/** Identification is a handful of small GETs; an engine that takes longer is reported as not answering. */
const IDENTIFY_TIMEOUT_MS = 5_000;

/**
 * A hang guard for each probe, not its expected time (a tool call takes 0.1–0.2 s on the tiny test
 * model, a second or two on a CPU engine): Ollama loads the model at the first request, which can take
 * a while on a cold start.
 */
const PROBE_TIMEOUT_MS = 60_000;

/** Finding an engine on a port of this machine: anything listening answers well within this. */
const FIND_TIMEOUT_MS = 1_000;

async function readText(upstream: UpstreamClient, method: 'GET' | 'POST', path: string, body: string | undefined, signal: AbortSignal): Promise<string | null> {
  try {
    const response = await upstream.requestServerRoot(method, path, body, signal);
    const text = await response.text(MAX_SERVER_INFO_BYTES, `answer to ${method} ${path}`);
    return response.status === 200 ? text : null;
  } catch (error) {
    if (signal.aborted) throw error;
    // An engine without this endpoint (or refusing it) just tells us nothing more.
    return null;
  }
}

/**
 * Find and identify, without generating: `GET /models`, then the identifying endpoints of the engine
 * its `owned_by` names (of every engine when it names none). Throws what `GET /models` throws
 * (UpstreamConnectionError, UpstreamHttpError, InvalidRequestError for a body that is no model list).
 */
export async function identifyBackend(upstream: UpstreamClient, signal: AbortSignal): Promise<EngineIdentity> {
  const modelListUrl = `${upstream.baseUrl}/models`;
  const response = await upstream.getModels(signal);
  const modelList = await response.text(MAX_SERVER_INFO_BYTES, 'model list');
  if (response.status !== 200) throw new UpstreamHttpError(response.status, modelList.slice(0, 2_000));
  const list = parseModelListText(modelListUrl, modelList);
  const named = findEngineOwner(list.entries)?.engine ?? null;
  const ask = (engine: EngineKind, method: 'GET' | 'POST', path: string, body?: string): Promise<string | null> =>
    named === null || named === engine ? readText(upstream, method, path, body, signal) : Promise.resolve(null);
  const [llamaCppProps, vllmVersion, sglangServerInfo, ollamaVersion, lmStudioModels] = await Promise.all([
    ask('llamacpp', 'GET', '/props'),
    ask('vllm', 'GET', '/version'),
    // `/get_server_info` is the older name; current builds keep it as a deprecated alias.
    ask('sglang', 'GET', '/server_info').then((text) => text ?? ask('sglang', 'GET', '/get_server_info')),
    ask('ollama', 'GET', '/api/version'),
    ask('lmstudio', 'GET', '/api/v1/models').then((text) => text ?? ask('lmstudio', 'GET', '/api/v0/models')),
  ]);
  const ollamaShow = new Map<string, string>();
  let ollamaRunning: string | null = null;
  if (ollamaVersion !== null) {
    const shown = list.models.slice(0, MAXIMUM_SHOWN_MODELS);
    const [running, ...answers] = await Promise.all([readText(upstream, 'GET', '/api/ps', undefined, signal), ...shown.map((model) => readText(upstream, 'POST', '/api/show', JSON.stringify({ model: model.id }), signal))]);
    ollamaRunning = running ?? null;
    shown.forEach((model, index) => {
      const text = answers[index];
      if (text !== null && text !== undefined) ollamaShow.set(model.id, text);
    });
  }
  const answers: EngineAnswers = { modelListUrl, modelList, llamaCppProps, vllmVersion, sglangServerInfo, ollamaVersion, ollamaShow, ollamaRunning, lmStudioModels };
  return identifyEngine(answers);
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `no answer within ${timeoutMs / 1000} s`;
  if (UpstreamConnectionError.is(error)) return error.code;
  return error instanceof Error ? error.message : String(error);
}

async function sendProbe(upstream: UpstreamClient, body: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<ChatProbeResult> {
  try {
    return await withTimeLimit(timeoutMs, signal, async (limited) => {
      const response = await upstream.postChatCompletions(JSON.stringify(body), limited);
      const text = await response.text(MAX_SERVER_INFO_BYTES, 'probe answer');
      return readChatProbeAnswer(response.status, text, body.stream === true);
    });
  } catch (error) {
    if (signal.aborted) throw error;
    return { outcome: 'unreachable', reason: describeFailure(error, timeoutMs) };
  }
}

/** The generation probes, all at once: the engines serve them in parallel slots, and each is a few tokens. */
export async function probeEngine(upstream: UpstreamClient, model: string, signal: AbortSignal, timeoutMs = PROBE_TIMEOUT_MS): Promise<DoctorProbes> {
  const requests = buildProbeRequests(model);
  const [toolCall, toolCallStream, reasoningEffort, image, grammar] = await Promise.all([
    sendProbe(upstream, requests.toolCall, signal, timeoutMs),
    sendProbe(upstream, requests.toolCallStream, signal, timeoutMs),
    sendProbe(upstream, requests.reasoningEffort, signal, timeoutMs),
    sendProbe(upstream, requests.image, signal, timeoutMs),
    testGrammarEnforcement(upstream, model, signal, timeoutMs),
  ]);
  return { model, toolCall, toolCallStream, reasoningEffort, image, grammar };
}

/**
 * The grammar self-test (grammar-self-test.ts): one tiny request per pattern form, in turn, stopping at
 * the first the engine obeys. A few dozen tokens each.
 */
export async function testGrammarEnforcement(upstream: UpstreamClient, model: string, signal: AbortSignal, timeoutMs = PROBE_TIMEOUT_MS): Promise<GrammarEnforcement> {
  const verdicts: Array<{ form: PatternForm; verdict: GrammarSelfTestVerdict }> = [];
  for (const form of SELF_TEST_FORMS) {
    const verdict = judgeGrammarSelfTest(await sendProbe(upstream, buildGrammarSelfTestRequest(model, form), signal, timeoutMs));
    verdicts.push({ form, verdict });
    if (verdict.obeyed) break;
  }
  return decideGrammarEnforcement(verdicts);
}

export interface EngineDoctorOptions {
  backendUrl: string;
  apiKey: string | null;
  /** The model the bridge sends (serve --model, freeformBridge.model); null = whatever Codex asks for. */
  configuredModel: string | null;
  /** false: find and identify only, no generation (serve's start-up check). */
  probe: boolean;
  signal?: AbortSignal;
  dispatcher?: Dispatcher;
  /** The limit on each probe; PROBE_TIMEOUT_MS unless a test needs a short one. */
  probeTimeoutMs?: number;
}

async function identifyOrExplain(upstream: UpstreamClient, signal: AbortSignal): Promise<{ connection: DoctorConnection; identity: EngineIdentity | null; listProblem: string | null }> {
  try {
    return { connection: { reachable: true }, identity: await withTimeLimit(IDENTIFY_TIMEOUT_MS, signal, (limited) => identifyBackend(upstream, limited)), listProblem: null };
  } catch (error) {
    if (signal.aborted) throw error;
    if (UpstreamHttpError.is(error)) return { connection: { reachable: false, reason: `HTTP ${error.status}`, status: error.status }, identity: null, listProblem: null };
    if (UpstreamConnectionError.is(error) || (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))) {
      return { connection: { reachable: false, reason: describeFailure(error, IDENTIFY_TIMEOUT_MS), status: null }, identity: null, listProblem: null };
    }
    return { connection: { reachable: true }, identity: null, listProblem: error instanceof Error ? error.message : String(error) };
  }
}

/** The doctor for one backend URL: identify, probe (unless told not to), diagnose. Never throws for what the backend does. */
export async function runEngineDoctor(options: EngineDoctorOptions): Promise<DoctorReport> {
  const signal = options.signal ?? new AbortController().signal;
  const upstream = createUpstreamClient({ baseUrl: options.backendUrl, getApiKey: () => options.apiKey, dispatcher: options.dispatcher });
  try {
    let found = await identifyOrExplain(upstream, signal);
    let probes: DoctorProbes | null = null;
    const model = found.identity === null ? null : chooseDoctorModel(found.identity, options.configuredModel);
    if (options.probe && model !== null) {
      probes = await probeEngine(upstream, model, signal, options.probeTimeoutMs);
      // Ollama says the context a model really runs with only once it is loaded, which the probes just did.
      if (found.identity?.engine === 'ollama') found = await identifyOrExplain(upstream, signal);
    }
    return diagnoseEngine({ backendUrl: upstream.baseUrl, configuredModel: options.configuredModel, connection: found.connection, identity: found.identity, listProblem: found.listProblem, probes });
  } finally {
    await upstream.close();
  }
}

export interface FoundEngine {
  /** The engine whose usual port this is; the report names the one that really answers. */
  port: number;
  expected: EngineKind;
  backendUrl: string;
  /** It answered 401 or 403 without a key: an engine started with one. */
  wantsKey: boolean;
}

/**
 * With no backend configured: which of the engines' usual ports on this machine answer `GET /v1/models`
 * (a 401 counts: an engine that wants a key). All at once, each with a short limit.
 */
export async function findLocalEngines(options: { host?: string; timeoutMs?: number; ports?: ReadonlyArray<{ engine: EngineKind; port: number }> } = {}): Promise<FoundEngine[]> {
  const host = options.host ?? '127.0.0.1';
  const answers = await Promise.all(
    (options.ports ?? ENGINE_DEFAULT_PORTS).map(async ({ engine, port }): Promise<FoundEngine | null> => {
      const backendUrl = `http://${host}:${port}/v1`;
      const upstream = createUpstreamClient({ baseUrl: backendUrl, getApiKey: () => null });
      try {
        const { response, text } = await withTimeLimit(options.timeoutMs ?? FIND_TIMEOUT_MS, undefined, async (limited) => {
          const answer = await upstream.getModels(limited);
          return { response: answer, text: await answer.text(MAX_SERVER_INFO_BYTES, 'model list') };
        });
        if (response.status === 401 || response.status === 403) return { port, expected: engine, backendUrl, wantsKey: true };
        if (response.status !== 200) return null;
        // Throws for a body that is no model list: some other program holds the port.
        parseModelListText(backendUrl, text);
        return { port, expected: engine, backendUrl, wantsKey: false };
      } catch {
        return null;
      } finally {
        await upstream.close();
      }
    }),
  );
  return answers.filter((found): found is FoundEngine => found !== null);
}

/**
 * The backend's models with what the doctor's identification read about each (the context each runs
 * with, where the engine says it). Throws what `GET /models` throws, like `fetchBackendModels`.
 */
export async function listEngineModels(backendUrl: string, apiKey: string | null): Promise<EngineIdentity['models']> {
  const upstream = createUpstreamClient({ baseUrl: backendUrl, getApiKey: () => apiKey });
  try {
    return (await withTimeLimit(IDENTIFY_TIMEOUT_MS, undefined, (limited) => identifyBackend(upstream, limited))).models;
  } finally {
    await upstream.close();
  }
}
