import type { ExchangeEndEvent, ExchangeOutcome, ExchangeStartEvent } from '../core/traffic/traffic-event.ts';
import type { BridgeWarning } from '../core/warnings.ts';
import { styled, type StyledText, type TerminalLine, type TerminalStyle } from '../core/terminal-text.ts';

/**
 * The terminal's live view of `serve`: one compact line per round trip, and one line of its own per
 * warning, so a person watching the bridge sees Codex's requests pass, what came back as tool calls
 * and what was rewritten, without the traffic panel. Pure text: the CLI decides where it goes and
 * whether it is coloured.
 */

/** What the line needs from the start event; null when the start was never seen. */
export type RoundTripStart = Pick<ExchangeStartEvent, 'model' | 'upstreamModel'>;

export interface RoundTripLineOptions {
  /** The clock time to print, already formatted (`formatClockTime`). */
  time: string;
  /** Adds the exchange id and the backend's timings, for `--log-level debug`. */
  detailed: boolean;
}

function joinPieces(parts: ReadonlyArray<string | StyledText>, separator: string): Array<string | StyledText> {
  return parts.flatMap((part, index) => (index === 0 ? [part] : [separator, part]));
}

const OUTCOME_STYLES: Record<ExchangeOutcome, TerminalStyle> = { completed: 'green', incomplete: 'yellow', failed: 'red', rejected: 'red', aborted: 'yellow' };

/** `HH:MM:SS` in local time: the terminal is read next to the user's own clock. */
export function formatClockTime(date: Date): string {
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((part) => String(part).padStart(2, '0')).join(':');
}

/** `0.4 s`, `12.3 s`, `2 min 05 s`: long generations read in minutes. */
export function formatDuration(milliseconds: number | null): string {
  if (milliseconds === null) return '? s';
  if (milliseconds < 60_000) return `${(milliseconds / 1000).toFixed(1)} s`;
  const seconds = Math.round(milliseconds / 1000);
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/** The tool calls delivered to Codex, by name, in order of first appearance: `apply_patch, exec_command ×2`. */
export function describeToolCalls(output: ExchangeEndEvent['output']): string | null {
  const counts = new Map<string, number>();
  for (const item of output) {
    if (item.type !== 'custom_tool_call' && item.type !== 'function_call') continue;
    const name = item.namespace ? `${item.namespace}.${item.name}` : item.name;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  if (counts.size === 0) return null;
  return [...counts].map(([name, count]) => (count === 1 ? name : `${name} ×${count}`)).join(', ');
}

function describeModel(start: RoundTripStart | null): string {
  if (start === null) return '?';
  return start.upstreamModel === start.model ? start.model : `${start.model} → ${start.upstreamModel}`;
}

/** The round trip's own line: time, label, model, status, duration, tool calls, warning count. */
export function formatRoundTripLine(start: RoundTripStart | null, end: ExchangeEndEvent, options: RoundTripLineOptions): TerminalLine {
  const parts: Array<string | StyledText> = [
    styled(options.time, 'dim'),
    styled(end.roundTrip.text, 'cyan'),
    describeModel(start),
    styled(`${end.httpStatus} ${end.outcome}`, OUTCOME_STYLES[end.outcome]),
    formatDuration(end.timings.totalMs),
  ];
  const calls = describeToolCalls(end.output);
  if (calls !== null) parts.push(`calls: ${calls}`);
  if (end.warnings.length > 0) parts.push(styled(`${end.warnings.length} ${end.warnings.length === 1 ? 'warning' : 'warnings'}`, 'yellow'));
  if (options.detailed) {
    const { upstreamHeadersMs, firstDeltaMs } = end.timings;
    parts.push(styled(`${end.exchangeId}, backend headers ${formatDuration(upstreamHeadersMs)}, first delta ${formatDuration(firstDeltaMs)}`, 'dim'));
  }
  return joinPieces(parts, '  ');
}

/** One warning on a line of its own, naming the tool and the call it concerns. */
export function formatWarningLine(warning: BridgeWarning, options: Pick<RoundTripLineOptions, 'time'>): TerminalLine {
  const subject = [warning.tool ?? '(no tool)', warning.callId ?? '(no call)'].join(' ');
  // Good news travels on the same channel (one line per tool, once), but is not called a warning.
  const label = warning.kind === 'grammar_enforced' ? styled(`note ${warning.kind}`, 'green') : styled(`warning ${warning.kind}`, 'yellow');
  return [styled(options.time, 'dim'), '    ', label, `  ${subject}: ${warning.detail}`];
}
