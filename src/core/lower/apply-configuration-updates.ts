import type { IndexedInputItem } from './hoist-additional-tools.ts';
import { createPendingWarning, type PendingWarning } from './pending-warning.ts';
import { createWarning } from '../warnings.ts';

export interface ConfigurationUpdates {
  /** The reasoning effort the last `configuration_update` that sets one asks for; null when none does. */
  reasoningEffort: string | null;
  warnings: PendingWarning[];
}

/** Keys that are not settings: the kind, the effort read here, and metadata every item may carry. */
const CONSUMED_OR_METADATA_KEYS: ReadonlySet<string> = new Set(['type', 'reasoning', 'id', 'status', 'provenance', 'internal_chat_message_metadata_passthrough']);

function describeIgnoredSettings(keys: readonly string[]): string {
  const names = keys.map((key) => `'${key}'`).join(', ');
  return keys.length === 1 ? `its setting ${names} has no Chat Completions equivalent and was ignored` : `its settings ${names} have no Chat Completions equivalent and were ignored`;
}

/**
 * `configuration_update` items change settings mid-conversation; the reasoning effort is the one
 * with a Chat Completions equivalent. They stay in the history, so the last one that sets an effort
 * wins over `reasoning.effort`, and every request of the session carries them: each warning is shown
 * once per conversation and value (ledger), not on every turn.
 */
export function applyConfigurationUpdates(items: readonly IndexedInputItem[], requestEffort: string | null, conversation: string | null): ConfigurationUpdates {
  const warnings: PendingWarning[] = [];
  let reasoningEffort: string | null = null;
  let appliedPath = '';
  let count = 0;
  for (const { item, index } of items) {
    if (item.type !== 'configuration_update') continue;
    const effort = item.reasoning?.effort;
    const ignored = Object.keys(item).filter((key) => !CONSUMED_OR_METADATA_KEYS.has(key));
    if (typeof effort === 'string' && effort !== '') {
      reasoningEffort = effort;
      appliedPath = `input[${index}]`;
      count += 1;
    }
    if (ignored.length > 0 || typeof effort !== 'string' || effort === '') {
      const raw = JSON.stringify(item);
      const detail = `input[${index}]: configuration_update: ${ignored.length > 0 ? describeIgnoredSettings(ignored) : 'it sets no reasoning effort; nothing was applied'}`;
      warnings.push(createPendingWarning(createWarning('configuration_update_applied', detail, { raw }), { key: `configuration_update_ignored:${conversation ?? ''}:${raw}`, fingerprint: '' }));
    }
  }
  if (reasoningEffort !== null) {
    const replaced =
      requestEffort === null ? ' (the request set none)' : requestEffort === reasoningEffort ? ' (the same as reasoning.effort)' : ` instead of reasoning.effort '${requestEffort}'`;
    const ordinal = count > 1 ? ` (the last of ${count} updates wins)` : '';
    warnings.push(
      createPendingWarning(
        createWarning('configuration_update_applied', `${appliedPath}: configuration_update sets reasoning effort '${reasoningEffort}'${ordinal}; applied${replaced}`),
        { key: `configuration_update:${conversation ?? ''}`, fingerprint: `${reasoningEffort}:${requestEffort ?? ''}` },
      ),
    );
  }
  return { reasoningEffort, warnings };
}
