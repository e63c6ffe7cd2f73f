import { appendFile } from 'node:fs/promises';
import type { Logger } from '../core/logger.ts';
import { redactSecrets } from '../core/redact-secrets.ts';
import type { ExchangeStartEvent, TrafficEvent, TrafficListener } from '../core/traffic-event.ts';

/**
 * `--log-file`: one JSON line per finished exchange (request summary, lowered request, lifted items,
 * warnings, timings, status). Start events wait here until their end arrives; writes are chained so
 * lines never interleave.
 */
export function createExchangeLogWriter(
  path: string,
  logger: Logger,
  getSecrets: () => ReadonlyArray<string | null> = () => [],
): { listener: TrafficListener; flush(): Promise<void> } {
  const pending = new Map<string, ExchangeStartEvent>();
  let chain: Promise<void> = Promise.resolve();

  const append = (record: Record<string, unknown>): void => {
    // Payloads and backend error bodies may quote the key; the file outlives the session.
    const line = `${redactSecrets(JSON.stringify(record), getSecrets())}\n`;
    chain = chain.then(() => appendFile(path, line, { mode: 0o600 })).catch((error: unknown) => {
      logger.error(`could not write the log file ${path}`, { error: String(error) });
    });
  };

  const listener = (event: TrafficEvent): void => {
    switch (event.type) {
      case 'exchange-start':
        pending.set(event.exchangeId, event);
        return;
      case 'exchange-delta':
        return;
      case 'exchange-end': {
        const start = pending.get(event.exchangeId);
        pending.delete(event.exchangeId);
        append({
          exchangeId: event.exchangeId,
          roundTrip: event.roundTrip,
          startedAt: start?.startedAt ?? null,
          model: start?.model ?? null,
          upstreamModel: start?.upstreamModel ?? null,
          clientStream: start?.clientStream ?? null,
          requestBytes: start?.requestBytes ?? null,
          tools: start?.tools ?? [],
          toolChoice: start?.toolChoice ?? null,
          loweredRequest: start?.loweredRequest ?? null,
          outcome: event.outcome,
          httpStatus: event.httpStatus,
          timings: event.timings,
          usage: event.usage,
          output: event.output,
          warnings: event.warnings,
          error: event.error,
        });
        return;
      }
      case 'exchange-rejected':
        append({ exchangeId: event.exchangeId, roundTrip: event.roundTrip ?? null, startedAt: event.startedAt, outcome: 'rejected', httpStatus: event.httpStatus, error: event.error });
        return;
      default: {
        const unexpected: never = event;
        throw new Error(`unknown traffic event ${JSON.stringify(unexpected)}`);
      }
    }
  };
  return { listener, flush: () => chain };
}
