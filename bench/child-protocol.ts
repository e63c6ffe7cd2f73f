/**
 * Messages between the benchmark and its child processes (the bridge, the mock backend, the
 * reference minimal hop and the extension host stand-in), over Node's IPC channel. Bench-only: nothing here is part of the product.
 */

export interface ReadyMessage {
  type: 'ready';
  url: string;
  /** The extension host child: its RSS before it started the bridge, so the bridge's own share can be read. */
  residentBytesBeforeBridge?: number;
}

/** Bridge and hop children: optionally collect garbage (they run with --expose-gc), then report memory. */
export interface MemoryRequest {
  type: 'memory';
  id: number;
  collectGarbage: boolean;
}

export interface MemoryReply {
  type: 'memory';
  id: number;
  memory: NodeJS.MemoryUsage;
}

/** Mock child: start or stop timestamping every written stream frame that carries an event token. */
export interface RecordWritesRequest {
  type: 'record-writes';
  id: number;
  enabled: boolean;
}

/** Mock child: hand over (and forget) the recorded write times. */
export interface TakeWritesRequest {
  type: 'take-writes';
  id: number;
}

export interface WritesReply {
  type: 'writes';
  id: number;
  /**
   * [event index, CLOCK_MONOTONIC milliseconds] per token written. `process.hrtime` reads the
   * system-wide monotonic clock, so the parent can compare these with its own readings.
   */
  writes: Array<[number, number]>;
}

export interface AcknowledgeReply {
  type: 'acknowledge';
  id: number;
}

/** Extension host child: start a fresh event-loop delay window, or end it and report it. */
export interface EventLoopDelayRequest {
  type: 'event-loop-delay';
  id: number;
  action: 'start' | 'take';
}

export interface EventLoopDelayReply {
  type: 'event-loop-delay';
  id: number;
  /** Milliseconds, as monitorEventLoopDelay records them (each sample includes its 1 ms interval). */
  delay: { p50: number; p99: number; max: number; count: number };
  /** Share of the window the main thread was busy (performance.eventLoopUtilization), 0 to 1. */
  busy: number;
  /** The traffic store's round trips and retained bytes at the end of the window. */
  store: { exchanges: number; completed: number; retainedBodyBytes: number };
}

export interface StopRequest {
  type: 'stop';
}

export type ParentMessage = MemoryRequest | RecordWritesRequest | TakeWritesRequest | EventLoopDelayRequest | StopRequest;
export type ChildMessage = ReadyMessage | MemoryReply | WritesReply | AcknowledgeReply | EventLoopDelayReply;

/** Milliseconds on the system-wide monotonic clock (the same in every process on the machine). */
export function monotonicMilliseconds(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
