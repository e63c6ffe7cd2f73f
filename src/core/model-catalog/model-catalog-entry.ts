/**
 * One entry of Codex's model catalog (`{"models":[…]}`) and where the bridge serves it. Shared by the
 * catalog file a profile points at and the live catalog the bridge serves; it describes what Codex
 * offers the model (tool surface, context window, input kinds, reasoning levels).
 */

/** How Codex offers its tools to the model: plain functions, free-form custom tools, or code mode. */
export const CODEX_TOOL_SURFACES = ['functions', 'freeform', 'code-mode'] as const;
export type CodexToolSurface = (typeof CODEX_TOOL_SURFACES)[number];

/**
 * Where the bridge serves Codex's model catalog format (`{"models":[…]}`), next to the OpenAI model
 * list at `/v1/models` that other clients read. The tool surface travels in the URL, so the file
 * that chose it and the catalog can never disagree; Codex appends `&client_version=…` to it.
 */
export const CODEX_MODEL_CATALOG_PATH = '/v1/codex/models';

export function modelCatalogUrlFor(baseUrl: string, toolSurface: CodexToolSurface): string {
  return `${baseUrl.replace(/\/+$/, '')}/codex/models?tool_surface=${toolSurface}`;
}

const BASE_INSTRUCTIONS = [
  "You are Codex, a coding agent running in the Codex CLI on the user's computer; your model is served locally through Freeform Bridge.",
  'Work in the current workspace: read the relevant files before changing them, make the requested change, and check it (build or tests) when that is cheap.',
  'Never invent the content of files you have not read. Keep messages short and finish with a brief summary of what you changed.',
].join(' ');

const SURFACE_INSTRUCTIONS: Record<Exclude<CodexToolSurface, 'functions'>, string> = {
  freeform:
    'Edit files with the apply_patch tool. Its input is the raw patch text, not JSON: it starts with `*** Begin Patch`, contains `*** Add File: <path>`, `*** Update File: <path>` (with `@@` context and lines prefixed by a space, `-` or `+`) or `*** Delete File: <path>` sections, and ends with `*** End Patch`.',
  'code-mode':
    'Act through the exec tool: its input is JavaScript source (not JSON) that calls the tools declared in its description and prints what you need to see. Edit files with apply_patch from inside that code.',
};

/** Codex's input kinds a catalog entry can name; only `text` unless the backend reports vision. */
export type CatalogInputModality = 'text' | 'image';

/** What one catalog entry says about a model; the same shape for the catalog file and the live catalog. */
export interface ModelCatalogEntryOptions {
  model: string;
  /** Provider display name, shown after the model name in Codex's picker. */
  displayName: string;
  toolSurface: CodexToolSurface;
  contextWindow: number | null;
  inputModalities: readonly CatalogInputModality[];
  /** Effort levels the backend takes; empty makes Codex send no `reasoning.effort` at all. */
  reasoningLevels: readonly string[];
  /** One line for the picker (where the facts came from); omitted when null. */
  description?: string | null;
}

const REASONING_LEVEL_DESCRIPTIONS: Record<string, string> = {
  low: 'Faster answers with less reasoning',
  medium: 'Balanced reasoning depth',
  high: 'Deeper reasoning for harder problems',
};

/**
 * One catalog entry with the fields Codex 0.171 requires. `base_instructions`
 * replaces Codex's ~17k-character base prompt; a short one suits small local context windows, and
 * `model_instructions_file` in the profile overrides it. The `functions` surface gets an entry too
 * (the live catalog needs one for the context window) but no `apply_patch_tool_type`: absent, Codex
 * offers its plain function tools only.
 */
export function renderModelCatalogEntry(options: ModelCatalogEntryOptions): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    slug: options.model,
    display_name: `${options.model} (${options.displayName})`,
    ...(options.description ? { description: options.description } : {}),
    supported_reasoning_levels: options.reasoningLevels.map((effort) => ({ effort, description: REASONING_LEVEL_DESCRIPTIONS[effort] ?? effort })),
    ...(options.reasoningLevels.length > 0 ? { default_reasoning_level: options.reasoningLevels.includes('medium') ? 'medium' : options.reasoningLevels[0] } : {}),
    shell_type: 'shell_command',
    visibility: 'list',
    supported_in_api: true,
    priority: 1,
    support_verbosity: false,
    truncation_policy: { mode: 'tokens', limit: 10000 },
    experimental_supported_tools: [],
    // No `supports_search_tool`: with it Codex hides every MCP tool behind a client `tool_search`,
    // which a Chat Completions engine cannot run, so the model would see no MCP tool at all.
    input_modalities: [...options.inputModalities],
    base_instructions: options.toolSurface === 'functions' ? BASE_INSTRUCTIONS : `${BASE_INSTRUCTIONS} ${SURFACE_INSTRUCTIONS[options.toolSurface]}`,
  };
  if (options.toolSurface !== 'functions') entry.apply_patch_tool_type = 'freeform';
  if (options.toolSurface === 'code-mode') {
    entry.tool_mode = 'code_mode_only';
    entry.use_responses_lite = true;
  }
  if (options.contextWindow !== null) entry.context_window = options.contextWindow;
  return entry;
}

/** A whole catalog in Codex's own format: `{"models":[…]}`, pretty-printed, ending in a newline. */
export function serializeModelCatalog(entries: readonly Record<string, unknown>[]): string {
  return `${JSON.stringify({ models: entries }, null, 2)}\n`;
}
