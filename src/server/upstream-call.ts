import { MAX_JSON_ANSWER_BYTES, type UpstreamClient, type UpstreamResponse } from './upstream-client.ts';

export interface UpstreamCallOptions {
  upstream: UpstreamClient;
  /** Backend silence (no byte, headers included) that ends the call; 0 disables. */
  idleTimeoutSeconds: number;
  /** After this much silence, `onLongWait` says what is awaited (once per silent stretch); 0 disables. */
  waitNoticeSeconds?: number;
  /** The backend has been silent for `waitNoticeSeconds`: the sentence names what is awaited and when the bridge gives up. */
  onLongWait?: (message: string) => void;
  /**
   * How long to wait for the backend's status before `onGraceElapsed`; 0 disables the window (a JSON
   * request has none: nothing of it can be committed early).
   */
  commitGraceMs: number;
  /** Aborted when the bridge stops. */
  shutdown?: AbortSignal;
  /** The backend is slow to even answer: time to commit the stream so Codex's idle timer is fed. */
  onGraceElapsed: () => void;
  /** The backend was silent too long; the call is aborted already. */
  onSilence: (message: string) => void;
  /** The bridge stops: answer now; the call is aborted right after. */
  onShutdown: (message: string) => void;
}

/** Something that says when it can take more writes (Codex's response). */
export interface Drainable {
  once(event: 'drain', listener: () => void): unknown;
}

/**
 * One call to the backend's `/chat/completions`: the commit grace window, the backend-silence
 * watchdog, the abort (Codex gone, silence, shutdown) and the backpressure that pauses the backend's
 * body while Codex's socket is full. It knows nothing of what the bytes mean.
 */
export class UpstreamCall {
  private readonly options: UpstreamCallOptions;
  private readonly controller = new AbortController();
  /** Armed at the start, so headers that never arrive are covered too (undici's own timers are off). */
  private watchdog: NodeJS.Timeout | null = null;
  /** Armed and refreshed with the watchdog; says what is awaited once the silence gets long. */
  private waitNotice: NodeJS.Timeout | null = null;
  /** Whether any byte of the body arrived: before it, the backend is still processing the prompt. */
  private bodyStarted = false;
  /** The backend's body while it is being read; paused while Codex's socket is full. */
  private reading: UpstreamResponse | null = null;
  /**
   * Codex is not reading (its socket buffer is full): the backend's stream is paused until it drains,
   * so a stalled client holds the backend back through TCP instead of the bridge buffering the whole
   * generation in memory.
   */
  private waitingForClient = false;
  private readonly onShutdown = (): void => {
    this.options.onShutdown('freeform-bridge stopped while this request was in flight; retry once the bridge runs again');
    this.abort(new Error('bridge stopping'));
  };

  constructor(options: UpstreamCallOptions) {
    this.options = options;
    // As with any abort listener: a stop that already happened is not told again.
    options.shutdown?.addEventListener('abort', this.onShutdown, { once: true });
    if (options.idleTimeoutSeconds > 0) {
      this.watchdog = setTimeout(() => this.onWatchdog(), options.idleTimeoutSeconds * 1000);
    }
    const noticeSeconds = options.waitNoticeSeconds ?? 0;
    if (noticeSeconds > 0 && options.onLongWait && (options.idleTimeoutSeconds === 0 || noticeSeconds < options.idleTimeoutSeconds)) {
      this.waitNotice = setTimeout(() => this.onWaitNotice(noticeSeconds), noticeSeconds * 1000);
      this.waitNotice.unref();
    }
  }

  /** Feeds both silence clocks: a byte arrived, or the silence was ours. */
  private refreshTimers(): void {
    this.watchdog?.refresh();
    // refresh() re-arms a notice that already fired, so each long silence is named once.
    this.waitNotice?.refresh();
  }

  private onWaitNotice(silentSeconds: number): void {
    if (this.waitingForClient) return;
    const { upstream, idleTimeoutSeconds } = this.options;
    const awaited = this.reading === null && !this.bodyStarted ? 'its answer (prompt processing of a long context can take minutes)' : this.bodyStarted ? 'its next token' : 'its first token (prompt processing of a long context can take minutes)';
    const giveUp = idleTimeoutSeconds > 0 ? `gives up in ${idleTimeoutSeconds - silentSeconds} s (the backend timeout, ${idleTimeoutSeconds} s)` : 'waits without a limit';
    this.options.onLongWait?.(`waiting for the backend at ${upstream.baseUrl}: nothing for ${silentSeconds} s while waiting for ${awaited}; the bridge ${giveUp}`);
  }

  private onWatchdog(): void {
    if (this.waitingForClient) {
      // The silence is ours: Codex is not reading, so neither are we.
      this.refreshTimers();
      return;
    }
    this.abort(new Error('backend idle timeout'));
    this.options.onSilence(
      `backend at ${this.options.upstream.baseUrl} sent nothing for ${this.options.idleTimeoutSeconds} s; giving up (the backend timeout: --backend-timeout-seconds for serve, freeformBridge.backendTimeoutSeconds in VS Code)`,
    );
  }

  abort(reason: Error): void {
    // A second abort changes nothing: the controller keeps the first reason.
    this.controller.abort(reason);
  }

  /**
   * Sends the request. Synchronous on purpose: once it returns, the upstream client holds the body
   * (as bytes) and the caller can let go of it before the long wait for the answer.
   */
  send(chatRequestBody: string | Uint8Array): Promise<UpstreamResponse> {
    return this.options.upstream.postChatCompletions(chatRequestBody, this.controller.signal);
  }

  /**
   * Resolves with the backend's status and headers. When the grace window ends first,
   * `onGraceElapsed` runs and the wait goes on.
   */
  async response(pending: Promise<UpstreamResponse>): Promise<UpstreamResponse> {
    if (this.options.commitGraceMs <= 0) return pending;
    let graceTimer: NodeJS.Timeout | undefined;
    const grace = new Promise<'grace'>((resolve) => {
      graceTimer = setTimeout(() => resolve('grace'), this.options.commitGraceMs);
    });
    try {
      const first = await Promise.race([pending, grace]);
      if (first !== 'grace') return first;
    } finally {
      clearTimeout(graceTimer);
    }
    this.options.onGraceElapsed();
    return pending;
  }

  /** Reads the body piece by piece until `onBytes` returns false or the body ends; each piece feeds the watchdog. */
  async read(response: UpstreamResponse, onBytes: (bytes: Buffer) => boolean): Promise<void> {
    this.refreshTimers();
    this.reading = response;
    try {
      await response.consume((bytes) => {
        this.bodyStarted = true;
        this.refreshTimers();
        return onBytes(bytes);
      });
    } finally {
      this.reading = null;
    }
  }

  /** Reads the whole body as text (a JSON answer to a stream request). */
  readText(response: UpstreamResponse): Promise<string> {
    this.refreshTimers();
    return response.text(MAX_JSON_ANSWER_BYTES, 'JSON answer');
  }

  /** Codex's socket is full: the backend's body waits until `client` drains. */
  holdUntilDrained(client: Drainable): void {
    if (this.waitingForClient || this.reading === null) return;
    this.waitingForClient = true;
    this.reading.pause();
    client.once('drain', () => {
      this.waitingForClient = false;
      // The backend was silent because we stopped reading it; its silence clock starts again now.
      this.refreshTimers();
      this.reading?.resume();
    });
  }

  /** The answer is over (or about to be): no more watchdog. */
  stopTimers(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
    if (this.waitNotice) clearTimeout(this.waitNotice);
    this.waitNotice = null;
  }

  /** Codex's response closed: nothing of this call may outlive it. */
  dispose(): void {
    this.stopTimers();
    this.options.shutdown?.removeEventListener('abort', this.onShutdown);
  }
}
