import type { ExchangeRejectedEvent, TrafficEvent, TrafficListener } from '../core/traffic/traffic-event.ts';

/**
 * Refused requests, reported once per cause and interval. A process hammering the bridge without the
 * token (or any client stuck retrying a bad request) makes thousands of refusals a second; a line for
 * each would fill the terminal and the log file and push the real round trips out of the panel. The
 * first refusal of a cause (status and code) passes at once; the ones after it within the interval
 * are counted and reported as one event at its end, whose `repeated` says how many it stands for.
 * Only the security refusals are coalesced: they come from whoever can reach the port. A request
 * with the token that is refused (bad JSON, an unknown item) is Codex's own round trip and is shown as
 * such. Everything else passes straight through; an interval of 0 passes everything.
 */
export const REFUSAL_REPORT_INTERVAL_MS = 10_000;

/** The codes security.ts refuses with, before a request proves anything. */
const SECURITY_REFUSAL_CODES: ReadonlySet<string> = new Set(['invalid_bridge_token', 'origin_not_allowed', 'host_not_allowed', 'missing_host', 'malformed_host']);

export interface RefusalCoalescer {
  listener: TrafficListener;
  /** Reports what is counted now (the bridge is stopping). */
  flush(): void;
}

interface Window {
  timer: NodeJS.Timeout;
  count: number;
  latest: ExchangeRejectedEvent;
}

export function createRefusalCoalescer(forward: TrafficListener, intervalMs: number = REFUSAL_REPORT_INTERVAL_MS): RefusalCoalescer {
  const windows = new Map<string, Window>();

  const report = (key: string, window: Window): void => {
    const seconds = Math.round(intervalMs / 1000);
    forward({
      ...window.latest,
      repeated: window.count,
      error: { ...window.latest.error, message: `${window.latest.error.message} (${window.count} more refused the same way within ${seconds} s)` },
    });
    window.count = 0;
    // A flood that goes on gets one report per interval; a quiet cause lets its window go.
    window.timer = setTimeout(() => close(key), intervalMs);
    window.timer.unref();
  };
  const close = (key: string): void => {
    const window = windows.get(key);
    if (!window) return;
    if (window.count > 0) report(key, window);
    else windows.delete(key);
  };

  const listener = (event: TrafficEvent): void => {
    if (event.type !== 'exchange-rejected' || intervalMs <= 0 || !SECURITY_REFUSAL_CODES.has(event.error.code ?? '')) {
      forward(event);
      return;
    }
    const key = `${event.httpStatus} ${event.error.code ?? ''}`;
    const window = windows.get(key);
    if (window) {
      window.count += 1;
      window.latest = event;
      return;
    }
    forward(event);
    const timer = setTimeout(() => close(key), intervalMs);
    timer.unref();
    windows.set(key, { timer, count: 0, latest: event });
  };

  return {
    listener,
    flush() {
      for (const [key, window] of [...windows]) {
        clearTimeout(window.timer);
        windows.delete(key);
        if (window.count > 0) {
          report(key, window);
          clearTimeout(window.timer);
        }
      }
    },
  };
}
