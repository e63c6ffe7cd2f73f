import { formatClockTime, formatRoundTripLine, formatWarningLine, type RoundTripStart } from './round-trip-line.ts';
import type { TerminalLine } from '../core/terminal-text.ts';
import type { TrafficListener } from '../core/traffic/traffic-event.ts';

export interface LiveViewOptions {
  /** Writes one line (without its newline), through the terminal writer. */
  write: (line: TerminalLine) => void;
  /** A line per round trip (log level info and debug). */
  roundTrips: boolean;
  /** A line per warning (every level but error). */
  warnings: boolean;
  /** The exchange id and the backend's timings on each round-trip line (debug). */
  detailed: boolean;
  now?: () => Date;
}

/**
 * `serve`'s terminal view, a traffic listener like the panel and the log file: it keeps each start's
 * model until the end arrives and then prints the round trip and its warnings. Failures and refusals
 * get their own line from the bridge's failure reporter (start-server.ts), with the backend named.
 */
export function createLiveView(options: LiveViewOptions): TrafficListener {
  const starts = new Map<string, RoundTripStart>();
  const now = options.now ?? (() => new Date());
  return (event) => {
    if (event.type === 'exchange-start') {
      if (options.roundTrips) starts.set(event.exchangeId, { model: event.model, upstreamModel: event.upstreamModel });
      return;
    }
    if (event.type !== 'exchange-end') return;
    const start = starts.get(event.exchangeId) ?? null;
    starts.delete(event.exchangeId);
    const time = formatClockTime(now());
    if (options.roundTrips) options.write(formatRoundTripLine(start, event, { time, detailed: options.detailed }));
    if (options.warnings) for (const warning of event.warnings) options.write(formatWarningLine(warning, { time }));
  };
}

