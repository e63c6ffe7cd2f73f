/**
 * The bridge exactly as `freeform-bridge serve` starts it (same defaults), in a process of its own so
 * its RSS is the bridge's alone. Bench-only: started with --expose-gc, it collects garbage when the
 * parent asks over IPC before a memory reading; the product has no such hook.
 */
import { parseArgs } from 'node:util';
import type { Logger } from '../../src/core/logger.ts';
import { startBridgeServer } from '../../src/server/start-server.ts';
import { serveParent } from './serve-parent.ts';

/**
 * Warnings and errors only, like the CLI at its default level (it logs nothing per request but a line
 * per failed exchange). `--quiet` drops the warnings: the soak-memory phase fails exchanges on purpose.
 */
function createLogger(quiet: boolean): Logger {
  const write =
    (level: string): Logger['error'] =>
    (text, details) =>
      process.stderr.write(`bench bridge ${level}: ${text} ${details ? JSON.stringify(details) : ''}\n`);
  const silent = (): void => undefined;
  return { error: write('error'), warn: quiet ? silent : write('warn'), info: silent, debug: silent };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { backend: { type: 'string' }, quiet: { type: 'boolean' } } });
  if (!values.backend) throw new Error('bench bridge: --backend URL is required');
  const bridge = await startBridgeServer({ backendUrl: values.backend, host: '127.0.0.1', port: 0, logger: createLogger(values.quiet === true) });

  serveParent('bridge', bridge.url, () => bridge.close());
}

main().catch((error: unknown) => {
  process.stderr.write(`bench bridge: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
