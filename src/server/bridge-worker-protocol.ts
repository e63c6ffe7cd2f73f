import type { BridgeOptions } from '../core/bridge-options.ts';
import type { GrammarEnforcementSetting } from './grammar-enforcement.ts';
import type { BridgeTrafficEvent } from './start-event-encoding.ts';

/*
 * Messages between the bridge's worker thread (bridge-worker-entry.ts) and the thread that started it
 * (start-bridge-in-worker.ts). Only data crosses: functions such as the key and token readers stay
 * on the starting thread, which sends their current values instead, at start and on every change.
 */

/** The values the in-process bridge would read per request through its getters. */
export interface BridgeWorkerSecrets {
  /** The key sent upstream; null sends none. */
  backendApiKey: string | null;
  /** When set, every /v1 request must carry `Authorization: Bearer <token>`. */
  token: string | null;
  /** Further secrets to redact. */
  secrets: Array<string | null>;
}

/** The part of the bridge's configuration that is data (see BridgeServerConfig for each field). */
export interface BridgeWorkerSettings {
  backendUrl: string;
  host?: string;
  port?: number;
  options?: Partial<BridgeOptions>;
  grammarEnforcement?: GrammarEnforcementSetting;
  keepaliveSeconds?: number;
  commitGraceMs?: number;
  upstreamIdleTimeoutSeconds?: number;
  logFile?: string;
}

/**
 * `workerData` of the worker: serve (run the bridge), or follow (stream the traffic of the bridge
 * another VS Code window runs, GET /v1/bridge/traffic, with `token` as its Authorization).
 */
export type BridgeWorkerData =
  | { kind: 'serve'; settings: BridgeWorkerSettings; secrets: BridgeWorkerSecrets }
  | { kind: 'follow'; url: string; token: string; secrets: BridgeWorkerSecrets };

export type HostToWorkerMessage = { type: 'secrets'; secrets: BridgeWorkerSecrets } | { type: 'close' };

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

export type WorkerToHostMessage =
  | { type: 'listening'; url: string; host: string; port: number; instanceId: string }
  /** The start failed; `code` is the listen error's (EADDRINUSE …), so the host can rebuild the same error. */
  | { type: 'start-failed'; message: string; cause: { message: string; code: string | null } | null }
  | { type: 'log'; level: LogLevel; message: string; details?: Record<string, unknown> }
  /** Deltas, ends and refusals as they are; a start with its lowered request encoded (its bytes transferred). */
  | { type: 'traffic'; event: BridgeTrafficEvent }
  /** Following: the traffic stream is open; it skipped a frame that is no traffic event; it ended (not by close). */
  | { type: 'follow-open' }
  | { type: 'follow-skipped'; detail: string }
  | { type: 'follow-end'; reason: string }
  /** close() finished: every event before this message has been posted. */
  | { type: 'closed' };
