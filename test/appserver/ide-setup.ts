/**
 * What a user of the Codex extension in VS Code has: a config.toml of their own, made to point at the
 * bridge by `freeform-bridge codex-config --make-default` (the real command), a bridge in front of a
 * mock backend, and a workspace folder. `codex app-server` then runs on that CODEX_HOME.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCodexConfigCommand } from '../../src/cli/codex-config-command.ts';
import type { CodexToolSurface } from '../../src/core/model-catalog/model-catalog-entry.ts';
import { startTestBridge, type StartedBridge } from '../support/bridge-harness.ts';
import { startMockBackend, type MockBackend, type MockTurn, type RecordedRequest } from '../../mock-backend/create-mock-backend.ts';
import { startAppServer, type AppServer } from './app-server-client.ts';
import { makeTempDir } from '../support/cleanup.ts';

export const IDE_MODEL = 'qwen3-coder';
export const IDE_PROVIDER_ID = 'freeform-bridge';

/** A config.toml as a user might have it before: their settings must survive the switch. */
export const USER_CONFIG = ['# my Codex settings', 'approval_policy = "on-request"', '', '[tui]', 'notifications = true', ''].join('\n');

export interface IdeSetupOptions {
  surface: CodexToolSurface;
  /** The bridge token; null runs the bridge without one (as `freeform-bridge serve` without --token-env). */
  token: string | null;
  responder?: (request: RecordedRequest) => MockTurn | Promise<MockTurn>;
  /** Start without a bridge; `startBridge()` brings it up later on the port config.toml names. */
  bridgeDown?: boolean;
}

export interface IdeSetup {
  scratch: string;
  codexHome: string;
  workspace: string;
  backend: MockBackend;
  bridge: StartedBridge | null;
  port: number;
  startBridge(): Promise<StartedBridge>;
  stopBridge(): Promise<void>;
  startAppServer(): AppServer;
  close(): Promise<void>;
}

export async function startIdeSetup(options: IdeSetupOptions): Promise<IdeSetup> {
  const scratch = makeTempDir(`freeform-bridge-appserver-${options.surface}-`);
  const codexHome = join(scratch, 'codex-home');
  const workspace = join(scratch, 'workspace');
  mkdirSync(codexHome);
  mkdirSync(workspace);
  writeFileSync(join(codexHome, 'config.toml'), USER_CONFIG);
  const backend = await startMockBackend({ profile: 'vllm-hermes', models: [IDE_MODEL] });
  if (options.responder) backend.setResponder(options.responder);
  let bridge: StartedBridge | null = null;
  let port = 0;
  const startBridge = async (): Promise<StartedBridge> => {
    bridge = await startTestBridge({ backendUrl: backend.url, port, getToken: () => options.token });
    port = bridge.port;
    return bridge;
  };
  const stopBridge = async (): Promise<void> => {
    await bridge?.close();
    bridge = null;
  };
  const appServers: AppServer[] = [];
  const close = async (): Promise<void> => {
    for (const server of appServers) await server.close();
    await stopBridge();
    await backend.close();
    rmSync(scratch, { recursive: true, force: true });
  };
  try {
    await startBridge();
    let output = '';
    const code = await runCodexConfigCommand(
      ['--codex-home', codexHome, '--base-url', `${bridge!.url}/v1`, '--model', IDE_MODEL, '--tool-surface', options.surface, '--make-default', ...(options.token === null ? [] : ['--token-env', 'FREEFORM_BRIDGE_TEST_TOKEN'])],
      {
        stdout: (text) => {
          output += text;
        },
        stderr: (text) => {
          output += text;
        },
        env: { HOME: scratch, ...(options.token === null ? {} : { FREEFORM_BRIDGE_TEST_TOKEN: options.token }) },
      },
    );
    if (code !== 0) throw new Error(`codex-config --make-default failed (${code}):\n${output}`);
    if (options.bridgeDown) await stopBridge();
  } catch (error) {
    await close();
    throw error;
  }
  return {
    scratch,
    codexHome,
    workspace,
    backend,
    get bridge() {
      return bridge;
    },
    get port() {
      return port;
    },
    startBridge,
    stopBridge,
    startAppServer() {
      const server = startAppServer({ codexHome, cwd: workspace });
      appServers.push(server);
      return server;
    },
    close,
  };
}
