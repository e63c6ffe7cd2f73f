import { summariseDoctorReport } from '../core/doctor/render-doctor-report.ts';
import { runEngineDoctor } from '../server/engine-doctor.ts';

/**
 * After a start, the engine doctor's quick part (find and identify, no generation), so an unreachable
 * or misconfigured backend is said right away with its cause, instead of at Codex's first turn. The
 * bridge keeps running either way: the backend may simply not be up yet.
 */
export type BackendProbeResult =
  | { reachable: true; modelCount: number; summary: string; problem: string | null }
  | { reachable: false; url: string; reason: string; summary: string };

export async function probeBackend(backendUrl: string, apiKey: string | null, model: string | null = null): Promise<BackendProbeResult> {
  const report = await runEngineDoctor({ backendUrl, apiKey, configuredModel: model, probe: false });
  const summary = summariseDoctorReport(report);
  const unreachable = report.findings.find((entry) => entry.check === 'Backend' && entry.severity === 'error');
  if (unreachable !== undefined) return { reachable: false, url: `${report.backendUrl}/models`, reason: unreachable.summary, summary };
  const problem = report.worst === null ? null : `${report.worst.check}: ${report.worst.summary}${report.worst.fix === null ? '' : ` Fix: ${report.worst.fix}`}`;
  return { reachable: true, modelCount: report.models.length, summary, problem };
}
