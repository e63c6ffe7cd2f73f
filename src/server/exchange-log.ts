import { createWriteStream } from 'node:fs';
import type { Logger } from '../core/logger.ts';
import { redactSecrets } from '../core/redact-secrets.ts';
import type { ExchangeStartEvent, TrafficEvent, TrafficListener } from '../core/traffic/traffic-event.ts';

/**
 * Lines waiting for the disk may take this much memory; past it, lines are dropped and counted, and a
 * line saying how many were dropped follows once the disk catches up. A slow or stuck disk (a network
 * share, a full device) must not make the bridge hold every exchange in memory.
 */
export const MAX_PENDING_LOG_BYTES = 16 * 1024 * 1024;

/**
 * `--log-file`: one JSON line per finished exchange (request summary, lowered request, lifted items,
 * warnings, timings, status). Start events wait here until their end arrives. One stream stays open
 * for the bridge's life (appends in order, no open and close per line).
 */
export function createExchangeLogWriter(
  path: string,
  logger: Logger,
  getSecrets: () => ReadonlyArray<string | null> = () => [],
  maxPendingBytes: number = MAX_PENDING_LOG_BYTES,
): { listener: TrafficListener; flush(): Promise<void> } {
  const pending = new Map<string, ExchangeStartEvent>();
  const stream = createWriteStream(path, { flags: 'a', mode: 0o600 });
  let failed = false;
  let dropped = 0;
  stream.on('error', (error) => {
    if (!failed) logger.error(`could not write the log file ${path}`, { error: String(error) });
    failed = true;
  });
  const writeDropNotice = (): void => {
    if (dropped === 0 || failed) return;
    const notice = `${JSON.stringify({ outcome: 'log-lines-dropped', dropped, reason: `the log file fell more than ${maxPendingBytes / 1024 / 1024} MB behind` })}\n`;
    logger.warn(`the log file ${path} fell behind: ${dropped} lines were dropped`);
    dropped = 0;
    stream.write(notice);
  };
  stream.on('drain', writeDropNotice);

  const append = (record: Record<string, unknown>): void => {
    if (failed) return;
    if (stream.writableLength > maxPendingBytes) {
      dropped += 1;
      return;
    }
    // Payloads and backend error bodies may quote the key; the file outlives the session.
    stream.write(`${redactSecrets(JSON.stringify(record), getSecrets())}\n`);
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
        append({ exchangeId: event.exchangeId, roundTrip: event.roundTrip ?? null, startedAt: event.startedAt, outcome: 'rejected', httpStatus: event.httpStatus, error: event.error, repeated: event.repeated ?? 0 });
        return;
      default: {
        const unexpected: never = event;
        throw new Error(`unknown traffic event ${JSON.stringify(unexpected)}`);
      }
    }
  };
  return {
    listener,
    // The bridge is stopping: what is queued goes to the disk, then the file is closed.
    flush: () =>
      new Promise<void>((resolve) => {
        if (stream.closed || stream.destroyed) {
          resolve();
          return;
        }
        stream.once('close', () => resolve());
        writeDropNotice();
        stream.end();
      }),
  };
}
