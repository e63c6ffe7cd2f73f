import * as vscode from 'vscode';
import { createBackendKeyOriginGuard } from './backend-key-origin.ts';
import { BridgeController } from './bridge-controller.ts';
import { watchForBackendFailures, watchForTakeOver } from './bridge-notices.ts';
import { BridgeSecrets } from './bridge-secrets.ts';
import { startBridge } from './bridge-start.ts';
import { registerCheckBackendCommand } from './commands/check-backend.ts';
import { providerIdForProfile } from '../core/codex-config/codex-profile-options.ts';
import { isCodexDefaultPointedAtBridge } from '../codex-config/plan-codex-config-write.ts';
import { resolveCodexHome } from './codex-command.ts';
import { registerCopyCodexCommand } from './commands/copy-codex-command.ts';
import { registerExportTrafficCommand } from './commands/export-traffic.ts';
import { registerSetBackendApiKeyCommand } from './commands/set-backend-api-key.ts';
import { registerShowLogCommand } from './commands/show-log.ts';
import { registerShowTrafficCommand } from './commands/show-traffic.ts';
import { registerStartCommand } from './commands/start.ts';
import { registerStopCommand } from './commands/stop.ts';
import { registerToggleCommand } from './commands/toggle.ts';
import { lastCodexConfigWriteMemory, type ExtensionServices } from './extension-services.ts';
import { createOutputChannelLogger } from './output-channel-logger.ts';
import { watchSettingChanges } from './settings-change-listener.ts';
import { readBridgeSettings } from './settings.ts';
import { createBridgeStatusBar } from './status-bar.ts';
import { createTestApi, type FreeformBridgeTestApi } from './test-api.ts';
import { TrafficPanel } from './traffic-panel.ts';
import { createWorkspaceSettingGuard } from './workspace-setting-guard.ts';
import { registerWriteCodexConfigCommand } from './commands/write-codex-config.ts';

const REMEMBERED_PORT_KEY = 'freeformBridge.rememberedPort';

/** deactivate() has no context argument; this is how it reaches the running bridge to close it. */
let stopBridgeOnDeactivate: (() => Promise<void>) | null = null;

/** Builds the shared parts, then wires the commands and listeners (each in its own file) to them. */
export async function activate(context: vscode.ExtensionContext): Promise<FreeformBridgeTestApi | undefined> {
  const channel = vscode.window.createOutputChannel('Freeform Bridge', { log: true });
  context.subscriptions.push(channel);
  // The logger redacts the secrets, and loading them may need to log: it reads them once they exist.
  let loadedSecrets: BridgeSecrets | null = null;
  const logger = createOutputChannelLogger(channel, () => loadedSecrets?.listSecretValues() ?? []);
  const secrets = await BridgeSecrets.load(context.secrets, logger, readBridgeSettings().backendUrl);
  loadedSecrets = secrets;
  context.subscriptions.push(secrets);
  const workspaceSettingGuard = createWorkspaceSettingGuard(logger);
  context.subscriptions.push(workspaceSettingGuard);

  const controller = new BridgeController({
    logger,
    getBackendApiKey: (backendUrl) => secrets.getBackendApiKeyFor(backendUrl),
    getBridgeToken: () => secrets.getBridgeToken(),
    getSecretValues: () => secrets.listSecretValues(),
    portMemory: {
      get: () => context.globalState.get<number>(REMEMBERED_PORT_KEY),
      set: (port) => context.globalState.update(REMEMBERED_PORT_KEY, port),
    },
  });
  // The bridge runs in a worker thread: it is handed the key and the token again whenever they change.
  context.subscriptions.push(secrets.onDidChangeValues(() => controller.refreshSecrets()));
  stopBridgeOnDeactivate = () => controller.stop();
  context.subscriptions.push({ dispose: () => void controller.stop() });

  const statusBar = createBridgeStatusBar(controller);
  context.subscriptions.push(statusBar);

  const trafficPanel = new TrafficPanel(controller, {
    extensionUri: context.extensionUri,
    getBackendApiKey: () => secrets.getBackendApiKeyFor(controller.getRunningSettings()?.backendUrl),
    getSecretValues: () => secrets.listSecretValues(),
    logger,
  });
  context.subscriptions.push(trafficPanel);

  const keyOrigins = createBackendKeyOriginGuard(secrets, logger);
  const services: ExtensionServices = {
    context,
    channel,
    logger,
    secrets,
    controller,
    confirmBackendKeyOrigin: keyOrigins.confirm,
    forgetDeclinedKeyOrigins: keyOrigins.forgetDeclined,
  };

  context.subscriptions.push(
    watchForBackendFailures(services),
    watchForTakeOver(services),
    watchSettingChanges(services, statusBar.refresh),
    registerStartCommand(services),
    registerStopCommand(services),
    registerToggleCommand(services),
    registerShowTrafficCommand(trafficPanel),
    registerExportTrafficCommand(trafficPanel),
    registerSetBackendApiKeyCommand(services),
    registerCopyCodexCommand(services),
    registerShowLogCommand(services),
    registerCheckBackendCommand({ logger, secrets, confirmBackendKeyOrigin: keyOrigins.confirm, showLog: () => channel.show() }),
    registerWriteCodexConfigCommand({
      logger,
      secrets,
      extensionMode: context.extensionMode,
      lastWriteMemory: lastCodexConfigWriteMemory(context),
      ensureRunning: async () => {
        const status = controller.getStatus();
        if (status.kind === 'on') return status;
        const started = await startBridge(services);
        const after = controller.getStatus();
        return started && after.kind === 'on' ? after : null;
      },
    }),
  );

  // The Codex extension in VS Code fetches the bridge's catalog and sends its turns from the moment its
  // window starts: while config.toml points it here, the bridge starts with VS Code as with autoStart.
  const startupSettings = readBridgeSettings();
  if (startupSettings.autoStart) void startBridge(services);
  else {
    void isCodexDefaultPointedAtBridge(resolveCodexHome(startupSettings.codexHome), providerIdForProfile(startupSettings.codexProfile)).then((pointed) => {
      if (!pointed) return;
      logger.info('starting the bridge: config.toml points Codex (and the Codex extension in VS Code) at it; Restore Codex Config ends that');
      void startBridge(services);
    });
  }

  if (context.extensionMode !== vscode.ExtensionMode.Test) return undefined;
  return createTestApi(services, { statusBarItem: statusBar.item, trafficPanel, workspaceSettingGuard });
}

export async function deactivate(): Promise<void> {
  // VS Code awaits this promise, so the server is closed and in-flight calls aborted before exit.
  await stopBridgeOnDeactivate?.();
  stopBridgeOnDeactivate = null;
}
