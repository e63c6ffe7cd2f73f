import { createServer } from 'node:net';
import * as vscode from 'vscode';
import { probeBackend } from './backend-probe.ts';
import { BridgeController, BridgeStartError, type BridgeStatus, type StartResult } from './bridge-controller.ts';
import { BridgeSecrets, originOf } from './bridge-secrets.ts';
import { registerCheckBackendCommand } from './check-backend-command.ts';
import { providerIdForProfile } from '../core/codex-config/codex-profile-options.ts';
import { isCodexDefaultPointedAtBridge } from '../codex-config/plan-codex-config-write.ts';
import { buildCodexCommand, resolveCodexHome } from './codex-command.ts';
import { createOutputChannelLogger } from './output-channel-logger.ts';
import { changedServerSettings, readBridgeSettings, settingId, SETTINGS_SECTION, type BridgeSettings } from './settings.ts';
import { renderStatusBarItem } from './status-bar.ts';
import { TrafficPanel } from './traffic-panel.ts';
import { isUserOnlySetting } from './user-only-settings.ts';
import { createWorkspaceSettingGuard, type IgnoredWorkspaceSettings } from './workspace-setting-guard.ts';
import { registerWriteCodexConfigCommand, type LastCodexConfigWrite } from './write-codex-config-command.ts';

const REMEMBERED_PORT_KEY = 'freeformBridge.rememberedPort';
/** What the last Write Codex Config wrote: a port change rewrites the same files. */
const LAST_CODEX_CONFIG_WRITE_KEY = 'freeformBridge.lastCodexConfigWrite';

/**
 * Returned by activate() only when VS Code runs the extension's tests (ExtensionMode.Test): the
 * real-VS-Code suites read the state through it instead of scraping the workbench.
 */
export interface FreeformBridgeTestApi {
  getState(): {
    status: BridgeStatus['kind'];
    url: string | null;
    port: number | null;
    backendUrl: string | null;
    errorMessage: string | null;
    /** Why the latest start or restart failed (also while a kept previous server runs). */
    lastStartFailure: { reason: string; message: string; port: number } | null;
    roundTrips: number;
    warnings: number;
    statusBarText: string;
    statusBarTooltip: string;
    trafficLines: readonly string[];
    trafficPanel: { open: boolean; readyCount: number };
    /** User-only settings the workspace tried to set, and the notices shown about them. */
    ignoredWorkspaceSettings: readonly IgnoredWorkspaceSettings[];
    workspaceSettingNotices: readonly string[];
    /** The origin the stored backend API key is bound to (null: no key). */
    backendApiKeyOrigin: string | null;
  };
  getBridgeToken(): string;
}

/** deactivate() has no context argument; this is how it reaches the running bridge to close it. */
let stopBridgeOnDeactivate: (() => Promise<void>) | null = null;

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
  stopBridgeOnDeactivate = () => controller.stop();
  context.subscriptions.push({ dispose: () => void controller.stop() });

  const statusBarItem = vscode.window.createStatusBarItem('freeformBridge.status', vscode.StatusBarAlignment.Right, 100);
  statusBarItem.name = 'Freeform Bridge';
  context.subscriptions.push(statusBarItem);
  const refreshStatusBar = (): void => {
    const running = controller.getRunningSettings();
    renderStatusBarItem(statusBarItem, {
      status: controller.getStatus(),
      ...controller.getCounts(),
      backendUrl: (running ?? readBridgeSettings()).backendUrl,
    });
  };
  refreshStatusBar();
  statusBarItem.show();
  context.subscriptions.push(controller.onDidChangeStatus(refreshStatusBar));

  const trafficPanel = new TrafficPanel(controller, {
    extensionUri: context.extensionUri,
    getBackendApiKey: () => secrets.getBackendApiKeyFor(controller.getRunningSettings()?.backendUrl),
    getSecretValues: () => secrets.listSecretValues(),
    logger,
  });
  context.subscriptions.push(trafficPanel);
  context.subscriptions.push(watchForBackendFailures(controller));
  context.subscriptions.push(
    controller.onDidTakeOver((result) => {
      if (result.attachedTo !== null) return;
      logger.info(`took over the shared bridge on ${result.url}`);
      if (result.replacedRememberedPort !== null) {
        void offerConfigRewrite(`Freeform Bridge: the window that ran the bridge closed and port ${result.replacedRememberedPort} is now taken by another program, so the bridge listens on port ${result.port}. The Codex config still points at the old port: rewrite it with one click.`, 'warning');
      }
    }),
  );

  /** Key-origin pairs the user declined this session ("stored for A" → "now B"): not asked again. */
  const declinedKeyOrigins = new Set<string>();
  const pendingKeyQuestions = new Map<string, Promise<void>>();
  /**
   * The key goes only to the origin it was stored for. When the backend's origin changed, ask
   * (modal) before the key goes there; until the user agrees, and after a no, the bridge calls that
   * backend without it.
   */
  const confirmBackendKeyOrigin = (backendUrl: string): Promise<void> => {
    const target = originOf(backendUrl);
    const stored = secrets.getBackendApiKeyOrigin();
    if (!secrets.hasBackendApiKey() || target === null || target === stored) return Promise.resolve();
    const question = `${stored ?? ''} -> ${target}`;
    if (declinedKeyOrigins.has(question)) return Promise.resolve();
    const pending = pendingKeyQuestions.get(question);
    if (pending) return pending;
    const send = 'Send the Key There';
    const asked = (async () => {
      let choice: string | undefined;
      try {
        choice = await vscode.window.showWarningMessage(
          `Send the backend API key to ${target}?`,
          { modal: true, detail: `The key was stored for ${stored ?? 'a backend URL that is not valid'}, and the backend URL is now ${backendUrl}. Until you agree, the bridge calls it without the key. To keep a separate key for it, use Freeform Bridge: Set Backend API Key.` },
          send,
        );
      } catch (error) {
        // VS Code refuses modal dialogs while extension tests run: a question nobody can answer is a no.
        logger.warn('could not ask whether to send the backend API key to the new backend', { error: String(error) });
      }
      if (choice === send) {
        await secrets.bindBackendApiKeyTo(backendUrl);
        logger.info(`backend API key now bound to ${target}`);
      } else {
        declinedKeyOrigins.add(question);
        logger.warn(`backend API key not sent to ${target}: it was stored for ${stored ?? 'another backend'}`);
      }
    })().finally(() => pendingKeyQuestions.delete(question));
    pendingKeyQuestions.set(question, asked);
    return asked;
  };

  const startBridge = async (): Promise<StartResult | undefined> => {
    const settings = readBridgeSettings();
    try {
      const result = await controller.start(settings);
      logger.info(result.attachedTo === null ? `bridge on ${result.url}, backend ${settings.backendUrl}` : `using the bridge another VS Code window runs on ${result.url}`);
      if (result.replacedRememberedPort !== null) {
        const last = context.globalState.get<LastCodexConfigWrite>(LAST_CODEX_CONFIG_WRITE_KEY);
        const stale = last?.alsoForCodexExtension ? 'config.toml (read by the Codex extension) and the Codex profile written earlier still point' : 'A Codex profile written earlier still points';
        void offerConfigRewrite(`Freeform Bridge: port ${result.replacedRememberedPort} is taken by another program, so the bridge now listens on port ${result.port}. ${stale} at the old port: rewrite them with one click.`, 'warning');
      }
      if (result.attachedTo === null) {
        // Only the window that runs the bridge sends the key; an attached window calls no backend.
        await confirmBackendKeyOrigin(settings.backendUrl);
        void reportBackendReachability(settings, result);
      }
      return result;
    } catch (error) {
      void showStartError(error, settings);
      return undefined;
    }
  };

  const showStartError = async (error: unknown, settings: BridgeSettings): Promise<void> => {
    if (!BridgeStartError.is(error)) {
      logger.error('unexpected error while starting', { error: String(error) });
      void vscode.window.showErrorMessage(`Freeform Bridge could not start: ${String(error)}`, 'Show Log').then((choice) => {
        if (choice) channel.show();
      });
      return;
    }
    const current = controller.getStatus();
    const kept = error.keptPrevious && current.kind === 'on' ? ` The bridge keeps running on port ${current.port}.` : '';
    switch (error.reason) {
      case 'port-in-use': {
        const freePort = await findFreePort();
        const usePort = `Use Port ${freePort}`;
        const choice = await vscode.window.showErrorMessage(`Freeform Bridge: ${error.message}.${kept} Choose another port (${settingId('port')}).`, usePort, 'Use Any Free Port', 'Open Settings');
        if (choice === usePort) await changeSetting('port', freePort);
        else if (choice === 'Use Any Free Port') await changeSetting('port', 0);
        else if (choice === 'Open Settings') await openSetting('port');
        return;
      }
      case 'invalid-backend-url': {
        const choice = await vscode.window.showErrorMessage(`Freeform Bridge: ${settingId('backendUrl')}: ${error.message}.${kept}`, 'Open Settings');
        if (choice) await openSetting('backendUrl');
        return;
      }
      case 'listen-failed': {
        const choice = await vscode.window.showErrorMessage(`Freeform Bridge could not start: ${error.message}.${kept}`, 'Show Log', 'Open Settings');
        if (choice === 'Show Log') channel.show();
        else if (choice === 'Open Settings') await openSetting(settings.port === 0 ? 'backendUrl' : 'port');
        return;
      }
      default: {
        const unreachable: never = error.reason;
        throw new Error(`unknown start failure ${String(unreachable)}`);
      }
    }
  };

  /**
   * Writes where the value really takes effect: user settings for a user-only setting, else where the
   * user already set it (workspace beats user). The configuration listener then restarts the bridge,
   * or starts it after the failed start.
   */
  const changeSetting = async (key: keyof BridgeSettings, value: unknown): Promise<void> => {
    const configuration = vscode.workspace.getConfiguration(SETTINGS_SECTION);
    const inspected = configuration.inspect(key);
    const target = isUserOnlySetting(key)
      ? vscode.ConfigurationTarget.Global
      : inspected?.workspaceFolderValue !== undefined
        ? vscode.ConfigurationTarget.WorkspaceFolder
        : inspected?.workspaceValue !== undefined
          ? vscode.ConfigurationTarget.Workspace
          : vscode.ConfigurationTarget.Global;
    await configuration.update(key, value, target);
  };

  /** One click rewrites what was written last (same model, surface and files), with the diff shown first. */
  const offerConfigRewrite = async (message: string, severity: 'info' | 'warning'): Promise<void> => {
    const last = context.globalState.get<LastCodexConfigWrite>(LAST_CODEX_CONFIG_WRITE_KEY);
    const action = last?.alsoForCodexExtension ? 'Rewrite Codex Config' : 'Write Codex Config';
    const choice = severity === 'warning' ? await vscode.window.showWarningMessage(message, action) : await vscode.window.showInformationMessage(message, action);
    if (!choice) return;
    await vscode.commands.executeCommand('freeformBridge.writeCodexConfig', last === undefined ? undefined : { model: last.model, toolSurface: last.toolSurface, alsoForCodexExtension: last.alsoForCodexExtension });
  };

  const reportBackendReachability = async (settings: BridgeSettings, result: StartResult): Promise<void> => {
    const probe = await probeBackend(settings.backendUrl, secrets.getBackendApiKeyFor(settings.backendUrl));
    if (probe.reachable) {
      logger.info(`backend ${settings.backendUrl} answered with ${probe.modelCount} models`);
      return;
    }
    logger.warn(`backend unreachable: GET ${probe.url} failed: ${probe.reason}`);
    const choice = await vscode.window.showWarningMessage(
      `Freeform Bridge runs on port ${result.port}, but the backend is unreachable: GET ${probe.url} failed: ${probe.reason}. Codex requests will fail until it answers.`,
      'Open Settings',
      'Show Log',
    );
    if (choice === 'Open Settings') await openSetting('backendUrl');
    else if (choice === 'Show Log') channel.show();
  };

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration(SETTINGS_SECTION)) return;
      refreshStatusBar();
      const running = controller.getRunningSettings();
      const before = controller.getStatus();
      const next = readBridgeSettings();
      // After a failed start the user is most likely fixing the setting that broke it: try again.
      if (before.kind === 'error') {
        logger.info('settings changed after a failed start; starting again');
        await startBridge();
        return;
      }
      if (!running) return;
      const changed = changedServerSettings(running, next);
      if (changed.length === 0) return;
      const names = changed.map(settingId).join(', ');
      logger.info(`settings changed (${names}); restarting the bridge`);
      try {
        const result = await controller.restart(next);
        if (!result) return;
        // The restart applies at once; the key waits for the answer when the backend's origin changed.
        void confirmBackendKeyOrigin(next.backendUrl).then(() => reportBackendReachability(next, result));
        const message = `Freeform Bridge restarted on port ${result.port} to apply ${names}.`;
        // A written Codex profile names the port: say so whenever it moved.
        if (before.kind !== 'on' || before.port !== result.port) void offerConfigRewrite(`${message} Rewrite the Codex profile so it points at the new port.`, 'info');
        else void vscode.window.showInformationMessage(message);
      } catch (error) {
        void showStartError(error, next);
      }
    }),
  );

  const toggleBridge = async (): Promise<StartResult | undefined> => {
    const kind = controller.getStatus().kind;
    if (kind === 'on' || kind === 'starting') {
      await controller.stop();
      logger.info('bridge stopped');
      return undefined;
    }
    return startBridge();
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('freeformBridge.start', startBridge),
    vscode.commands.registerCommand('freeformBridge.stop', async () => {
      await controller.stop();
      logger.info('bridge stopped');
    }),
    vscode.commands.registerCommand('freeformBridge.toggle', toggleBridge),
    vscode.commands.registerCommand('freeformBridge.showTraffic', () => trafficPanel.show()),
    vscode.commands.registerCommand('freeformBridge.setBackendApiKey', async (key?: unknown) => {
      // An argument (keybinding, another extension, the tests) skips the input box.
      const entered =
        typeof key === 'string'
          ? key
          : await vscode.window.showInputBox({
              title: 'Freeform Bridge: Backend API Key',
              prompt: `Sent upstream as "Authorization: Bearer …" to ${originOf(readBridgeSettings().backendUrl) ?? readBridgeSettings().backendUrl} only. Kept in VS Code's secret storage. Leave empty to remove it.`,
              password: true,
              ignoreFocusOut: true,
            });
      if (entered === undefined) return;
      const backendUrl = readBridgeSettings().backendUrl;
      await secrets.setBackendApiKey(entered, backendUrl);
      declinedKeyOrigins.clear();
      const removed = entered.trim() === '';
      logger.info(removed ? 'backend API key removed' : `backend API key stored in the secret storage, for ${originOf(backendUrl) ?? backendUrl}`);
      void vscode.window.showInformationMessage(removed ? 'Freeform Bridge: backend API key removed.' : 'Freeform Bridge: backend API key stored; the bridge uses it from the next request on.');
    }),
    vscode.commands.registerCommand('freeformBridge.copyCodexCommand', async () => {
      const settings = readBridgeSettings();
      const command = buildCodexCommand(settings.codexProfile, settings.codexHome);
      const hint = controller.getStatus().kind === 'on' ? '' : ' once the bridge runs (Freeform Bridge: Start)';
      try {
        await vscode.env.clipboard.writeText(command);
        void vscode.window.showInformationMessage(`Copied "${command}". Run it in a terminal${hint}.`);
      } catch (error) {
        // A browser-hosted VS Code may refuse clipboard access; the command is still worth showing.
        logger.warn('could not write to the clipboard', { error: String(error) });
        void vscode.window.showInformationMessage(`Run "${command}" in a terminal${hint}.`);
      }
      return command;
    }),
    vscode.commands.registerCommand('freeformBridge.showLog', () => channel.show()),
    registerCheckBackendCommand({ logger, secrets, confirmBackendKeyOrigin, showLog: () => channel.show() }),
    registerWriteCodexConfigCommand({
      logger,
      secrets,
      extensionMode: context.extensionMode,
      lastWriteMemory: {
        get: () => context.globalState.get<LastCodexConfigWrite>(LAST_CODEX_CONFIG_WRITE_KEY),
        set: (value) => context.globalState.update(LAST_CODEX_CONFIG_WRITE_KEY, value),
      },
      ensureRunning: async () => {
        const status = controller.getStatus();
        if (status.kind === 'on') return status;
        const started = await startBridge();
        const after = controller.getStatus();
        return started && after.kind === 'on' ? after : null;
      },
    }),
  );

  // The Codex extension in VS Code fetches the bridge's catalog and sends its turns from the moment its
  // window starts: while config.toml points it here, the bridge starts with VS Code as with autoStart.
  const startupSettings = readBridgeSettings();
  if (startupSettings.autoStart) void startBridge();
  else {
    void isCodexDefaultPointedAtBridge(resolveCodexHome(startupSettings.codexHome), providerIdForProfile(startupSettings.codexProfile)).then((pointed) => {
      if (!pointed) return;
      logger.info('starting the bridge: config.toml points Codex (and the Codex extension in VS Code) at it; Restore Codex Config ends that');
      void startBridge();
    });
  }

  if (context.extensionMode !== vscode.ExtensionMode.Test) return undefined;
  return {
    getState: () => {
      const status = controller.getStatus();
      const tooltip = statusBarItem.tooltip;
      return {
        status: status.kind,
        url: status.kind === 'on' ? status.url : null,
        port: status.kind === 'on' ? status.port : null,
        backendUrl: status.kind === 'on' ? status.backendUrl : null,
        errorMessage: status.kind === 'error' ? status.message : null,
        lastStartFailure: controller.getLastStartFailure(),
        ...controller.getCounts(),
        statusBarText: statusBarItem.text,
        // Markdown source with appendText's escapes undone, so tests can look for plain phrases.
        statusBarTooltip: (typeof tooltip === 'string' ? tooltip : (tooltip?.value ?? '')).replace(/&nbsp;/g, ' '),
        trafficLines: [...controller.getTrafficLines()],
        trafficPanel: trafficPanel.getViewState(),
        ignoredWorkspaceSettings: workspaceSettingGuard.getIgnored(),
        workspaceSettingNotices: workspaceSettingGuard.getShownNotices(),
        backendApiKeyOrigin: secrets.getBackendApiKeyOrigin(),
      };
    },
    getBridgeToken: () => secrets.getBridgeToken(),
  };
}

export async function deactivate(): Promise<void> {
  // VS Code awaits this promise, so the server is closed and in-flight calls aborted before exit.
  await stopBridgeOnDeactivate?.();
  stopBridgeOnDeactivate = null;
}

async function openSetting(key: keyof BridgeSettings): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.openSettings', settingId(key));
}

function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * An exchange that failed because the backend could not be reached is the user's most likely
 * problem: say it (with the URL and the reason), at most once a minute so a retrying Codex does not
 * flood the window.
 */
function watchForBackendFailures(controller: BridgeController): vscode.Disposable {
  let lastShownAt = 0;
  const subscription = controller.onTraffic((event) => {
    if (event.type !== 'exchange-end' || event.error?.code !== 'backend_unreachable') return;
    if (Date.now() - lastShownAt < 60_000) return;
    lastShownAt = Date.now();
    void vscode.window.showErrorMessage(`Freeform Bridge: a Codex request failed because the backend is unreachable: ${event.error.message}`, 'Open Settings').then((choice) => {
      if (choice) void openSetting('backendUrl');
    });
  });
  return new vscode.Disposable(() => subscription.dispose());
}
