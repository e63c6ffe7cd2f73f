import { isPositiveInteger, parseJsonObject, parseLlamaCppProps, parseModelListText, parseOllamaShow, readPath, readString, TRAINING_CONTEXT_SOURCES } from './model-list.ts';

/**
 * Which engine answers, which version, and what it says about its models and their chat template,
 * read from the endpoints each engine really has. Pure: `src/server/engine-doctor.ts` asks, this reads.
 *
 * Where each fact comes from (each engine's own code or docs):
 * - vLLM: `/v1/models` `owned_by: "vllm"` and `max_model_len`; `GET /version` `{"version"}`
 *   (vllm-project/vllm, vllm/entrypoints/openai/api_server.py, `show_version`).
 * - SGLang: `/v1/models` `owned_by: "sglang"`; `GET /server_info` (older builds `/get_server_info`): the
 *   server arguments (`context_length`, `tool_call_parser`, `reasoning_parser`) merged with `version`
 *   (sgl-project/sglang, python/sglang/srt/entrypoints/http_server.py, `server_info`).
 * - llama.cpp `llama-server`: `/v1/models` `owned_by: "llamacpp"` with `meta.n_ctx_train`; `GET /props`:
 *   `default_generation_settings.n_ctx` (the context it runs with), `build_info`, `chat_template`,
 *   `chat_template_caps.supports_tools`, `modalities.vision` (ggml-org/llama.cpp, tools/server/README.md,
 *   "GET /props").
 * - Ollama: `GET /api/version` `{"version"}` (docs.ollama.com/api-reference/get-version);
 *   `POST /api/show` `capabilities` (`tools`, `vision`, `thinking`), `parameters` (`num_ctx`) and
 *   `model_info.<arch>.context_length` (docs.ollama.com/api-reference/show-model-details);
 *   `GET /api/ps` `models[].context_length`, the context a loaded model really has (ollama/ollama#11331).
 * - LM Studio: `/v1/models` `owned_by: "organization_owner"`; `GET /api/v1/models` (0.4+): `models[]`
 *   with `key`, `loaded_instances[].config.context_length` (the context it was loaded with),
 *   `max_context_length`, `capabilities.vision` and `capabilities.trained_for_tool_use`
 *   (lmstudio-ai/lmstudio-bug-tracker#1659 quotes a whole answer); `GET /api/v0/models` (0.3.6+):
 *   `data[]` with `type` (`llm`, `vlm`), `state` and `max_context_length` only
 *   (lmstudio-ai/docs 1_developer/2_rest/endpoints.mdx).
 */

export type EngineKind = 'vllm' | 'sglang' | 'llamacpp' | 'ollama' | 'lmstudio';

export const ENGINE_NAMES: Readonly<Record<EngineKind, string>> = {
  vllm: 'vLLM',
  sglang: 'SGLang',
  llamacpp: 'llama.cpp llama-server',
  ollama: 'Ollama',
  lmstudio: 'LM Studio',
};

/** Where each engine listens unless told otherwise (each engine's docs). */
export const ENGINE_DEFAULT_PORTS: ReadonlyArray<{ engine: EngineKind; port: number }> = [
  { engine: 'vllm', port: 8000 },
  { engine: 'sglang', port: 30000 },
  { engine: 'llamacpp', port: 8080 },
  { engine: 'ollama', port: 11434 },
  { engine: 'lmstudio', port: 1234 },
];

/** Each engine's own endpoints: the body of a 200 answer, null for anything else (absent, refused, another engine). */
export interface EngineAnswers {
  /** The URL the model list came from, for messages. */
  modelListUrl: string;
  /** `GET {base}/models`, a 200 answer's body. */
  modelList: string;
  /** llama.cpp `GET /props`. */
  llamaCppProps: string | null;
  /** vLLM `GET /version`. */
  vllmVersion: string | null;
  /** SGLang `GET /server_info`, else `GET /get_server_info`. */
  sglangServerInfo: string | null;
  /** Ollama `GET /api/version`. */
  ollamaVersion: string | null;
  /** Ollama `POST /api/show` per model id. */
  ollamaShow: ReadonlyMap<string, string>;
  /** Ollama `GET /api/ps`. */
  ollamaRunning: string | null;
  /** LM Studio `GET /api/v1/models` (0.4+), else `GET /api/v0/models` (0.3.6+). */
  lmStudioModels: string | null;
}

/** What the engine says about one model; null = it did not say. */
export interface DoctorModel {
  id: string;
  contextWindow: number | null;
  contextWindowSource: string | null;
  /** The number is what the model was trained for, not what the server runs it with (it may run with less). */
  contextWindowIsCeiling: boolean;
  acceptsImages: boolean | null;
  takesReasoningEffort: boolean | null;
  /** Whether the engine renders tools for this model (template or capability); null = not said. */
  supportsTools: boolean | null;
  supportsToolsSource: string | null;
}

export interface EngineIdentity {
  engine: EngineKind | null;
  /** The field that told the engine apart, e.g. `/v1/models owned_by "vllm"`. */
  engineSource: string | null;
  version: string | null;
  versionSource: string | null;
  /** The tool-call format the template or server names (`hermes`, `qwen3_coder`, …); null = not said. */
  toolCallFormat: string | null;
  toolCallFormatSource: string | null;
  /** llama-server runs with `--chat-template NAME` instead of the model's own template: the NAME; null = not seen. */
  chatTemplateOverride: string | null;
  models: DoctorModel[];
}

const OWNERS: ReadonlyArray<{ ownedBy: string; engine: EngineKind }> = [
  { ownedBy: 'vllm', engine: 'vllm' },
  { ownedBy: 'sglang', engine: 'sglang' },
  { ownedBy: 'llamacpp', engine: 'llamacpp' },
  { ownedBy: 'organization_owner', engine: 'lmstudio' },
];

/** The markers each tool-call format's template writes; the first that matches names it. */
const TEMPLATE_FORMATS: ReadonlyArray<{ pattern: RegExp; format: string }> = [
  { pattern: /<function=|<parameter=/, format: 'qwen3_coder (XML <function=…>)' },
  { pattern: /<tool_call>/, format: 'hermes (JSON in <tool_call>)' },
  { pattern: /<\|start\|>|<\|channel\|>/, format: 'openai (gpt-oss Harmony)' },
  { pattern: /\[TOOL_CALLS\]/, format: 'mistral ([TOOL_CALLS])' },
  { pattern: /<\|python_tag\|>|"parameters": /, format: 'llama3_json' },
];

function describeTemplateFormat(template: string | null): string | null {
  if (template === null) return null;
  return TEMPLATE_FORMATS.find((entry) => entry.pattern.test(template))?.format ?? null;
}

/**
 * The source llama-server puts in place of the model's template for `--chat-template chatml`, as its
 * GET /props `chat_template` shows it (llama.cpp v0.5.0, test/fixtures/llama-server/wire/hermes-chatml-override).
 */
const LLAMA_CPP_CHATML_SOURCE =
  "{%- for message in messages -%}\n  {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}\n{%- endfor -%}\n{%- if add_generation_prompt -%}\n  {{- '<|im_start|>assistant\n' -}}\n{%- endif -%}";

/**
 * The name given to `--chat-template`, read from /props: `chatml` shows as llama.cpp's own short source,
 * any other built-in name (`llama3`, `gemma` …) as the bare name. A template the GGUF carries is neither.
 */
function describeTemplateOverride(template: string | null): string | null {
  if (template === null) return null;
  if (template === LLAMA_CPP_CHATML_SOURCE) return 'chatml';
  return /^[A-Za-z0-9][\w.-]*$/.test(template) ? template : null;
}

function isSglangServerInfo(info: Record<string, unknown> | null): info is Record<string, unknown> {
  return info !== null && typeof info.version === 'string' && ('tool_call_parser' in info || 'context_length' in info || 'model_path' in info);
}

function isLlamaCppProps(props: Record<string, unknown> | null): props is Record<string, unknown> {
  return props !== null && ('default_generation_settings' in props || 'chat_template_caps' in props || 'build_info' in props);
}

interface LmStudioEntry {
  id: string;
  acceptsImages: boolean | null;
  supportsTools: boolean | null;
  loadedContext: number | null;
  maximumContext: number | null;
}

function positiveOrNull(value: unknown): number | null {
  return isPositiveInteger(value) ? value : null;
}

/** The two shapes of LM Studio's own model list; null when the answer is neither (another server). */
function readLmStudioModels(text: string | null): LmStudioEntry[] | null {
  const list = parseJsonObject(text);
  if (Array.isArray(list?.models)) {
    return list.models.flatMap((entry: unknown): LmStudioEntry[] => {
      const id = readString(entry, ['key']);
      if (id === null) return [];
      const instances = readPath(entry, ['loaded_instances']);
      const loaded = Array.isArray(instances) ? instances.map((instance: unknown) => positiveOrNull(readPath(instance, ['config', 'context_length']))).find((size) => size !== null) : undefined;
      const vision = readPath(entry, ['capabilities', 'vision']);
      const tools = readPath(entry, ['capabilities', 'trained_for_tool_use']);
      return [{ id, acceptsImages: typeof vision === 'boolean' ? vision : null, supportsTools: typeof tools === 'boolean' ? tools : null, loadedContext: loaded ?? null, maximumContext: positiveOrNull(readPath(entry, ['max_context_length'])) }];
    });
  }
  const data = list?.data;
  if (!Array.isArray(data) || !data.some((entry: unknown) => readPath(entry, ['state']) !== undefined)) return null;
  return data.flatMap((entry: unknown): LmStudioEntry[] => {
    const id = readString(entry, ['id']);
    if (id === null) return [];
    const type = readString(entry, ['type']);
    return [{ id, acceptsImages: type === null ? null : type === 'vlm', supportsTools: null, loadedContext: positiveOrNull(readPath(entry, ['loaded_context_length'])), maximumContext: positiveOrNull(readPath(entry, ['max_context_length'])) }];
  });
}

function readOllamaRunning(text: string | null): Map<string, number> {
  const running = new Map<string, number>();
  const list = parseJsonObject(text)?.models;
  if (!Array.isArray(list)) return running;
  for (const entry of list) {
    const name = readString(entry, ['name']) ?? readString(entry, ['model']);
    const context = readPath(entry, ['context_length']);
    if (name !== null && isPositiveInteger(context)) running.set(name, context);
  }
  return running;
}

/** The engine a model list's `owned_by` names, when it names one (Ollama writes the model's namespace). */
export function findEngineOwner(entries: ReadonlyArray<Record<string, unknown>>): { engine: EngineKind; ownedBy: string } | null {
  for (const owner of OWNERS) {
    if (entries.some((entry) => entry.owned_by === owner.ownedBy)) return owner;
  }
  return null;
}

function decideEngine(answers: EngineAnswers, entries: ReadonlyArray<Record<string, unknown>>): { engine: EngineKind | null; source: string | null } {
  const owner = findEngineOwner(entries);
  if (owner !== null) return { engine: owner.engine, source: `GET /v1/models owned_by "${owner.ownedBy}"` };
  if (isLlamaCppProps(parseJsonObject(answers.llamaCppProps))) return { engine: 'llamacpp', source: 'GET /props' };
  if (isSglangServerInfo(parseJsonObject(answers.sglangServerInfo))) return { engine: 'sglang', source: 'GET /server_info' };
  if (readLmStudioModels(answers.lmStudioModels) !== null) return { engine: 'lmstudio', source: 'GET /api/v1/models' };
  if (readString(parseJsonObject(answers.ollamaVersion), ['version']) !== null) return { engine: 'ollama', source: 'GET /api/version' };
  if (readString(parseJsonObject(answers.vllmVersion), ['version']) !== null) return { engine: 'vllm', source: 'GET /version' };
  return { engine: null, source: null };
}

function baseModel(id: string, contextWindow: number | null, contextWindowSource: string | null): DoctorModel {
  return {
    id,
    contextWindow,
    contextWindowSource,
    contextWindowIsCeiling: contextWindowSource !== null && TRAINING_CONTEXT_SOURCES.has(contextWindowSource),
    acceptsImages: null,
    takesReasoningEffort: null,
    supportsTools: null,
    supportsToolsSource: null,
  };
}

/** Reads every answer; throws only when the model list itself is not one (InvalidRequestError). */
export function identifyEngine(answers: EngineAnswers): EngineIdentity {
  const list = parseModelListText(answers.modelListUrl, answers.modelList);
  const models = list.models.map((model) => baseModel(model.id, model.contextWindow, model.contextWindowSource));
  const { engine, source } = decideEngine(answers, list.entries);
  const identity: EngineIdentity = { engine, engineSource: source, version: null, versionSource: null, toolCallFormat: null, toolCallFormatSource: null, chatTemplateOverride: null, models };
  switch (engine) {
    case 'llamacpp':
      completeFromLlamaCpp(identity, answers);
      break;
    case 'sglang':
      completeFromSglang(identity, answers);
      break;
    case 'ollama':
      completeFromOllama(identity, answers);
      break;
    case 'lmstudio':
      completeFromLmStudio(identity, answers);
      break;
    case 'vllm':
      identity.version = readString(parseJsonObject(answers.vllmVersion), ['version']);
      identity.versionSource = identity.version === null ? null : 'GET /version version';
      break;
    case null:
      break;
  }
  return identity;
}

function completeFromLlamaCpp(identity: EngineIdentity, answers: EngineAnswers): void {
  const props = parseJsonObject(answers.llamaCppProps);
  if (!isLlamaCppProps(props)) return;
  const facts = parseLlamaCppProps(answers.llamaCppProps ?? '');
  identity.version = readString(props, ['build_info']);
  identity.versionSource = identity.version === null ? null : 'GET /props build_info';
  const template = readString(props, ['chat_template']);
  identity.toolCallFormat = describeTemplateFormat(template);
  identity.toolCallFormatSource = identity.toolCallFormat === null ? null : 'GET /props chat_template';
  identity.chatTemplateOverride = describeTemplateOverride(template);
  const supportsTools = readPath(props, ['chat_template_caps', 'supports_tools']);
  for (const model of identity.models) {
    if (facts.contextWindow !== null) Object.assign(model, { contextWindow: facts.contextWindow, contextWindowSource: 'props default_generation_settings.n_ctx', contextWindowIsCeiling: false });
    model.acceptsImages = facts.acceptsImages;
    model.takesReasoningEffort = facts.takesReasoningEffort;
    if (typeof supportsTools === 'boolean') Object.assign(model, { supportsTools, supportsToolsSource: 'props chat_template_caps.supports_tools' });
  }
}

function completeFromSglang(identity: EngineIdentity, answers: EngineAnswers): void {
  const info = parseJsonObject(answers.sglangServerInfo);
  if (!isSglangServerInfo(info)) return;
  identity.version = readString(info, ['version']);
  identity.versionSource = identity.version === null ? null : 'GET /server_info version';
  const parser = readString(info, ['tool_call_parser']);
  identity.toolCallFormat = parser;
  identity.toolCallFormatSource = 'GET /server_info tool_call_parser';
  const contextLength = info.context_length;
  for (const model of identity.models) {
    if (isPositiveInteger(contextLength)) Object.assign(model, { contextWindow: contextLength, contextWindowSource: 'server_info context_length', contextWindowIsCeiling: false });
    // Without a parser SGLang renders the tools and hands the model's call text back as content.
    Object.assign(model, { supportsTools: parser !== null, supportsToolsSource: 'server_info tool_call_parser' });
  }
}

function completeFromOllama(identity: EngineIdentity, answers: EngineAnswers): void {
  identity.version = readString(parseJsonObject(answers.ollamaVersion), ['version']);
  identity.versionSource = identity.version === null ? null : 'GET /api/version version';
  const running = readOllamaRunning(answers.ollamaRunning);
  for (const model of identity.models) {
    const showText = answers.ollamaShow.get(model.id);
    const show = showText === undefined ? null : parseOllamaShow(showText);
    if (show !== null) {
      model.acceptsImages = show.acceptsImages;
      model.takesReasoningEffort = show.takesReasoningEffort;
      if (show.supportsTools !== null) Object.assign(model, { supportsTools: show.supportsTools, supportsToolsSource: 'api/show capabilities' });
      if (show.contextWindow !== null && model.contextWindow === null) {
        // num_ctx is what the model runs with; the architecture's context_length only what it was trained for.
        Object.assign(model, { contextWindow: show.contextWindow, contextWindowSource: show.contextWindowSource, contextWindowIsCeiling: show.contextWindowSource !== 'api/show parameters.num_ctx' });
      }
    }
    const loaded = running.get(model.id);
    if (loaded !== undefined) Object.assign(model, { contextWindow: loaded, contextWindowSource: 'api/ps context_length', contextWindowIsCeiling: false });
  }
}

function completeFromLmStudio(identity: EngineIdentity, answers: EngineAnswers): void {
  const entries = readLmStudioModels(answers.lmStudioModels);
  if (entries === null) return;
  for (const model of identity.models) {
    const entry = entries.find((candidate) => candidate.id === model.id);
    if (entry === undefined) continue;
    model.acceptsImages = entry.acceptsImages;
    if (entry.supportsTools !== null) Object.assign(model, { supportsTools: entry.supportsTools, supportsToolsSource: 'api/v1/models capabilities.trained_for_tool_use' });
    if (entry.loadedContext !== null) Object.assign(model, { contextWindow: entry.loadedContext, contextWindowSource: 'api/v1/models loaded_instances[].config.context_length', contextWindowIsCeiling: false });
    else if (entry.maximumContext !== null && model.contextWindow === null) {
      // The most the model can take; LM Studio loads it with the context set in its load settings, often less.
      Object.assign(model, { contextWindow: entry.maximumContext, contextWindowSource: 'api/v0/models max_context_length', contextWindowIsCeiling: true });
    }
  }
}
