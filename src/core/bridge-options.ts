import { DEFAULT_RECOVER_TEXT_TOOL_CALLS } from './defaults.ts';
import type { PatternForm } from './grammar/grammar-to-pattern.ts';

/**
 * Options that change how a request is lowered and an answer lifted. One value per server
 * (CLI flags / extension settings); core receives it as an argument and keeps no state.
 */
export type CustomToolStrategy = 'function_bridge' | 'passthrough';

export const CUSTOM_TOOL_STRATEGIES: readonly CustomToolStrategy[] = ['function_bridge', 'passthrough'];

/**
 * Whether the engine is asked to keep a free-form tool's input inside its grammar (a JSON-Schema
 * `pattern` on the lowered `input`), decided by the server per backend and model from the setting,
 * the engine self-test and any refusal; `reason` is what the panel and the terminal show.
 */
export type GrammarEnforcement =
  | { enforced: true; form: PatternForm; strict: boolean; reason: string }
  | { enforced: false; reason: string };

export const GRAMMAR_ENFORCEMENT_OFF: Readonly<GrammarEnforcement> = Object.freeze({ enforced: false, reason: 'grammar enforcement is off' });

export interface BridgeOptions {
  /** `function_bridge` lowers custom tools to functions; `passthrough` forwards the Chat-native custom form. */
  strategy: CustomToolStrategy;
  /** Kill switch: drop every custom tool (with a warning) instead of bridging or passing it through. */
  dropCustomTools: boolean;
  /** Model name sent upstream instead of the one Codex asked for. */
  modelOverride: string | null;
  /**
   * `reasoning.effort` → `reasoning_effort`: forward verbatim (the engine validates), clamp to
   * low/medium/high for engines that reject newer values (vLLM before ~0.21), or drop it.
   */
  reasoningEffort: 'forward' | 'clamp' | 'drop';
  /** Which assistant field carries replayed reasoning: vLLM ≥0.16 reads `reasoning`, others `reasoning_content`. */
  replayReasoningField: 'reasoning' | 'reasoning_content' | 'both';
  /** Replay reasoning items at all (DeepSeek-style backends reject tool-call turns without it). */
  replayReasoning: boolean;
  /** Role of developer messages after the leading run (most templates do not know `developer`). */
  midConversationDeveloperRole: 'system' | 'user';
  /** Structured tool outputs: one joined string (default) or a list of text parts. */
  toolOutputParts: 'join' | 'list';
  /** Images inside tool outputs. */
  toolOutputImages: 'inline_user_message' | 'placeholder' | 'reject';
  /**
   * Also apply the risky repairs to a lifted free-form input (a missing final newline or
   * `*** End Patch` added, prose around one patch dropped, other heredoc forms) when that makes it
   * match the grammar and, for a patch, Codex's parser; always with a `grammar_repaired` warning.
   * The safe patch rescues (apply-patch/rescue-apply-patch.ts) apply whatever this says.
   */
  grammarRepair: boolean;
  /** Append a short valid example payload to the descriptions of `apply_patch` and `exec`, for small models. */
  grammarExamples: boolean;
  grammarEnforcement: GrammarEnforcement;
  /** Deliver a tool call the engine left as assistant text as the call (defaults.ts DEFAULT_RECOVER_TEXT_TOOL_CALLS). */
  recoverTextToolCalls: boolean;
}

export const DEFAULT_BRIDGE_OPTIONS: Readonly<BridgeOptions> = Object.freeze({
  strategy: 'function_bridge',
  dropCustomTools: false,
  modelOverride: null,
  reasoningEffort: 'forward',
  replayReasoningField: 'both',
  replayReasoning: true,
  midConversationDeveloperRole: 'system',
  toolOutputParts: 'join',
  toolOutputImages: 'inline_user_message',
  grammarRepair: false,
  grammarExamples: false,
  grammarEnforcement: GRAMMAR_ENFORCEMENT_OFF,
  recoverTextToolCalls: DEFAULT_RECOVER_TEXT_TOOL_CALLS,
});

export function resolveBridgeOptions(partial: Partial<BridgeOptions> = {}): BridgeOptions {
  return { ...DEFAULT_BRIDGE_OPTIONS, ...partial };
}
