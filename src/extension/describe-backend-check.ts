import type { DoctorReport } from '../core/doctor/diagnose.ts';

/** What Check Backend Connection found; the command returns it (the tests and other commands read it). */
export interface BackendCheckOutcome {
  reachable: boolean;
  backendUrl: string;
  models: string[];
  report: DoctorReport;
}

/**
 * The notification for the engine doctor's report: the worst problem with its fix, else what was found.
 * Kept free of `vscode` so it is unit-tested in plain Node. `suggestApiKey` is true when the backend
 * refused the request for want of a (valid) key.
 */
export function describeBackendCheck(report: DoctorReport, hasApiKey: boolean): { message: string; suggestApiKey: boolean; result: BackendCheckOutcome } {
  const backendFinding = report.findings.find((entry) => entry.check === 'Backend' && entry.severity === 'error');
  const refused = backendFinding !== undefined && /HTTP 40[13]/.test(backendFinding.summary);
  const result: BackendCheckOutcome = { reachable: backendFinding === undefined, backendUrl: report.backendUrl, models: report.models, report };
  const worst = report.worst;
  if (worst === null) {
    const engine = `${report.engineLabel}${report.version === null ? '' : ` ${report.version}`}`;
    const context = report.contextWindow === null ? '' : `, context ${report.contextWindow} tokens`;
    return { message: `Freeform Bridge: ${engine} at ${report.backendUrl} is ready for Codex (model '${report.model ?? ''}'${context}).`, suggestApiKey: false, result };
  }
  const keyHint = refused ? (hasApiKey ? ' The stored API key was refused: set the right one.' : ' Set the API key.') : '';
  const fix = worst.fix === null ? '' : ` Fix: ${worst.fix}.`;
  const others = report.findings.filter((entry) => entry !== worst && (entry.severity === 'error' || entry.severity === 'warning')).length;
  const more = others === 0 ? '' : ` (${others} more in the report)`;
  return { message: `Freeform Bridge: ${worst.check}: ${worst.summary}.${fix}${keyHint}${more}`, suggestApiKey: refused, result };
}
