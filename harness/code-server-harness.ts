/**
 * Starts and stops a throwaway code-server (VS Code server + web workbench) on 127.0.0.1 for one
 * test run.
 * Everything the server writes (profile, extensions, sockets, logs) stays in one temporary folder.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { findFreePort } from '../src/server/free-port.ts';

export const CHROMIUM_ARGUMENTS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  // Without these Chromium keeps calling Google hosts, which only adds noise offline.
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A fresh profile that stays quiet and offline (no AI runtime, no gallery updates, no git). */
const DEFAULT_SETTINGS: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'chat.disableAIFeatures': true,
  'git.enabled': false,
  'github.gitAuthentication': false,
  'security.workspace.trust.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'remote.autoForwardPorts': false,
  // Otherwise the extension host spawns a process every few seconds to look for listening ports,
  // a stall of 20 ms or more on its thread that the event-loop test would count as the bridge's.
  'remote.autoForwardPortsSource': 'output',
};

export interface CodeServer {
  url: string;
  port: number;
  directory: string;
  logFile: string;
  /** Runs the code-server CLI (e.g. `--install-extension x.vsix`) against this server's profile and extensions folder. */
  cli(...cliArguments: string[]): string;
  stop(): Promise<void>;
}

export interface CodeServerOptions {
  workspace: string;
  settings?: Record<string, unknown>;
  environment?: NodeJS.ProcessEnv;
  /** Keep the run folder (profile, logs) after stop, for debugging. */
  keep?: boolean;
}

/**
 * Prints the end of code-server's log after a failure: the extension host's own crash reasons end up
 * there, not in the page.
 */
export function printLogTail(server: Pick<CodeServer, 'logFile'>): void {
  let tail: string;
  try {
    tail = readFileSync(server.logFile, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return;
  }
  if (tail) console.error(`--- last lines of ${server.logFile} ---\n${tail}`);
}

export async function startCodeServer(options: CodeServerOptions): Promise<CodeServer> {
  const binary = process.env.CODE_SERVER_BIN;
  if (!binary || !existsSync(binary)) {
    throw new Error(`code-server not found at '${binary ?? ''}': run \`eval "$(bash scripts/setup-code-server.sh)"\` first (npm run test:vscode does)`);
  }
  const directory = mkdtempSync(join(tmpdir(), 'freeform-bridge-code-server-'));
  const userData = join(directory, 'user-data');
  mkdirSync(join(userData, 'User'), { recursive: true });
  writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify({ ...DEFAULT_SETTINGS, ...options.settings }, null, 2));
  const environment: NodeJS.ProcessEnv = { ...process.env, ...options.environment };
  // code-server 4.13x runs only on Node 24; the project's own Node stays 20.
  if (process.env.CODE_SERVER_NODE_BIN) environment.PATH = `${process.env.CODE_SERVER_NODE_BIN}${delimiter}${environment.PATH ?? ''}`;
  // VS Code server leaves vscode-ipc-*.sock in $TMPDIR and code-server writes logs and a heartbeat
  // under $XDG_DATA_HOME even with --user-data-dir: keep all of it inside the run folder.
  environment.TMPDIR = join(directory, 'tmp');
  mkdirSync(environment.TMPDIR);
  environment.XDG_DATA_HOME = join(directory, 'xdg-data');
  environment.XDG_CONFIG_HOME = join(directory, 'xdg-config');
  const configFile = join(directory, 'config.yaml');
  // Older code-server (4.100.x on Node 20) lacks these flags and honours ?payload= without the driver.
  const help = execFileSync(binary, ['--config', configFile, '--help'], { env: environment, encoding: 'utf8' });
  const optional: string[] = [];
  if (help.includes('--reconnection-grace-time')) optional.push('--reconnection-grace-time', '1');
  if (help.includes('--vscode-option')) optional.push('--vscode-option', 'enable-smoke-test-driver');
  const port = await findFreePort();
  const child = spawn(
    binary,
    [
      '--config', configFile,
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--user-data-dir', userData,
      '--extensions-dir', join(directory, 'extensions'),
      '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
      '--disable-getting-started-override', '--ignore-last-opened',
      ...optional,
      resolve(options.workspace),
    ],
    // Its own process group, so stop() takes down the extension host and watchers with it.
    { env: environment, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const logFile = join(directory, 'code-server.log');
  const log = createWriteStream(logFile);
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const killGroup = (signal: NodeJS.Signals): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  await new Promise<void>((resolveStarted, reject) => {
    const timer = setTimeout(() => {
      killGroup('SIGKILL');
      reject(new Error(`code-server did not start within 60 s; see ${logFile}`));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`code-server exited early (${code}); see ${logFile}`));
    });
    child.stdout.on('data', (data: Buffer) => {
      if (/HTTP server listening on/.test(String(data))) {
        clearTimeout(timer);
        resolveStarted();
      }
    });
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      killGroup('SIGTERM');
      await new Promise<void>((resolveStopped) => {
        const timer = setTimeout(() => {
          killGroup('SIGKILL');
          resolveStopped();
        }, 5_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolveStopped();
        });
      });
    }
    if (!options.keep) rmSync(directory, { recursive: true, force: true });
  };
  const cli = (...cliArguments: string[]): string =>
    execFileSync(binary, ['--config', configFile, '--user-data-dir', userData, '--extensions-dir', join(directory, 'extensions'), ...cliArguments], { env: environment, encoding: 'utf8' });
  return { url: `http://127.0.0.1:${port}`, port, directory, logFile, cli, stop };
}

/** Runs a command from the command palette (F1) as a user does: typed, its row waited for, Enter. */
export async function runPaletteCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('Escape');
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 10_000 });
  await page.keyboard.press('Enter');
}
