/** The printed table (target / actual / pass) and its rows. */

export interface ReportRow {
  section: string;
  measurement: string;
  /** Human-readable target, or null for a figure reported without one. */
  target: string | null;
  actual: string;
  /** null when the row has no target. */
  passed: boolean | null;
}

export function formatMilliseconds(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const absolute = Math.abs(value);
  if (absolute >= 100) return `${value.toFixed(0)} ms`;
  if (absolute >= 10) return `${value.toFixed(1)} ms`;
  return `${value.toFixed(3)} ms`;
}

export function formatMegabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1_000_000) return `${(bytes / 1_000_000).toFixed(2)} MB`;
  return `${(bytes / 1_000).toFixed(1)} kB`;
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

export function renderTable(rows: readonly ReportRow[]): string {
  const headers = ['measurement', 'target', 'actual', 'pass'];
  const cells = rows.map((row) => [row.measurement, row.target ?? '—', row.actual, row.passed === null ? '' : row.passed ? 'PASS' : 'MISSED']);
  const widths = headers.map((header, column) => Math.max(header.length, ...cells.map((cell) => (cell[column] ?? '').length)));
  const line = (values: readonly string[]): string => `| ${values.map((value, column) => pad(value, widths[column] ?? 0)).join(' | ')} |`;
  const output: string[] = [line(headers), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`];
  let section = '';
  rows.forEach((row, index) => {
    if (row.section !== section) {
      section = row.section;
      output.push(line([`**${section}**`, '', '', '']));
    }
    output.push(line(cells[index] ?? []));
  });
  return output.join('\n');
}
