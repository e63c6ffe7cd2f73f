/**
 * Warnings are data, never just log lines: the server, the log file and the
 * traffic panel all render the same objects.
 */
export type WarningKind =
  | 'grammar_not_enforced'
  | 'grammar_enforced'
  | 'grammar_pattern_violated'
  | 'custom_description_missing'
  | 'unknown_format_type'
  | 'hosted_tool_dropped'
  | 'custom_tool_dropped'
  | 'tool_choice_rewritten'
  | 'tool_name_shortened'
  | 'tools_filtered'
  | 'unknown_item_dropped'
  | 'unsupported_content_part'
  | 'image_detail_changed'
  | 'configuration_update_applied'
  | 'replay_rewrapped'
  | 'extra_keys'
  | 'non_string_payload'
  | 'missing_key'
  | 'not_json'
  | 'not_object'
  | 'empty_arguments'
  | 'double_encoded'
  | 'truncated'
  | 'grammar_mismatch'
  | 'grammar_repaired'
  | 'grammar_uncompilable'
  | 'grammar_check_skipped'
  | 'duplicate_call_id'
  | 'input_delta_mismatch'
  | 'context_truncated_by_backend'
  | 'finish_reason_unusual'
  | 'reasoning_effort_changed'
  | 'backend_waiting'
  | 'invalid_utf8'
  | 'tool_call_as_text';

export interface BridgeWarning {
  kind: WarningKind;
  /** Tool name as Codex knows it (bare name, namespace separate), when the warning concerns a tool. */
  tool: string | null;
  /** The call id, when the warning concerns one call. */
  callId: string | null;
  /** One human sentence: what happened and what was delivered instead. */
  detail: string;
  /** The raw payload (arguments text, dropped item JSON …) kept for the traffic view. */
  raw?: string;
}

export function createWarning(
  kind: WarningKind,
  detail: string,
  fields: { tool?: string | null; callId?: string | null; raw?: string } = {},
): BridgeWarning {
  const warning: BridgeWarning = { kind, tool: fields.tool ?? null, callId: fields.callId ?? null, detail };
  if (fields.raw !== undefined) warning.raw = fields.raw;
  return warning;
}

/**
 * Decides whether a "once per process" warning should be emitted again. Codex resends the same
 * tools on every request, so per-request grammar/hosted-tool warnings would flood the panel.
 * The owner (server or test) creates one ledger per process and passes it in:
 * core keeps no module-level state.
 */
export interface WarningLedger {
  /** True the first time `key` is seen with this `fingerprint`; false while it stays the same. */
  shouldEmit(key: string, fingerprint: string): boolean;
}

export function createWarningLedger(): WarningLedger {
  const seen = new Map<string, string>();
  return {
    shouldEmit(key, fingerprint) {
      if (seen.get(key) === fingerprint) return false;
      seen.set(key, fingerprint);
      return true;
    },
  };
}
