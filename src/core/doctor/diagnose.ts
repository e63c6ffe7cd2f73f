import type { GrammarEnforcement } from '../bridge-options.ts';
import { DEFAULT_CATALOG_CONTEXT_WINDOW } from '../defaults.ts';
import { adviseContextWindow, adviseModelId, adviseToolCalling, RECOMMENDED_CONTEXT_WINDOW } from './engine-advice.ts';
import { ENGINE_NAMES, type DoctorModel, type EngineIdentity, type EngineKind } from './engine-identity.ts';
import { PROBE_TOOL_NAME } from './probe-requests.ts';
import type { ChatProbeResult } from './read-probe-answer.ts';

/**
 * The doctor's verdict: one finding per thing a Codex session needs, each with what to change on the
 * engine and what the bridge does about what cannot change. Pure; the server gathers the answers.
 */

/**
 * Codex 0.171's first request on the free-form surface, measured on llama-server: about 5,300 prompt
 * tokens (instructions, tools, environment). Below 8,192 the first turn has no room for a tool result
 * and the answer, so Codex fails at once; below 32,768 Codex works but compacts the history every few
 * turns (it compacts near the window the catalog states), and a file read or test log can overflow it.
 */
export const CODEX_FIRST_REQUEST_TOKENS = 5_300;
export const MINIMUM_CONTEXT_WINDOW = 8_192;

export type DoctorSeverity = 'ok' | 'info' | 'warning' | 'error';

export interface DoctorFinding {
  check: string;
  severity: DoctorSeverity;
  summary: string;
  /** What to change, as a command or setting to copy; null when nothing needs changing. */
  fix: string | null;
  /** What the bridge does about it meanwhile; null when it does nothing special. */
  bridge: string | null;
}

export interface DoctorProbes {
  model: string;
  toolCall: ChatProbeResult;
  toolCallStream: ChatProbeResult;
  reasoningEffort: ChatProbeResult;
  image: ChatProbeResult;
  /** The grammar self-test's decision (grammar-self-test.ts); absent when it did not run. */
  grammar?: GrammarEnforcement;
}

export type DoctorConnection = { reachable: true } | { reachable: false; reason: string; status: number | null };

export interface DoctorInput {
  backendUrl: string;
  /** The model the bridge is told to send (serve --model, freeformBridge.model); null = Codex's choice. */
  configuredModel: string | null;
  connection: DoctorConnection;
  /** Null when the backend did not answer with a model list. */
  identity: EngineIdentity | null;
  /** Why the model list could not be read, when it answered with something else. */
  listProblem: string | null;
  /** Null for the quick check (find and identify, no generation). */
  probes: DoctorProbes | null;
}

export interface DoctorReport {
  backendUrl: string;
  engine: EngineKind | null;
  engineLabel: string;
  version: string | null;
  /** The model id Codex and the bridge should use. */
  model: string | null;
  models: string[];
  contextWindow: number | null;
  contextWindowSource: string | null;
  findings: DoctorFinding[];
  /** An error finding: Codex's first turn would fail (or silently lose its prompt). */
  codexWouldFail: boolean;
  /** The finding to show first: the first error, else the first warning. */
  worst: DoctorFinding | null;
  /** Whether the generation probes ran. */
  probed: boolean;
}

function finding(check: string, severity: DoctorSeverity, summary: string, fix: string | null = null, bridge: string | null = null): DoctorFinding {
  return { check, severity, summary, fix, bridge };
}

function describeConnectionFailure(backendUrl: string, connection: { reason: string; status: number | null }): DoctorFinding {
  const url = `${backendUrl.replace(/\/+$/, '')}/models`;
  if (connection.status === 401 || connection.status === 403) {
    return finding('Backend', 'error', `GET ${url} answered ${connection.reason}: the backend wants an API key`, 'set the key: freeform-bridge serve --backend-api-key-env NAME (VS Code: Freeform Bridge: Set Backend API Key)');
  }
  if (connection.status === 404) return finding('Backend', 'error', `GET ${url} answered ${connection.reason}`, 'use the OpenAI-compatible base URL, which ends in /v1 (e.g. http://127.0.0.1:8000/v1)');
  if (connection.status !== null) return finding('Backend', 'error', `GET ${url} answered ${connection.reason}`, 'look at the engine\'s log; it answers but not with a model list');
  return finding('Backend', 'error', `nothing answers at ${backendUrl} (${connection.reason})`, 'start the engine, or give the URL it listens on (freeform-bridge doctor without --backend looks for one on the usual ports)');
}

function chooseModel(identity: EngineIdentity, configured: string | null): DoctorModel | null {
  if (configured !== null) return identity.models.find((model) => model.id === configured) ?? null;
  return identity.models[0] ?? null;
}

function checkModel(identity: EngineIdentity, configured: string | null, findings: DoctorFinding[]): string | null {
  const ids = identity.models.map((model) => model.id);
  if (ids.length === 0) {
    findings.push(finding('Model', 'error', 'the engine lists no models', identity.engine === 'ollama' ? 'pull one: ollama pull qwen3-coder:30b' : 'start the engine with a model loaded'));
    return null;
  }
  const others = ids.length > 1 ? ` (it lists ${ids.length}: ${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''})` : '';
  if (configured === null) {
    findings.push(finding('Model', 'ok', `'${ids[0]}'${others}`, null, `Codex's model name is sent as is; write it with: freeform-bridge codex-config --model ${ids[0]}`));
    return ids[0] ?? null;
  }
  if (ids.includes(configured)) {
    findings.push(finding('Model', 'ok', `'${configured}'${others}`));
    return configured;
  }
  const listed = ids[0] ?? '';
  // llama-server serves one model and ignores the name (single-model mode); the others answer 404.
  if (identity.engine === 'llamacpp') {
    findings.push(finding('Model', 'info', `the bridge sends '${configured}' but the engine lists '${listed}'; llama-server answers any name with its one model`, adviseModelId(listed)));
    return listed;
  }
  findings.push(finding('Model', 'error', `the bridge sends '${configured}', which the engine does not list${others}: every request would be a 404`, adviseModelId(listed)));
  return listed;
}

function checkContext(engine: EngineKind | null, model: DoctorModel, probed: boolean, findings: DoctorFinding[]): void {
  const window = model.contextWindow;
  const catalog = (size: number): string => `the model catalog and codex-config state ${size} tokens, so Codex compacts its history before the engine runs out`;
  if (window === null) {
    const severity = engine === 'ollama' ? 'warning' : 'info';
    const ollamaNote = engine === 'ollama' ? ' (Ollama runs a model with OLLAMA_CONTEXT_LENGTH: 4,096 tokens on machines with less than 24 GiB of VRAM, and cuts longer prompts silently)' : '';
    findings.push(finding('Context', severity, `the engine does not say how long the context is${ollamaNote}`, adviseContextWindow(engine, model.id), catalog(DEFAULT_CATALOG_CONTEXT_WINDOW)));
    return;
  }
  const source = `${window} tokens (${model.contextWindowSource ?? 'reported'})`;
  if (model.contextWindowIsCeiling) {
    const ollamaNote = engine === 'ollama' ? `; Ollama runs it with OLLAMA_CONTEXT_LENGTH unless num_ctx is set (4,096 tokens below 24 GiB of VRAM) and cuts longer prompts silently${probed ? '' : ' (the model is not loaded, so /api/ps cannot say yet)'}` : engine === 'lmstudio' ? '; LM Studio loads models with its own default unless told' : '';
    findings.push(finding('Context', engine === 'ollama' ? 'warning' : 'info', `${source} is what the model was trained for, not what the engine runs it with${ollamaNote}`, adviseContextWindow(engine, model.id), catalog(window)));
    return;
  }
  if (window < MINIMUM_CONTEXT_WINDOW) {
    const silently = engine === 'ollama' ? ' Ollama cuts it silently' : ' the engine refuses it';
    findings.push(finding('Context', 'error', `${source}: Codex's first request alone is about ${CODEX_FIRST_REQUEST_TOKENS} tokens and its first turn needs ${MINIMUM_CONTEXT_WINDOW};${silently}`, adviseContextWindow(engine, model.id), catalog(window)));
    return;
  }
  if (window < RECOMMENDED_CONTEXT_WINDOW) {
    findings.push(finding('Context', 'warning', `${source}: enough for Codex's first request (about ${CODEX_FIRST_REQUEST_TOKENS} tokens), but Codex will compact the history every few turns`, adviseContextWindow(engine, model.id), catalog(window)));
    return;
  }
  findings.push(finding('Context', 'ok', source));
}

function checkToolTemplate(engine: EngineKind | null, identity: EngineIdentity, model: DoctorModel, findings: DoctorFinding[]): void {
  if (model.supportsTools === false && engine === 'lmstudio') {
    findings.push(finding('Tool template', 'warning', `'${model.id}' is not trained for tool use (${model.supportsToolsSource ?? 'engine'}): LM Studio prompts it with its generic tool format, and such models often answer in prose`, adviseToolCalling(engine, model.id, null)));
    return;
  }
  if (model.supportsTools === false && engine === 'llamacpp' && identity.chatTemplateOverride !== null) {
    const name = identity.chatTemplateOverride;
    findings.push(finding('Tool template', 'error', `llama-server runs with --chat-template ${name}, which replaces the model's own template and does not render tools: the model never sees them, and a call it writes anyway comes back as text (${model.supportsToolsSource ?? 'engine'})`, adviseToolCalling(engine, model.id, null, name)));
    return;
  }
  if (model.supportsTools === false) {
    const why = engine === 'sglang' ? 'SGLang runs without --tool-call-parser: the model\'s calls come back as plain text' : engine === 'ollama' ? `Ollama says '${model.id}' does not support tools (400 "does not support tools")` : 'the chat template does not render tools: the model never sees them and answers in prose';
    findings.push(finding('Tool template', 'error', `${why} (${model.supportsToolsSource ?? 'engine'})`, adviseToolCalling(engine, model.id, null)));
    return;
  }
  if (model.supportsTools === true || identity.toolCallFormat !== null) {
    const format = identity.toolCallFormat === null ? '' : `, format ${identity.toolCallFormat}`;
    findings.push(finding('Tool template', 'ok', `renders tools (${model.supportsToolsSource ?? identity.toolCallFormatSource ?? 'engine'}${format})`));
  }
}

function parseableArguments(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

function describeProbeFailure(result: ChatProbeResult): string {
  if (result.outcome === 'refused') return `refused (HTTP ${result.status}: ${result.message.slice(0, 300)})`;
  if (result.outcome === 'unreachable') return `no answer (${result.reason})`;
  const text = result.text.trim().replace(/\s+/g, ' ');
  const quoted = text === '' ? '' : `: "${text.slice(0, 100)}${text.length > 100 ? '…' : ''}"`;
  // A call written as text means the model saw the tool but the engine's parser or template did not match it.
  const written = /<tool_call>|<function=|\[TOOL_CALLS\]|"name"\s*:\s*"apply_patch"/.test(result.text) ? ' (the model wrote a call, but the engine did not parse it)' : '';
  return `the answer came back as text, not as a tool call${written}${quoted} (finish_reason ${result.finishReason ?? 'none'})`;
}

function checkToolProbe(check: string, engine: EngineKind | null, model: string, templateOverride: string | null, result: ChatProbeResult, findings: DoctorFinding[]): boolean {
  if (result.outcome === 'answered') {
    const call = result.toolCalls.find((candidate) => candidate.name === PROBE_TOOL_NAME);
    if (call !== undefined) {
      if (!parseableArguments(call.arguments)) {
        const cut = result.finishReason === 'length' ? ' (cut at the probe\'s token limit)' : '';
        findings.push(finding(check, result.finishReason === 'length' ? 'info' : 'warning', `a ${PROBE_TOOL_NAME} call came back, but its arguments are not a JSON object${cut}`, result.finishReason === 'length' ? null : adviseToolCalling(engine, model, null, templateOverride), 'the bridge recovers inputs from arguments it can read and warns in the traffic panel about the rest'));
        return true;
      }
      findings.push(finding(check, 'ok', `${PROBE_TOOL_NAME} came back as a tool call`));
      return true;
    }
  }
  const message = result.outcome === 'refused' ? result.message : null;
  findings.push(finding(check, 'error', describeProbeFailure(result), adviseToolCalling(engine, model, message, templateOverride)));
  return false;
}

function checkReasoningEffort(model: DoctorModel, result: ChatProbeResult, findings: DoctorFinding[]): void {
  if (result.outcome === 'answered') {
    const ignored = model.takesReasoningEffort === false ? '; the chat template ignores it' : '';
    findings.push(finding('Reasoning effort', 'ok', `reasoning_effort "medium" accepted${ignored}`));
    return;
  }
  findings.push(
    finding(
      'Reasoning effort',
      'warning',
      `reasoning_effort "medium" ${describeProbeFailure(result)}`,
      'choose no reasoning effort for this model in Codex (leave model_reasoning_effort unset)',
      "the bridge's model catalog offers Codex reasoning levels only for models the engine marks as reasoning models, so Codex sends none for the others",
    ),
  );
}

function checkImages(result: ChatProbeResult, findings: DoctorFinding[]): void {
  if (result.outcome === 'answered') {
    findings.push(finding('Images', 'ok', 'an image input is accepted'));
    return;
  }
  findings.push(finding('Images', 'info', `an image input is ${describeProbeFailure(result)}`, 'for images, serve a vision model (llama-server: --mmproj; vLLM/SGLang: a multimodal model)', "the model catalog states text-only input, so Codex does not send this model images"));
}

function pickWorst(findings: readonly DoctorFinding[]): DoctorFinding | null {
  for (const severity of ['error', 'warning'] as const) {
    const found = findings.find((candidate) => candidate.severity === severity);
    if (found !== undefined) return found;
  }
  return null;
}

export function diagnoseEngine(input: DoctorInput): DoctorReport {
  const findings: DoctorFinding[] = [];
  const identity = input.identity;
  const report = (model: DoctorModel | null, chosen: string | null): DoctorReport => {
    const ordered = [...findings];
    return {
      backendUrl: input.backendUrl,
      engine: identity?.engine ?? null,
      engineLabel: identity?.engine ? ENGINE_NAMES[identity.engine] : 'unknown engine',
      version: identity?.version ?? null,
      model: chosen,
      models: identity?.models.map((entry) => entry.id) ?? [],
      contextWindow: model?.contextWindow ?? null,
      contextWindowSource: model?.contextWindowSource ?? null,
      findings: ordered,
      codexWouldFail: ordered.some((entry) => entry.severity === 'error'),
      worst: pickWorst(ordered),
      probed: input.probes !== null,
    };
  };
  if (!input.connection.reachable) {
    findings.push(describeConnectionFailure(input.backendUrl, input.connection));
    return report(null, null);
  }
  if (identity === null) {
    findings.push(finding('Backend', 'error', input.listProblem ?? `${input.backendUrl} answers, but not with an OpenAI model list`, 'use the OpenAI-compatible base URL, which ends in /v1'));
    return report(null, null);
  }
  const engineSummary = identity.engine === null ? 'not recognised (answers like an OpenAI-compatible server)' : `${ENGINE_NAMES[identity.engine]}${identity.version === null ? '' : ` ${identity.version}`} (${identity.engineSource ?? ''}${identity.versionSource === null ? '' : `; ${identity.versionSource}`})`;
  findings.push(finding('Engine', identity.engine === null ? 'info' : 'ok', engineSummary));
  const chosen = checkModel(identity, input.configuredModel, findings);
  const model = chosen === null ? null : (chooseModel(identity, chosen) ?? null);
  if (model === null) return report(null, chosen);
  checkContext(identity.engine, model, input.probes !== null, findings);
  checkToolTemplate(identity.engine, identity, model, findings);
  const probes = input.probes;
  if (probes !== null) {
    const plain = checkToolProbe('Tool call', identity.engine, model.id, identity.chatTemplateOverride, probes.toolCall, findings);
    const streamed = checkToolProbe('Tool call, streamed', identity.engine, model.id, identity.chatTemplateOverride, probes.toolCallStream, findings);
    const last = findings.at(-1);
    if (plain && !streamed && last !== undefined) last.summary = `works without streaming, but streamed: ${last.summary}`;
    checkReasoningEffort(model, probes.reasoningEffort, findings);
    checkImages(probes.image, findings);
    if (probes.grammar !== undefined) checkGrammarEnforcement(probes.grammar, findings);
  }
  return report(model, chosen);
}

function checkGrammarEnforcement(decision: GrammarEnforcement, findings: DoctorFinding[]): void {
  if (decision.enforced) {
    findings.push(finding('Grammar enforcement', 'ok', `the engine keeps a tool input inside a pattern (${decision.form} form): ${decision.reason}`, null, 'with serve --grammar-enforcement auto (freeformBridge.grammarEnforcement), apply_patch and exec are constrained while the model writes'));
    return;
  }
  findings.push(finding('Grammar enforcement', 'info', decision.reason, null, 'free-form inputs are checked after generation (the lift-time grammar check), as always'));
}

/** The model the doctor checks: the configured one when the engine lists it, else the first listed. */
export function chooseDoctorModel(identity: EngineIdentity, configured: string | null): string | null {
  const ids = identity.models.map((model) => model.id);
  if (configured !== null && ids.includes(configured)) return configured;
  return ids[0] ?? null;
}
