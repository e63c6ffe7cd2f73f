import { DEFAULT_CATALOG_CONTEXT_WINDOW, DEFAULT_PROVIDER_DISPLAY_NAME } from '../defaults.ts';
import { renderModelCatalogEntry, serializeModelCatalog, type CodexToolSurface } from './model-catalog-entry.ts';

/**
 * The catalog the bridge serves to Codex (`model_catalog_url`), built fresh from what the backend
 * reports: one entry per backend model, or only the configured model name when the bridge sends
 * every request to one model anyway. Pure: the server discovers the facts and owns the cache.
 */

/** What the backend said about one model; null = it did not say. */
export interface CatalogModelFacts {
  id: string;
  contextWindow: number | null;
  contextWindowSource: string | null;
  acceptsImages: boolean | null;
  takesReasoningEffort: boolean | null;
}

/** Codex's effort names that every effort-taking engine accepts (vLLM, SGLang, llama.cpp, Ollama). */
const REASONING_LEVELS = ['low', 'medium', 'high'] as const;

export interface LiveModelCatalogOptions {
  models: readonly CatalogModelFacts[];
  toolSurface: CodexToolSurface;
  /** The bridge's `--model`: Codex is offered this name alone (its facts from the matching backend model, else the first). */
  modelOverride: string | null;
  /** The bridge drops `reasoning.effort` (option `reasoningEffort: 'drop'`): offer no levels. */
  dropsReasoningEffort: boolean;
  displayName?: string;
}

export interface LiveModelCatalog {
  text: string;
  /** Things the user should know (a guessed context window), for the log. */
  notes: string[];
}

function describeFacts(facts: CatalogModelFacts, contextWindow: number): string {
  const source = facts.contextWindow === null ? `not reported by the backend; Freeform Bridge assumes ${contextWindow}` : `from the backend's ${facts.contextWindowSource ?? 'model list'}`;
  return `Served by your backend through Freeform Bridge. Context window ${contextWindow} tokens (${source}).`;
}

export function renderLiveModelCatalog(options: LiveModelCatalogOptions): LiveModelCatalog {
  const displayName = options.displayName ?? DEFAULT_PROVIDER_DISPLAY_NAME;
  const notes: string[] = [];
  let models: CatalogModelFacts[] = [...options.models];
  if (options.modelOverride !== null) {
    const override = options.modelOverride;
    const facts = models.find((model) => model.id === override) ?? models[0];
    models = [{ id: override, contextWindow: facts?.contextWindow ?? null, contextWindowSource: facts?.contextWindowSource ?? null, acceptsImages: facts?.acceptsImages ?? null, takesReasoningEffort: facts?.takesReasoningEffort ?? null }];
  }
  const entries = models.map((facts) => {
    const contextWindow = facts.contextWindow ?? DEFAULT_CATALOG_CONTEXT_WINDOW;
    if (facts.contextWindow === null) notes.push(`the backend reports no context window for '${facts.id}'; the catalog says ${DEFAULT_CATALOG_CONTEXT_WINDOW} tokens`);
    return renderModelCatalogEntry({
      model: facts.id,
      displayName,
      toolSurface: options.toolSurface,
      contextWindow,
      inputModalities: facts.acceptsImages === true ? ['text', 'image'] : ['text'],
      reasoningLevels: facts.takesReasoningEffort === true && !options.dropsReasoningEffort ? REASONING_LEVELS : [],
      description: describeFacts(facts, contextWindow),
    });
  });
  return { text: serializeModelCatalog(entries), notes };
}
