import { GCProfiler } from 'node:v8';
import { startBridgeServer } from '../src/server/start-server.ts';

/*
 * The soak's bridge in a process of its own, bundled like dist/cli.js, so its RSS is the bridge's
 * alone (the soak test runs the clients and the test runner in its own process), with the same
 * settings as the in-process soak's bridge; the test talks to it over IPC: `ready` with its URL, and
 * it stops when the test disconnects.
 *
 * `gc-profile-start` / `gc-profile-stop` (answered `gc-profile`) measure what the young-generation
 * GCs in between moved to the old generation, from Node's GC profiler (each GC's heap spaces before
 * and after it).
 */

export interface GcProfileMessage {
  type: 'gc-profile';
  scavenges: number;
  fullGcs: number;
  /** Bytes the scavenges added to the old generation (its small and large object spaces). */
  promotedBytes: number;
}

const OLD_GENERATION_SPACES = new Set(['old_space', 'large_object_space']);

function oldGenerationBytes(spaces: ReadonlyArray<{ spaceName: string; spaceUsedSize: number }>): number {
  return spaces.reduce((sum, space) => sum + (OLD_GENERATION_SPACES.has(space.spaceName) ? space.spaceUsedSize : 0), 0);
}

function summarise(profile: ReturnType<GCProfiler['stop']> | undefined): GcProfileMessage {
  const result: GcProfileMessage = { type: 'gc-profile', scavenges: 0, fullGcs: 0, promotedBytes: 0 };
  for (const entry of profile?.statistics ?? []) {
    if (entry.gcType === 'Scavenge') {
      result.scavenges += 1;
      result.promotedBytes += oldGenerationBytes(entry.afterGC.heapSpaceStatistics) - oldGenerationBytes(entry.beforeGC.heapSpaceStatistics);
    } else if (entry.gcType === 'MarkSweepCompact') {
      result.fullGcs += 1;
    }
  }
  return result;
}

async function main(): Promise<void> {
  const backendUrl = process.env.FREEFORM_BRIDGE_SOAK_BACKEND_URL;
  if (!backendUrl) throw new Error('soak bridge: FREEFORM_BRIDGE_SOAK_BACKEND_URL is not set');
  const bridge = await startBridgeServer({ backendUrl, keepaliveSeconds: 1, upstreamIdleTimeoutSeconds: 5 });
  let profiler: GCProfiler | null = null;
  process.on('message', (message: { type: string }) => {
    if (message.type === 'gc-profile-start') {
      profiler = new GCProfiler();
      profiler.start();
      process.send?.({ type: 'gc-profile-started' });
    } else if (message.type === 'gc-profile-stop') {
      const profile = profiler?.stop();
      profiler = null;
      process.send?.(summarise(profile));
    }
  });
  process.on('disconnect', () => {
    void bridge.close().then(() => process.exit(0));
  });
  process.send?.({ type: 'ready', url: bridge.url });
}

main().catch((error: unknown) => {
  process.stderr.write(`soak bridge: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
