/**
 * Drives the real `codex app-server` (JSON-RPC 2.0, one JSON object a line on stdio) the way the
 * Codex extension in VS Code does: on the user's own `$CODEX_HOME/config.toml`, no `-p`.
 *
 * Every process is started in its own process group and killed (the whole group) by `close()`;
 * `trackAppServers()` closes whatever a test left open, on every path.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { checkCodexAvailability } from '../../harness/codex-session.ts';
import { trackProcessGroup } from '../support/cleanup.ts';

export interface JsonRpcMessage {
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** A request the server sent us (an approval), with what we answered. */
export interface ServerRequestRecord {
  method: string;
  params: Record<string, unknown>;
  answer: Record<string, unknown>;
}

export interface AppServer {
  /** Notifications in arrival order. */
  notifications: JsonRpcMessage[];
  serverRequests: ServerRequestRecord[];
  stderr(): string;
  request(method: string, params: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>;
  notify(method: string, params?: Record<string, unknown>): void;
  /** Resolves with the first notification (already received or still to come) that matches. */
  waitForNotification(method: string, matches?: (params: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** `initialize` then `initialized`, as the extension opens every session. */
  initialize(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface StartAppServerOptions {
  codexHome: string;
  cwd: string;
  /** Answer to every server→client request; default `{decision:"accept"}`. */
  answerServerRequest?: (method: string, params: Record<string, unknown>) => Record<string, unknown>;
}

const open = new Set<AppServer>();

/** Closes every app-server still running when the calling test file ends. */
export function trackAppServers(after: (hook: () => Promise<void>) => void): void {
  after(async () => {
    for (const server of [...open]) await server.close();
  });
}

function describeMessage(message: JsonRpcMessage): string {
  return JSON.stringify(message).slice(0, 500);
}

export function startAppServer(options: StartAppServerOptions): AppServer {
  const { binary } = checkCodexAvailability();
  const environment: NodeJS.ProcessEnv = { ...process.env, CODEX_HOME: options.codexHome };
  // Nothing from the machine may leak in: the provider in config.toml is all Codex gets.
  delete environment.OPENAI_API_KEY;
  delete environment.OPENAI_BASE_URL;
  // Tracked: the whole group is killed when this test process ends, on whatever path it ends.
  const child: ChildProcessWithoutNullStreams = trackProcessGroup(spawn(binary, ['app-server'], { cwd: options.cwd, env: environment, stdio: ['pipe', 'pipe', 'pipe'], detached: true }));
  const notifications: JsonRpcMessage[] = [];
  const serverRequests: ServerRequestRecord[] = [];
  const pending = new Map<number, { resolve: (value: Record<string, unknown>) => void; reject: (error: Error) => void; method: string }>();
  const waiters = new Set<() => void>();
  let stderr = '';
  let buffered = '';
  let nextId = 1;
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('close', () => {
      exited = true;
      for (const [, entry] of pending) entry.reject(new Error(`codex app-server exited before answering ${entry.method}\n${stderr.slice(-2_000)}`));
      pending.clear();
      for (const waiter of waiters) waiter();
      resolve();
    });
  });
  child.on('error', () => undefined);
  child.stdin.on('error', () => undefined);
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });

  const send = (message: JsonRpcMessage): void => {
    if (!exited) child.stdin.write(`${JSON.stringify(message)}\n`);
  };

  const handle = (message: JsonRpcMessage): void => {
    if (message.method !== undefined && message.id !== undefined) {
      const params = message.params ?? {};
      const answer = options.answerServerRequest?.(message.method, params) ?? { decision: 'accept' };
      serverRequests.push({ method: message.method, params, answer });
      send({ id: message.id, result: answer });
      return;
    }
    if (message.method !== undefined) {
      notifications.push(message);
      for (const waiter of waiters) waiter();
      return;
    }
    const entry = typeof message.id === 'number' ? pending.get(message.id) : undefined;
    if (!entry) return;
    pending.delete(message.id as number);
    if (message.error) entry.reject(new Error(`${entry.method} failed: ${message.error.message}`));
    else entry.resolve(message.result ?? {});
  };

  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line === '') continue;
      let message: JsonRpcMessage;
      try {
        message = JSON.parse(line) as JsonRpcMessage;
      } catch {
        stderr += `(stdout line that is not JSON) ${line}\n`;
        continue;
      }
      handle(message);
    }
  });

  const server: AppServer = {
    notifications,
    serverRequests,
    stderr: () => stderr,
    request(method, params, timeoutMs = 60_000) {
      const id = nextId;
      nextId += 1;
      return new Promise((resolve, reject) => {
        if (exited) {
          reject(new Error(`codex app-server has exited; cannot send ${method}\n${stderr.slice(-2_000)}`));
          return;
        }
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`no answer to ${method} within ${timeoutMs} ms\n${stderr.slice(-2_000)}`));
        }, timeoutMs);
        pending.set(id, {
          method,
          resolve: (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        send({ id, method, params });
      });
    },
    notify(method, params) {
      send(params === undefined ? { method } : { method, params });
    },
    waitForNotification(method, matches = () => true, timeoutMs = 90_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = notifications.find((message) => message.method === method && matches(message.params ?? {}));
          if (found) {
            finish();
            resolve(found.params ?? {});
            return true;
          }
          if (exited) {
            finish();
            reject(new Error(`codex app-server exited before ${method}\n${stderr.slice(-2_000)}`));
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`no ${method} within ${timeoutMs} ms; got: ${notifications.map(describeMessage).slice(-10).join('\n')}\n${stderr.slice(-2_000)}`));
        }, timeoutMs);
        const waiter = (): void => {
          check();
        };
        const finish = (): void => {
          clearTimeout(timer);
          waiters.delete(waiter);
        };
        if (!check()) waiters.add(waiter);
      });
    },
    async initialize() {
      const result = await server.request('initialize', { clientInfo: { name: 'freeform-bridge-tests', title: 'Freeform Bridge tests', version: '0.0.0' }, capabilities: { experimentalApi: true } });
      server.notify('initialized');
      return result;
    },
    async close() {
      open.delete(server);
      if (!exited && child.pid !== undefined) {
        try {
          // The whole group: app-server starts helpers (sandbox, shells) of its own.
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      }
      await exitedPromise;
    },
  };
  open.add(server);
  return server;
}

/** The text input item the extension sends for a typed prompt. */
export function textInput(text: string): Array<Record<string, unknown>> {
  return [{ type: 'text', text, text_elements: [] }];
}
