/**
 * A stand-in for VS Code's extension host: its main thread runs a real TrafficStore fed by the
 * bridge's traffic (as the panel's store is, whether or not the panel is open) and measures its own
 * event-loop delay with monitorEventLoopDelay, the figure every other extension feels, and how busy
 * the thread was (eventLoopUtilization).
 *
 *   --mode in-process: the bridge on this thread, as the extension ran it before (the "before" figure);
 *   --mode worker:     the bridge in a worker thread (startBridgeInWorker), as the extension runs it now.
 *
 * Bench-only: nothing here is part of the product.
 */
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Logger } from '../../src/core/logger.ts';
import { redactSecrets } from '../../src/core/redact-secrets.ts';
import type { TrafficEvent } from '../../src/core/traffic/traffic-event.ts';
import { TrafficStore } from '../../src/extension/traffic-store.ts';
import { startBridgeInWorker } from '../../src/server/start-bridge-in-worker.ts';
import { encodeStartEvent, type BridgeTrafficEvent } from '../../src/server/start-event-encoding.ts';
import { startBridgeServer, type RunningBridge } from '../../src/server/start-server.ts';
import type { ChildMessage, ParentMessage } from '../child-protocol.ts';
import { serveParent } from './serve-parent.ts';

/** The extension always has secrets to redact (the bridge token at least): redaction is part of the cost. */
const SECRETS = ['ffb_bench-token-0123456789abcdef', 'sk-bench-backend-key-0123456789'];

const logger: Logger = {
  error: (text, details) => process.stderr.write(`bench extension host error: ${text} ${details ? JSON.stringify(details) : ''}\n`),
  warn: (text, details) => process.stderr.write(`bench extension host warn: ${text} ${details ? JSON.stringify(details) : ''}\n`),
  info: () => undefined,
  debug: () => undefined,
};

function send(message: ChildMessage): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { backend: { type: 'string' }, mode: { type: 'string' }, worker: { type: 'string' } } });
  if (!values.backend) throw new Error('bench extension host: --backend URL is required');
  const redact = (text: string): string => redactSecrets(text, SECRETS);
  const store = new TrafficStore({ redactText: redact });
  const onTraffic = (event: BridgeTrafficEvent): void => void store.apply(event);
  // The bridge on this thread (as before the worker) hands its start events over as objects; they are
  // encoded here, on this thread, into the form the store takes, as the worker does on its own.
  const onTrafficHere = (event: TrafficEvent): void => onTraffic(event.type === 'exchange-start' ? encodeStartEvent(event, redact) : event);
  const common = { backendUrl: values.backend, host: '127.0.0.1', port: 0, logger, getSecrets: () => SECRETS };
  const residentBytesBeforeBridge = process.memoryUsage.rss();
  let bridge: RunningBridge;
  if (values.mode === 'worker') bridge = await startBridgeInWorker({ ...common, onTraffic, workerScript: values.worker });
  else if (values.mode === 'in-process') bridge = await startBridgeServer({ ...common, onTraffic: onTrafficHere });
  else throw new Error(`bench extension host: --mode must be in-process or worker, not ${String(values.mode)}`);

  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const milliseconds = (nanoseconds: number): number => nanoseconds / 1e6;
  let utilizationAtStart: EventLoopUtilization = performance.eventLoopUtilization();
  process.on('message', (message: ParentMessage) => {
    if (message.type !== 'event-loop-delay') return;
    if (message.action === 'start') {
      histogram.reset();
      histogram.enable();
      utilizationAtStart = performance.eventLoopUtilization();
    } else histogram.disable();
    const summaries = store.getSummaries();
    send({
      type: 'event-loop-delay',
      id: message.id,
      delay: { p50: milliseconds(histogram.percentile(50)), p99: milliseconds(histogram.percentile(99)), max: milliseconds(histogram.max), count: histogram.count },
      busy: performance.eventLoopUtilization(utilizationAtStart).utilization,
      store: { exchanges: summaries.length, completed: summaries.filter((summary) => summary.status === 'completed').length, retainedBodyBytes: store.getStats().retainedBodyBytes },
    });
  });
  serveParent(`extension host (${values.mode})`, bridge.url, () => bridge.close(), { residentBytesBeforeBridge });
}

main().catch((error: unknown) => {
  process.stderr.write(`bench extension host: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
