import type { DoctorFinding, DoctorReport, DoctorSeverity } from './diagnose.ts';

/** The doctor's report as text: a short table for a terminal, a full report to read and copy, one line for a log. */

const MARKS: Readonly<Record<DoctorSeverity, string>> = { ok: 'ok', info: 'note', warning: 'WARN', error: 'FAIL' };

function describeHeadline(report: DoctorReport): string {
  // Nothing identified (nothing answered): the URL alone says which backend.
  if (report.engine === null && report.models.length === 0) return report.backendUrl;
  const engine = `${report.engineLabel}${report.version === null ? '' : ` ${report.version}`}`;
  const model = report.model === null ? '' : `, model '${report.model}'`;
  const context = report.contextWindow === null ? '' : `, context ${report.contextWindow} tokens`;
  return `${engine} at ${report.backendUrl}${model}${context}`;
}

export function describeVerdict(report: DoctorReport): string {
  const warnings = report.findings.filter((entry) => entry.severity === 'warning').length;
  if (report.codexWouldFail) return 'Codex would fail with this engine as it is: fix what is marked FAIL.';
  const checked = report.probed ? 'ready for Codex' : 'no problem found without generating (run the full doctor to probe tool calls)';
  return warnings === 0 ? `${checked[0]?.toUpperCase()}${checked.slice(1)}.` : `${checked[0]?.toUpperCase()}${checked.slice(1)}, with ${warnings} ${warnings === 1 ? 'warning' : 'warnings'}.`;
}

/** The terminal table: one row per check, then the fixes of what is not ok. */
export function renderDoctorTable(report: DoctorReport): string {
  const width = Math.max(...report.findings.map((entry) => entry.check.length), 5);
  const lines = [describeHeadline(report), ''];
  for (const entry of report.findings) lines.push(`  ${MARKS[entry.severity].padEnd(4)}  ${entry.check.padEnd(width)}  ${entry.summary}`);
  const toFix = report.findings.filter((entry) => entry.fix !== null && (entry.severity === 'error' || entry.severity === 'warning'));
  if (toFix.length > 0) {
    lines.push('');
    // Checks that share a fix (a tool call, streamed and not) get it once.
    const byFix = new Map<string, DoctorFinding[]>();
    for (const entry of toFix) byFix.set(entry.fix ?? '', [...(byFix.get(entry.fix ?? '') ?? []), entry]);
    for (const [fix, entries] of byFix) {
      lines.push(`${entries.map((entry) => entry.check).join(', ')}: ${fix}`);
      const bridge = entries.find((entry) => entry.bridge !== null)?.bridge;
      if (bridge !== undefined && bridge !== null) lines.push(`  meanwhile ${bridge}`);
    }
  }
  lines.push('', describeVerdict(report));
  return `${lines.join('\n')}\n`;
}

function renderFinding(entry: DoctorFinding): string {
  const lines = [`- **${MARKS[entry.severity]}** ${entry.check}: ${entry.summary}`];
  if (entry.fix !== null) lines.push(`  - Fix: \`${entry.fix}\``);
  if (entry.bridge !== null) lines.push(`  - Meanwhile ${entry.bridge}.`);
  return lines.join('\n');
}

/** The full report (Markdown), for the extension's "Show Report" and for bug reports. */
export function renderDoctorReport(report: DoctorReport): string {
  const lines = [
    '# Freeform Bridge: engine doctor',
    '',
    `- Backend: ${report.backendUrl}`,
    `- Engine: ${report.engineLabel}${report.version === null ? '' : ` ${report.version}`}`,
    `- Model: ${report.model ?? '(none)'}${report.models.length > 1 ? ` (the engine lists: ${report.models.join(', ')})` : ''}`,
    `- Context window: ${report.contextWindow === null ? 'not reported' : `${report.contextWindow} tokens (${report.contextWindowSource ?? 'reported'})`}`,
    `- Generation probes: ${report.probed ? 'run' : 'not run'}`,
    '',
    '## Checks',
    '',
    ...report.findings.map(renderFinding),
    '',
    `**${describeVerdict(report)}**`,
    '',
  ];
  return lines.join('\n');
}

/**
 * One line: the headline and every problem with its fix, errors first (serve's start-up line,
 * notifications). Every one, not the worst alone: fixing one and restarting only to meet the next
 * costs the user a round per problem.
 */
export function summariseDoctorReport(report: DoctorReport): string {
  if (report.worst === null) return `backend ${describeHeadline(report)}: ${report.probed ? 'ready for Codex' : 'looks right'}`;
  const problems = (['error', 'warning'] as const).flatMap((severity) => report.findings.filter((entry) => entry.severity === severity));
  const described = problems.map((entry) => `${entry.check}: ${entry.summary}${entry.fix === null ? '' : `; fix: ${entry.fix}`}`);
  return `backend ${describeHeadline(report)}: ${described.join(' | ')}`;
}
