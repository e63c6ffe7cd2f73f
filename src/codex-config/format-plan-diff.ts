import { formatUnifiedDiff } from '../core/codex-config/unified-diff.ts';
import { redactSecrets } from '../core/redact-secrets.ts';
import type { CodexConfigWritePlan } from './plan-codex-config-write.ts';


/** The whole plan as one diff, with secrets (the bridge token) replaced by a marker. */
export function formatCodexConfigPlanDiff(plan: CodexConfigWritePlan, secrets: readonly (string | null)[]): string {
  return plan.files
    .filter((file) => file.changed)
    .map((file) => redactSecrets(formatUnifiedDiff(file.path, file.currentText, file.newText), secrets))
    .join('');
}
