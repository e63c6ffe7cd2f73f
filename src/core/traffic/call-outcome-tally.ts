import type { ResponsesOutputItem } from '../responses/responses-output.ts';
import type { BridgeWarning, WarningKind } from '../warnings.ts';

/*
 * How the tool calls a model wrote arrived, so models and settings can be compared: valid as written,
 * repaired by the bridge (grammar_repaired), delivered with a warning, refused (cut off, never run), or
 * left as text by the engine and not recovered (delivered as a message, never run; a call recovered
 * from the text is delivered with a warning).
 * Counted per call from the items and warnings of one response; summed per model by the caller.
 */

/** Warnings that say the bridge changed the payload into the one reading it has, and nothing more. */
const REPAIR_KINDS: ReadonlySet<WarningKind> = new Set(['grammar_repaired', 'double_encoded', 'missing_key']);

export interface CallOutcomeCounts {
  valid: number;
  repaired: number;
  warned: number;
  refused: number;
  leftAsText: number;
}

export function emptyCallOutcomeCounts(): CallOutcomeCounts {
  return { valid: 0, repaired: 0, warned: 0, refused: 0, leftAsText: 0 };
}

/** The outcome of every tool call in one response; a call counts once, under its worst-known outcome. */
export function countCallOutcomes(items: readonly ResponsesOutputItem[], warnings: readonly BridgeWarning[]): CallOutcomeCounts {
  const counts = emptyCallOutcomeCounts();
  const byCall = new Map<string, BridgeWarning[]>();
  for (const warning of warnings) {
    // One warning per call markup the engine left in the text; a recovered call's names its call id.
    if (warning.kind === 'tool_call_as_text' && warning.callId === null) counts.leftAsText += 1;
    if (warning.callId === null) continue;
    const list = byCall.get(warning.callId) ?? [];
    list.push(warning);
    byCall.set(warning.callId, list);
  }
  const delivered = new Set<string>();
  for (const item of items) {
    if (item.type !== 'custom_tool_call' && item.type !== 'function_call') continue;
    delivered.add(item.call_id);
    const callWarnings = byCall.get(item.call_id) ?? [];
    const concerns = callWarnings.filter((warning) => warning.kind !== 'duplicate_call_id');
    if (concerns.length === 0) counts.valid += 1;
    else if (concerns.every((warning) => REPAIR_KINDS.has(warning.kind))) counts.repaired += 1;
    else counts.warned += 1;
  }
  for (const [callId, callWarnings] of byCall) {
    if (!delivered.has(callId) && callWarnings.some((warning) => warning.kind === 'truncated')) counts.refused += 1;
  }
  return counts;
}

export function addCallOutcomeCounts(into: CallOutcomeCounts, counts: CallOutcomeCounts): void {
  into.valid += counts.valid;
  into.repaired += counts.repaired;
  into.warned += counts.warned;
  into.refused += counts.refused;
  into.leftAsText += counts.leftAsText;
}

export function totalCallOutcomes(counts: CallOutcomeCounts): number {
  return counts.valid + counts.repaired + counts.warned + counts.refused + counts.leftAsText;
}

/** `qwen3-coder: 14 tool calls, 10 valid, 3 repaired, 1 with a warning, 0 refused, 0 left as text` */
export function formatCallOutcomeLine(model: string, counts: CallOutcomeCounts): string {
  const total = totalCallOutcomes(counts);
  return `${model || 'unknown model'}: ${total} tool call${total === 1 ? '' : 's'}, ${counts.valid} valid, ${counts.repaired} repaired, ${counts.warned} with a warning, ${counts.refused} refused, ${counts.leftAsText} left as text`;
}
