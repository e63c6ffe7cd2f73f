import * as vscode from 'vscode';
import { CODEX_TOOL_SURFACES, type CodexToolSurface } from '../../core/model-catalog/model-catalog-entry.ts';
import { BridgeError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { redactSecrets } from '../../core/redact-secrets.ts';
import type { DoctorModel } from '../../core/doctor/engine-identity.ts';
import { listEngineModels } from '../../server/engine-doctor.ts';
import { applyCodexConfigWrite } from '../../codex-config/apply-codex-config-write.ts';
import { CodexConfigFileError } from '../../codex-config/codex-config-file-error.ts';
import { planCodexConfigWrite, type CodexConfigWritePlan } from '../../codex-config/plan-codex-config-write.ts';
import { applyCodexConfigRestore, planCodexConfigRestore } from '../../codex-config/restore-codex-config.ts';
import type { BridgeStatus } from '../bridge-controller.ts';
import type { BridgeSecrets } from '../bridge-secrets.ts';
import { buildCodexCommand, resolveCodexHome } from '../codex-command.ts';
import type { LastCodexConfigWrite } from '../extension-services.ts';
import { readBridgeSettings } from '../settings.ts';

/** Optional arguments, so a keybinding or the tests can skip the pickers. */
export interface WriteCodexConfigArguments {
  model?: string;
  toolSurface?: CodexToolSurface;
  /** Also edit config.toml so the Codex extension in VS Code (which reads only config.toml) uses the bridge. */
  alsoForCodexExtension?: boolean;
  /** Skips the modal confirmation; honoured only when VS Code runs the extension's tests. */
  confirmed?: boolean;
}

export type RestoreCodexConfigOutcome =
  | { kind: 'restored'; path: string; restored: 'content' | 'removed' | 'unchanged'; savedCurrentAs: string | null }
  | { kind: 'cancelled' }
  | { kind: 'refused'; message: string };

export type WriteCodexConfigOutcome =
  /** `previewed`: the files whose diff was shown before writing. */
  | { kind: 'written'; files: string[]; previewed: string[]; runCommand: string }
  | { kind: 'unchanged'; files: string[]; runCommand: string }
  | { kind: 'cancelled' }
  | { kind: 'refused'; message: string };

export interface WriteCodexConfigDependencies {
  logger: Logger;
  secrets: BridgeSecrets;
  extensionMode: vscode.ExtensionMode;
  /** Starts the bridge when it is off: the profile needs the port it really listens on. */
  ensureRunning: () => Promise<Extract<BridgeStatus, { kind: 'on' }> | null>;
  /** The last written choice, so a rewrite after a port change writes the same files again. */
  lastWriteMemory: { get(): LastCodexConfigWrite | undefined; set(value: LastCodexConfigWrite): PromiseLike<void> };
}

/** What the last successful Write Codex Config wrote (kept in the global state). */
const PREVIEW_SCHEME = 'freeform-bridge-preview';

const TOOL_SURFACE_ITEMS: ReadonlyArray<vscode.QuickPickItem & { surface: CodexToolSurface }> = [
  { surface: 'freeform', label: 'freeform', description: 'recommended', detail: 'apply_patch as a free-form tool with its grammar; the bridge lowers it to a function for the backend' },
  { surface: 'functions', label: 'functions', detail: 'Codex\'s function tools only (no model catalog); nothing for the bridge to lower' },
  { surface: 'code-mode', label: 'code-mode', detail: 'code mode: one free-form exec tool whose input is JavaScript (needs a capable model)' },
];

const TARGET_ITEMS: ReadonlyArray<vscode.QuickPickItem & { alsoForCodexExtension: boolean }> = [
  { alsoForCodexExtension: false, label: 'Codex CLI only', detail: 'a profile of its own (codex -p <profile>); config.toml stays untouched' },
  {
    alsoForCodexExtension: true,
    label: 'Also for the Codex extension in VS Code',
    detail: 'also edits config.toml minimally (byte-exact backup; Restore Codex Config undoes it); OpenAI\'s models stay in the picker; needs a window reload',
  },
];

/**
 * "Freeform Bridge: Write Codex Config": pick a model and a tool surface, show the change as a diff,
 * confirm, write atomically. The file logic is shared with `freeform-bridge codex-config`
 * (src/codex-config/); this is only the VS Code dialogue around it.
 */
export function registerWriteCodexConfigCommand(dependencies: WriteCodexConfigDependencies): vscode.Disposable {
  const previews = new Map<string, string>();
  const provider: vscode.TextDocumentContentProvider = { provideTextDocumentContent: (uri) => previews.get(uri.toString()) ?? '' };
  let previewCounter = 0;
  const createPreviewUri = (side: 'current' | 'new', fileName: string, text: string): vscode.Uri => {
    previewCounter += 1;
    // A fresh URI per preview: VS Code caches virtual documents by URI.
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: `/${side}/${fileName}`, query: String(previewCounter) });
    previews.set(uri.toString(), text);
    return uri;
  };
  const closePreviews = async (): Promise<void> => {
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === PREVIEW_SCHEME);
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
    previews.clear();
  };

  const run = async (argumentsGiven?: WriteCodexConfigArguments): Promise<WriteCodexConfigOutcome> => {
    const { logger, secrets } = dependencies;
    const given = typeof argumentsGiven === 'object' && argumentsGiven !== null ? argumentsGiven : {};
    const bridge = await dependencies.ensureRunning();
    if (!bridge) return refuse(logger, 'the bridge is not running, and the profile needs the port it listens on. Start it first (Freeform Bridge: Start).');
    const settings = readBridgeSettings();

    const chosenModel = given.model !== undefined ? { id: given.model, contextWindow: null } : await pickModel(settings.backendUrl, secrets.getBackendApiKeyFor(settings.backendUrl), settings.model, logger);
    if (!chosenModel) return { kind: 'cancelled' };
    const toolSurface = given.toolSurface ?? (await pickToolSurface());
    if (!toolSurface) return { kind: 'cancelled' };
    if (!CODEX_TOOL_SURFACES.includes(toolSurface)) return refuse(logger, `unknown tool surface '${String(toolSurface)}' (one of ${CODEX_TOOL_SURFACES.join(', ')})`);
    // A caller naming model and surface (a keybinding, the tests) chose without the pickers: config.toml
    // is then only touched when it says so.
    const programmatic = given.model !== undefined && given.toolSurface !== undefined;
    const alsoForCodexExtension = given.alsoForCodexExtension ?? (programmatic ? false : await pickTarget(dependencies.lastWriteMemory.get()?.alsoForCodexExtension));
    if (alsoForCodexExtension === undefined) return { kind: 'cancelled' };

    const codexHome = resolveCodexHome(settings.codexHome);
    let plan: CodexConfigWritePlan;
    try {
      plan = await planCodexConfigWrite({
        codexHome,
        profile: settings.codexProfile,
        baseUrl: `${bridge.url}/v1`,
        model: chosenModel.id,
        toolSurface,
        token: secrets.getBridgeToken(),
        contextWindow: chosenModel.contextWindow,
        makeDefault: alsoForCodexExtension,
      });
    } catch (error) {
      return refuseForError(logger, error);
    }
    for (const warning of plan.warnings) {
      logger.warn(warning);
      void vscode.window.showWarningMessage(`Freeform Bridge: ${warning}`);
    }
    const runCommand = buildCodexCommand(plan.profile, settings.codexHome);
    const toWrite = plan.files.filter((file) => file.changed || file.narrowMode);
    if (toWrite.length === 0) {
      const files = plan.files.map((file) => file.path);
      logger.info(`Codex config already up to date: ${files.join(', ')}`);
      void vscode.window.showInformationMessage(`Freeform Bridge: the Codex profile is already up to date. Run "${runCommand}".`);
      return { kind: 'unchanged', files, runCommand };
    }

    // The token is shown redacted: the diff may be on a shared screen; the file itself holds it.
    const secretValues = secrets.listSecretValues();
    const previewed: string[] = [];
    for (const file of plan.files.filter((candidate) => candidate.changed)) {
      const fileName = file.path.split(/[\\/]/).pop() ?? file.path;
      const left = createPreviewUri('current', fileName, redactSecrets(file.currentText ?? '', secretValues));
      const right = createPreviewUri('new', fileName, redactSecrets(file.newText, secretValues));
      const label = file.currentText === null ? 'new file' : 'current ↔ new';
      await vscode.commands.executeCommand('vscode.diff', left, right, `${fileName} (${label})`, { preview: false });
      previewed.push(file.path);
    }

    const skipConfirmation = given.confirmed === true && dependencies.extensionMode === vscode.ExtensionMode.Test;
    if (!skipConfirmation) {
      const detail = [
        ...plan.confirmations.map((confirmation) => `Note: ${confirmation}`),
        ...(plan.confirmations.length > 0 ? [''] : []),
        ...toWrite.map((file) => `${file.currentText === null ? 'create' : file.changed ? 'update' : 'restrict permissions of'} ${file.path}${file.backupPath === null || file.currentText === null ? '' : ' (backup kept)'}`),
        ...(plan.createCodexHome ? [`create the folder ${plan.codexHome}`] : []),
        '',
        'The profile holds the bridge token (shown as [redacted] in the diff); it is written readable by you only.',
      ].join('\n');
      const choice = await vscode.window.showInformationMessage(`Write the Codex profile "${plan.profile}"?`, { modal: true, detail }, 'Write');
      if (choice !== 'Write') {
        await closePreviews();
        return { kind: 'cancelled' };
      }
    }

    try {
      // The modal above (or the test's `confirmed`) is the confirmation the plan may ask for.
      const result = await applyCodexConfigWrite(plan, { confirmed: true });
      await closePreviews();
      await dependencies.lastWriteMemory.set({ model: chosenModel.id, toolSurface, alsoForCodexExtension });
      logger.info(`Codex config written: ${result.written.join(', ') || '(permissions only)'}${result.backups.length > 0 ? `; backup ${result.backups.join(', ')}` : ''}`);
      if (alsoForCodexExtension) {
        // The Codex extension reads config.toml when its window starts: a reload makes it switch (and
        // the bridge starts again with the reloaded window, see activate()).
        void vscode.window
          .showInformationMessage(
            `Freeform Bridge: wrote ${result.written.length} file(s) to ${plan.codexHome}. Reload the window so the Codex extension uses the bridge (it starts with VS Code from now on); in a terminal, run "${runCommand}" or plain "codex".`,
            'Reload Window',
            'Copy Codex Command',
          )
          .then((choice) => {
            if (choice === 'Reload Window') void vscode.commands.executeCommand('workbench.action.reloadWindow');
            else if (choice) void vscode.commands.executeCommand('freeformBridge.copyCodexCommand');
          });
      } else {
        void vscode.window.showInformationMessage(`Freeform Bridge: wrote ${result.written.length} file(s) to ${plan.codexHome}. Run "${runCommand}" in a terminal.`, 'Copy Codex Command').then((choice) => {
          if (choice) void vscode.commands.executeCommand('freeformBridge.copyCodexCommand');
        });
      }
      return { kind: 'written', files: [...result.written, ...result.unchanged], previewed, runCommand };
    } catch (error) {
      await closePreviews();
      return refuseForError(logger, error);
    }
  };

  /** "Freeform Bridge: Restore Codex Config": config.toml back byte for byte, after its diff and a confirmation. */
  const restore = async (argumentsGiven?: { confirmed?: boolean }): Promise<RestoreCodexConfigOutcome> => {
    const { logger, secrets } = dependencies;
    const given = typeof argumentsGiven === 'object' && argumentsGiven !== null ? argumentsGiven : {};
    const codexHome = resolveCodexHome(readBridgeSettings().codexHome);
    let plan;
    try {
      plan = await planCodexConfigRestore(codexHome);
    } catch (error) {
      return refuseForError(logger, error);
    }
    const fileName = 'config.toml';
    const secretValues = secrets.listSecretValues();
    const left = createPreviewUri('current', fileName, redactSecrets(plan.currentText ?? '', secretValues));
    const right = createPreviewUri('new', fileName, plan.restoredText ?? '');
    await vscode.commands.executeCommand('vscode.diff', left, right, `${fileName} (current ↔ restored)`, { preview: false });
    const skipConfirmation = given.confirmed === true && dependencies.extensionMode === vscode.ExtensionMode.Test;
    if (!skipConfirmation) {
      const detail = [
        plan.restoredText === null ? `${plan.configPath} did not exist before; it is removed.` : `${plan.configPath} goes back to ${plan.backupPath ?? 'its backup'}, byte for byte.`,
        ...(plan.editedSinceWrite && plan.currentText !== null ? ['It was edited after Freeform Bridge changed it: those edits are undone too, and the current file is kept as a backup.'] : []),
        'Reload the window afterwards so the Codex extension reads it again.',
      ].join('\n');
      const choice = await vscode.window.showWarningMessage('Restore your Codex config.toml?', { modal: true, detail }, 'Restore');
      if (choice !== 'Restore') {
        await closePreviews();
        return { kind: 'cancelled' };
      }
    }
    try {
      const result = await applyCodexConfigRestore(plan, { confirmed: true });
      await closePreviews();
      // A port change now rewrites the profile only.
      const last = dependencies.lastWriteMemory.get();
      if (last?.alsoForCodexExtension) await dependencies.lastWriteMemory.set({ ...last, alsoForCodexExtension: false });
      logger.info(`Codex config restored: ${plan.configPath} (${result.restored})${result.savedCurrentAs === null ? '' : `; the replaced file is kept as ${result.savedCurrentAs}`}`);
      void vscode.window.showInformationMessage(`Freeform Bridge: restored ${plan.configPath}. Reload the window so the Codex extension reads it again.`, 'Reload Window').then((choice) => {
        if (choice) void vscode.commands.executeCommand('workbench.action.reloadWindow');
      });
      return { kind: 'restored', path: plan.configPath, restored: result.restored, savedCurrentAs: result.savedCurrentAs };
    } catch (error) {
      await closePreviews();
      return refuseForError(logger, error);
    }
  };

  return vscode.Disposable.from(
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, provider),
    vscode.commands.registerCommand('freeformBridge.writeCodexConfig', run),
    vscode.commands.registerCommand('freeformBridge.restoreCodexConfig', restore),
  );
}

function refuse(logger: Logger, message: string): { kind: 'refused'; message: string } {
  logger.error(`Codex config: ${message}`);
  void vscode.window.showErrorMessage(`Freeform Bridge: ${message}`);
  return { kind: 'refused', message };
}

/** The writer's own errors already name the file and say what to do; anything else is unexpected. */
function refuseForError(logger: Logger, error: unknown): { kind: 'refused'; message: string } {
  if (CodexConfigFileError.is(error) || BridgeError.is(error)) return refuse(logger, error.message);
  return refuse(logger, `could not write the Codex config: ${error instanceof Error ? error.message : String(error)}`);
}

async function pickModel(backendUrl: string, apiKey: string | null, preferred: string | null, logger: Logger): Promise<{ id: string; contextWindow: number | null } | undefined> {
  let models: DoctorModel[] = [];
  let failure: string | null = null;
  try {
    models = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Freeform Bridge: asking ${backendUrl} for its models…` }, () =>
      listEngineModels(backendUrl, apiKey),
    );
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
    logger.warn(`could not list the backend's models: ${failure}`);
  }
  if (models.length === 0) {
    // Offline backend or an engine without /v1/models: let the user type the name instead.
    const typed = await vscode.window.showInputBox({
      title: 'Freeform Bridge: Model for the Codex profile',
      prompt: failure ? `Could not list models from ${backendUrl} (${failure}). Type the model name the backend serves.` : `${backendUrl} lists no models. Type the model name the backend serves.`,
      value: preferred ?? '',
      ignoreFocusOut: true,
      validateInput: (value) => (value.trim() === '' ? 'A model name is needed.' : null),
    });
    return typed === undefined ? undefined : { id: typed.trim(), contextWindow: null };
  }
  const items = models.map((model) => ({
    label: model.id,
    description: model.id === preferred ? 'freeformBridge.model' : undefined,
    detail: model.contextWindow === null ? undefined : `context window ${model.contextWindowIsCeiling ? 'at most ' : ''}${model.contextWindow.toLocaleString('en-US')} tokens (${model.contextWindowSource})`,
    model,
  }));
  items.sort((first, second) => Number(second.label === preferred) - Number(first.label === preferred));
  const picked = await vscode.window.showQuickPick(items, { title: 'Freeform Bridge: Model for the Codex profile', placeHolder: `Models served by ${backendUrl}`, ignoreFocusOut: true });
  // A window the model was only trained for is not what the engine runs it with: the profile states none then.
  return picked ? { id: picked.model.id, contextWindow: picked.model.contextWindowIsCeiling ? null : picked.model.contextWindow } : undefined;
}

async function pickTarget(remembered: boolean | undefined): Promise<boolean | undefined> {
  const items = [...TARGET_ITEMS].sort((first, second) => Number(second.alsoForCodexExtension === remembered) - Number(first.alsoForCodexExtension === remembered));
  const picked = await vscode.window.showQuickPick(items, { title: 'Freeform Bridge: Where should Codex use the bridge?', ignoreFocusOut: true });
  return picked?.alsoForCodexExtension;
}

async function pickToolSurface(): Promise<CodexToolSurface | undefined> {
  const picked = await vscode.window.showQuickPick(TOOL_SURFACE_ITEMS, { title: 'Freeform Bridge: Tool surface Codex offers the model', ignoreFocusOut: true });
  return picked?.surface;
}
