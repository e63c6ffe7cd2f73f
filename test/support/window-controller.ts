/**
 * One VS Code window's half of the extension, without VS Code: the bridge controller its extension
 * host would create, with what its panel would hear. Windows that share `portMemory` share the
 * remembered port, as windows share VS Code's global state.
 */
import { createSilentLogger } from '../../src/core/logger.ts';
import type { BridgeTrafficEvent } from '../../src/server/start-event-encoding.ts';
import { BridgeController, type StartResult } from '../../src/extension/bridge-controller.ts';
import type { BridgeSettings } from '../../src/extension/settings.ts';
import { bridgeWorkerScript } from './bridge-worker-script.ts';

export interface TestWindow {
  controller: BridgeController;
  /** Starts of a bridge this window runs arrive encoded (the bridge runs in a worker thread). */
  traffic: BridgeTrafficEvent[];
  takeOvers: StartResult[];
  settings: BridgeSettings;
}

export function createTestWindow(options: { token: string; backendUrl: string; port?: number; portMemory?: { port: number | undefined } }): TestWindow {
  const memory = options.portMemory ?? { port: undefined };
  const controller = new BridgeController({
    logger: createSilentLogger(),
    getBackendApiKey: () => null,
    getSecretValues: () => [options.token],
    getBridgeToken: () => options.token,
    bridgeWorkerScript: bridgeWorkerScript(),
    portMemory: {
      get: () => memory.port,
      set: async (port) => {
        memory.port = port;
      },
    },
  });
  const traffic: BridgeTrafficEvent[] = [];
  controller.onTraffic((event) => traffic.push(event));
  const takeOvers: StartResult[] = [];
  controller.onDidTakeOver((result) => takeOvers.push(result));
  return { controller, traffic, takeOvers, settings: createTestBridgeSettings({ backendUrl: options.backendUrl, port: options.port ?? 0 }) };
}

/** The extension's settings with their defaults, as `readBridgeSettings()` would return them. */
export function createTestBridgeSettings(overrides: Partial<BridgeSettings> = {}): BridgeSettings {
  return {
    backendUrl: 'http://127.0.0.1:9/v1',
    port: 0,
    model: null,
    strategy: 'function_bridge',
    grammarEnforcement: 'off',
    keepaliveSeconds: 15,
    backendTimeoutSeconds: 900,
    recoverTextToolCalls: true,
    autoStart: false,
    codexHome: null,
    codexProfile: 'freeform-bridge',
    ...overrides,
  };
}
