import type { BridgeWarning, WarningLedger } from '../warnings.ts';

/**
 * A warning produced while lowering, before we know the request will go out. "Once per process"
 * warnings (grammar_not_enforced, hosted_tool_dropped …) carry their ledger key and are only
 * checked against the ledger after lowering succeeded: a request rejected with a 400 must not use
 * up the single time a warning is shown.
 */
export interface PendingWarning {
  warning: BridgeWarning;
  /** Null: shown on every request. */
  once: { key: string; fingerprint: string } | null;
}

export function createPendingWarning(warning: BridgeWarning, once: { key: string; fingerprint: string } | null = null): PendingWarning {
  return { warning, once };
}

/** Keeps per-request warnings, and once-per-process warnings the ledger has not seen yet (in order). */
export function resolvePendingWarnings(pending: readonly PendingWarning[], ledger: WarningLedger): BridgeWarning[] {
  return pending
    .filter((entry) => entry.once === null || ledger.shouldEmit(entry.once.key, entry.once.fingerprint))
    .map((entry) => entry.warning);
}
