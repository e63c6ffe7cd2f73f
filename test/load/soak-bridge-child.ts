import { configureDedicatedProcess } from '../../src/server/dedicated-process.ts';
import { startBridgeServer } from '../../src/server/start-server.ts';

/*
 * The soak's bridge in a process of its own, bundled like dist/cli.js, so its RSS is the bridge's
 * alone (the soak test runs the clients and the test runner in its own process). Same settings as the
 * in-process soak's bridge, and V8's settings for a process that runs the bridge alone, as `serve`
 * sets them (dedicated-process.ts); the test talks to it over IPC: `ready` with its URL, and it stops
 * when the test disconnects.
 */
async function main(): Promise<void> {
  const backendUrl = process.env.FREEFORM_BRIDGE_SOAK_BACKEND_URL;
  if (!backendUrl) throw new Error('soak bridge: FREEFORM_BRIDGE_SOAK_BACKEND_URL is not set');
  configureDedicatedProcess();
  const bridge = await startBridgeServer({ backendUrl, keepaliveSeconds: 1, upstreamIdleTimeoutSeconds: 5 });
  process.on('disconnect', () => {
    void bridge.close().then(() => process.exit(0));
  });
  process.send?.({ type: 'ready', url: bridge.url });
}

main().catch((error: unknown) => {
  process.stderr.write(`soak bridge: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
