import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { formatUnifiedDiff } from '../core/codex-config/unified-diff.ts';
import { DEFAULT_CODEX_PROFILE } from '../core/defaults.ts';
import { InvalidRequestError, UpstreamConnectionError, UpstreamHttpError } from '../core/errors.ts';
import { BRIDGE_VERSION } from '../server/start-server.ts';
import { describeUsageProblem, isArgumentParseError, UsageError } from './usage-error.ts';
import { CODEX_TOOL_SURFACES, type CodexToolSurface } from '../core/model-catalog/model-catalog-entry.ts';
import { fetchBackendModels, type BackendModel } from '../server/backend-models.ts';
import { applyCodexConfigWrite } from '../codex-config/apply-codex-config-write.ts';
import { formatCodexConfigPlanDiff } from '../codex-config/format-plan-diff.ts';
import { planCodexConfigWrite } from '../codex-config/plan-codex-config-write.ts';
import { applyCodexConfigRestore, planCodexConfigRestore } from '../codex-config/restore-codex-config.ts';
import { withTimeLimit } from '../server/time-limit.ts';

export interface CodexConfigCommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

export const CODEX_CONFIG_USAGE = `Usage:
  freeform-bridge codex-config --base-url URL --model NAME [options]
  freeform-bridge codex-config --restore [--codex-home DIR] [--dry-run] [--yes]

Writes a Codex profile that sends Codex through the bridge: $CODEX_HOME/<profile>.config.toml (and,
for the free-form surfaces, <profile>.model_catalog.json). Your config.toml is left alone unless
--make-default is given. Run Codex with \`codex -p <profile>\`.

Options:
  --base-url URL          the bridge's URL ending in /v1 (as printed by \`freeform-bridge serve\`) (required)
  --model NAME            model name Codex sends; one the backend serves (required)
  --codex-home DIR        Codex's configuration folder (default: $CODEX_HOME, else ~/.codex)
  --profile NAME          profile name (default ${DEFAULT_CODEX_PROFILE})
  --tool-surface S        freeform (default): free-form apply_patch; code-mode: code mode's exec tool;
                          functions: Codex's plain function tools
  --token-env NAME        environment variable holding the bridge token (as given to serve --token-env);
                          the token is written into the profile, readable by you only
  --context-window N      the model's context window in tokens (default: what GET /v1/models reports)
  --offline               write without asking the bridge for its models (GET {base-url}/models): for a
                          bridge that is not running yet; the model name is then not checked
  --make-default          also make the bridge Codex's default in config.toml (edited minimally, byte-exact
                          backup kept): plain \`codex\` and the Codex extension in VS Code (which reads only
                          config.toml) then use the bridge, with its live model catalog; OpenAI's models stay
  --restore               put config.toml back byte for byte as it was before the first --make-default
  --yes                   agree to what needs a confirmation (config.toml names another model_provider;
                          a restore over edits made since) after the diff is printed
  --dry-run               print the changes as a diff and write nothing
  -h, --help              show this help
  -V, --version           print the version
`;

const MODEL_LIST_TIMEOUT_MS = 3_000;

function shellQuote(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

function parsePositiveInteger(optionName: string, text: string | undefined): number | null {
  if (text === undefined) return null;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) === 0) {
    throw new UsageError(`${optionName} must be a positive integer (tokens), got '${text}'`);
  }
  return Number(text);
}

function describeModels(models: readonly BackendModel[]): string {
  return models.length === 0 ? '(none)' : models.map((model) => model.id).join(', ');
}

/**
 * The context windows the bridge's engine doctor read from the engine's own endpoints (llama-server's
 * running context, Ollama's loaded one, SGLang's server info), through the bridge's live catalog; a
 * window the catalog only assumed is left out. Empty when the bridge does not answer it.
 */
async function readCatalogContextWindows(baseUrl: string, token: string | null): Promise<Map<string, number>> {
  const windows = new Map<string, number>();
  try {
    const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
    const catalog = await withTimeLimit(MODEL_LIST_TIMEOUT_MS, undefined, async (signal) => {
      const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/codex/models?tool_surface=freeform`, { headers, signal });
      return (await response.json()) as { models?: Array<{ slug?: unknown; context_window?: unknown; description?: unknown }> };
    });
    for (const entry of catalog.models ?? []) {
      if (typeof entry.slug !== 'string' || typeof entry.context_window !== 'number') continue;
      if (typeof entry.description === 'string' && entry.description.includes('not reported by the backend')) continue;
      windows.set(entry.slug, entry.context_window);
    }
  } catch {
    // Another server behind --base-url, or an older bridge: the model list's own fields stand.
  }
  return windows;
}

async function listModels(baseUrl: string, token: string | null, io: CodexConfigCommandIo): Promise<BackendModel[] | null> {
  try {
    const models = await fetchBackendModels(baseUrl, token, { timeoutMs: MODEL_LIST_TIMEOUT_MS });
    const windows = await readCatalogContextWindows(baseUrl, token);
    return models.map((model) => {
      const found = windows.get(model.id);
      return found === undefined ? model : { ...model, contextWindow: found, contextWindowSource: "the bridge's engine check" };
    });
  } catch (error) {
    // Writing the profile must not depend on the bridge running right now. The request went to the
    // bridge, so a refused connection means the bridge is not running, whatever the backend does.
    const url = `${baseUrl.replace(/\/+$/, '')}/models`;
    const reason = UpstreamHttpError.is(error)
      ? `GET ${url} answered HTTP ${error.status}`
      : UpstreamConnectionError.is(error)
        ? `no bridge answers at ${baseUrl} (${error.code}); start it with \`freeform-bridge serve\`, or pass --offline`
        : (error as Error).message;
    io.stderr(`note: could not list the bridge's models (${reason}); continuing without them\n`);
    return null;
  }
}

export async function runCodexConfigCommand(argv: string[], io: CodexConfigCommandIo): Promise<number> {
  try {
    return await runCommand(argv, io);
  } catch (error) {
    if (isArgumentParseError(error)) {
      io.stderr(`freeform-bridge codex-config: ${describeUsageProblem(error, 'freeform-bridge codex-config --help')}\n`);
      return 2;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`freeform-bridge codex-config: ${message}\n`);
    if (error instanceof UsageError || InvalidRequestError.is(error)) {
      io.stderr('Run `freeform-bridge codex-config --help` for usage.\n');
      return 2;
    }
    return 1;
  }
}

async function runCommand(argv: string[], io: CodexConfigCommandIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      'codex-home': { type: 'string' },
      'base-url': { type: 'string' },
      model: { type: 'string' },
      profile: { type: 'string' },
      'tool-surface': { type: 'string' },
      'token-env': { type: 'string' },
      'context-window': { type: 'string' },
      offline: { type: 'boolean' },
      'make-default': { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      restore: { type: 'boolean' },
      yes: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'V' },
    },
  });
  if (values.help) {
    io.stdout(CODEX_CONFIG_USAGE);
    return 0;
  }
  if (values.version) {
    io.stdout(`${BRIDGE_VERSION}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const defaultCodexHome = io.env.CODEX_HOME ? io.env.CODEX_HOME : join(io.env.HOME ?? homedir(), '.codex');
  const codexHome = resolve(values['codex-home'] ?? defaultCodexHome);
  if (values.restore) {
    const writeOnly = ['base-url', 'model', 'profile', 'tool-surface', 'token-env', 'context-window', 'make-default'] as const;
    const misplaced = writeOnly.find((name) => values[name] !== undefined);
    if (misplaced) throw new UsageError(`--restore takes no --${misplaced}`);
    return restoreConfig(codexHome, { dryRun: values['dry-run'] ?? false, confirmed: values.yes ?? false }, io);
  }
  const baseUrl = values['base-url'];
  if (!baseUrl) throw new UsageError("--base-url URL is required: the bridge's address ending in /v1, e.g. --base-url http://127.0.0.1:18080/v1");
  const toolSurface = (values['tool-surface'] ?? 'freeform') as CodexToolSurface;
  if (!CODEX_TOOL_SURFACES.includes(toolSurface)) {
    throw new UsageError(`--tool-surface must be one of ${CODEX_TOOL_SURFACES.join(', ')}, got '${values['tool-surface']}'`);
  }
  let contextWindow = parsePositiveInteger('--context-window', values['context-window']);
  let token: string | null = null;
  const tokenVariable = values['token-env'];
  if (tokenVariable !== undefined) {
    token = io.env[tokenVariable] ?? '';
    if (token === '') throw new UsageError(`--token-env ${tokenVariable}: the environment variable ${tokenVariable} is not set or empty`);
  }
  const profile = values.profile ?? DEFAULT_CODEX_PROFILE;

  const models = values.offline ? null : await listModels(baseUrl, token, io);
  // One model served: that is the id to write (a name typed by hand is often not the engine's id).
  const model = values.model ?? (models?.length === 1 ? models[0]?.id : undefined);
  if (!values.model && model) io.stderr(`note: model '${model}', the one the bridge serves\n`);
  if (!model) {
    const listed = models === null ? '' : ` The bridge lists: ${describeModels(models)}.`;
    throw new UsageError(`--model NAME is required: the model name Codex should send.${listed}`);
  }
  if (models !== null) {
    const listedModel = models.find((candidate) => candidate.id === model);
    if (!listedModel) {
      io.stderr(`warning: the bridge does not list model '${model}' (it lists: ${describeModels(models)}); writing it anyway\n`);
    } else if (contextWindow === null && listedModel.contextWindow !== null) {
      contextWindow = listedModel.contextWindow;
      const trainingOnly = listedModel.contextWindowSource === 'meta.n_ctx_train' ? '; that is the training context, pass --context-window if the server runs with less' : '';
      io.stderr(`note: context window ${contextWindow} tokens, as reported by the server (${listedModel.contextWindowSource}${trainingOnly})\n`);
    }
  }

  const plan = await planCodexConfigWrite({
    codexHome,
    profile,
    baseUrl,
    model,
    toolSurface,
    token,
    contextWindow,
    makeDefault: values['make-default'] ?? false,
  });
  for (const warning of plan.warnings) io.stderr(`warning: ${warning}\n`);

  const codexHomePrefix = codexHome === resolve(defaultCodexHome) ? '' : `CODEX_HOME=${shellQuote(codexHome)} `;
  const changedFiles = plan.files.filter((file) => file.changed);
  if (values['dry-run']) {
    if (changedFiles.length === 0) {
      io.stdout(`No changes: the Codex config in ${codexHome} is up to date.\n`);
    } else {
      io.stdout(formatCodexConfigPlanDiff(plan, [token]));
      io.stderr(`(dry run: nothing written${plan.createCodexHome ? `; ${codexHome} would be created` : ''})\n`);
    }
    return 0;
  }

  if (plan.confirmations.length > 0 && values.yes !== true) {
    // The diff first, then the refusal: the user sees exactly what --yes would do.
    io.stdout(formatCodexConfigPlanDiff(plan, [token]));
    for (const confirmation of plan.confirmations) io.stderr(`needs confirmation: ${confirmation}\n`);
    io.stderr('Nothing was written. Run again with --yes to apply the diff above.\n');
    return 1;
  }
  const result = await applyCodexConfigWrite(plan, { confirmed: values.yes === true });
  if (result.createdCodexHome) io.stdout(`created ${codexHome}\n`);
  for (const path of result.backups) io.stdout(`backup  ${path}\n`);
  for (const path of result.written) io.stdout(`wrote   ${path}\n`);
  if (result.written.length === 0) io.stdout(`The Codex config in ${codexHome} is already up to date; nothing written.\n`);
  io.stdout(`\nRun Codex through the bridge with:\n  ${codexHomePrefix}${plan.runCommand}\n`);
  if (values['make-default']) {
    io.stdout(`Plain \`${codexHomePrefix}codex\` and the Codex extension in VS Code now use the bridge too (${toolSurface} surface, from the bridge's model catalog).\n`);
    io.stdout('In VS Code, run "Developer: Reload Window" so the Codex extension reads the new config.toml.\n');
    io.stdout(`Undo with: freeform-bridge codex-config --restore${values['codex-home'] === undefined ? '' : ` --codex-home ${shellQuote(codexHome)}`}\n`);
  }
  return 0;
}

async function restoreConfig(codexHome: string, options: { dryRun: boolean; confirmed: boolean }, io: CodexConfigCommandIo): Promise<number> {
  const plan = await planCodexConfigRestore(codexHome);
  const target = plan.restoredText ?? '';
  const diff = plan.restoredText === null && plan.currentText !== null ? `${plan.configPath} did not exist before; it is removed (a copy is kept if you edited it).\n` : formatUnifiedDiff(plan.configPath, plan.currentText, target);
  if (options.dryRun) {
    io.stdout(diff === '' ? `No changes: ${plan.configPath} is already as it was.\n` : diff);
    io.stderr('(dry run: nothing changed)\n');
    return 0;
  }
  if (plan.editedSinceWrite && plan.currentText !== null && !options.confirmed) {
    io.stdout(diff);
    io.stderr(`needs confirmation: ${plan.configPath} was edited after freeform-bridge changed it; restoring undoes those edits too (the current file is kept as a backup).\nNothing was changed. Run again with --yes to restore it.\n`);
    return 1;
  }
  const result = await applyCodexConfigRestore(plan, { confirmed: options.confirmed });
  if (result.savedCurrentAs !== null) io.stdout(`backup  ${result.savedCurrentAs}\n`);
  const said = { content: `restored ${plan.configPath} from ${plan.backupPath ?? '(none)'}`, removed: `removed ${plan.configPath} (there was none before)`, unchanged: `${plan.configPath} was already as it was` } as const;
  io.stdout(`${said[result.restored]}\n`);
  io.stdout('In VS Code, run "Developer: Reload Window" so the Codex extension reads it again.\n');
  return 0;
}
