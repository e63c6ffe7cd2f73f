import { formatClockTime, formatRoundTripLine, formatWarningLine, type RoundTripStart } from './round-trip-line.ts';
import type { TrafficListener } from '../core/traffic/traffic-event.ts';

export interface LiveViewOptions {
  /** Writes one line (without its newline). */
  write: (line: string) => void;
  /** A line per round trip (log level info and debug). */
  roundTrips: boolean;
  /** A line per warning (every level but error). */
  warnings: boolean;
  /** The exchange id and the backend's timings on each round-trip line (debug). */
  detailed: boolean;
  colour: boolean;
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
    if (options.roundTrips) options.write(formatRoundTripLine(start, event, { time, colour: options.colour, detailed: options.detailed }));
    if (options.warnings) for (const warning of event.warnings) options.write(formatWarningLine(warning, { time, colour: options.colour }));
  };
}

/**
 * Colours only where a person reads them: a terminal, unless NO_COLOR is set to anything
 * (no-color.org) or the terminal says it cannot show them. A pipe or a file gets plain text.
 */
export function shouldUseColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env.NO_COLOR ?? '') === '' && env.TERM !== 'dumb';
}
