import { promises as fs } from 'node:fs';
import { join, resolve } from 'node:path';
import { TomlError } from 'smol-toml';
import { catalogFileNameFor, describeAzureUrlRisk, profileFileNameFor, providerIdForProfile, validateCodexProfileOptions, type CodexProfileOptions } from '../core/codex-config/codex-profile-options.ts';
import { createCodexProfileEdits, createMakeDefaultEdits, renderCodexProfile } from '../core/codex-config/render-codex-profile.ts';
import { editTomlText } from '../core/codex-config/toml-edit.ts';
import { CodexConfigFileError } from './codex-config-file-error.ts';
import { errorCode, readMode, readTargetFile, type ExistingFile } from './read-target-file.ts';
import { editTomlFile, parseTomlFile, parseTomlText, readPath } from './toml-document.ts';
import { formatBackupTimestamp } from './write-file-atomically.ts';

/**
 * Writes the Codex profile, its model catalog and (only with `makeDefault`) the user's config.toml.
 * Two steps so the VS Code command can show a diff before anything is written: `planCodexConfigWrite`
 * reads and computes, `applyCodexConfigWrite` (apply-codex-config-write.ts) writes.
 *
 * Decisions:
 * - An existing profile is edited, not replaced: the keys the bridge manages are updated in place and
 *   everything else the user added (keys, comments, extra headers) stays. A profile never touched by
 *   the user therefore comes out exactly as a fresh render.
 * - The model catalog is generated: it is rewritten whole on every run (the profile's header says so;
 *   the base prompt is customised with `model_instructions_file` in the profile instead).
 * - config.toml is read only to warn about settings that break `codex -p` (a legacy `profile` key or
 *   `[profiles.<name>]` table, extra keys merged into our provider table) and written only with
 *   `makeDefault`, after a byte-for-byte backup.
 * - Files are written atomically (temporary file in the same folder, then rename) with mode 0600: the
 *   profile holds the bridge token. Symbolic links, non-files, unreadable or malformed files are
 *   refused and left untouched. Every edited TOML text is re-parsed and must equal the original
 *   document plus exactly our edits, or nothing is written.
 */

export type CodexConfigFileRole = 'profile' | 'model-catalog' | 'config';

export interface PlannedCodexConfigFile {
  role: CodexConfigFileRole;
  path: string;
  /** Null when the file does not exist yet. */
  currentText: string | null;
  newText: string;
  changed: boolean;
  /** The existing file is readable by others: it is narrowed to 0600 even if its content is unchanged. */
  narrowMode: boolean;
  /** Where the current content is copied before it is replaced (config.toml only); a suffix is added if taken. */
  backupPath: string | null;
}

export interface CodexConfigWritePlan {
  codexHome: string;
  /** CODEX_HOME does not exist yet and will be created with mode 0700. */
  createCodexHome: boolean;
  profile: string;
  /** In write order: catalog before the profile that references it, config.toml last. */
  files: PlannedCodexConfigFile[];
  /** Things that will stop `codex -p` from working as intended but are not ours to change. */
  warnings: string[];
  /** The command that uses the profile, e.g. `codex -p freeform-bridge`. */
  runCommand: string;
  /**
   * Changes the user has to agree to before `applyCodexConfigWrite` writes (config.toml's
   * `model_provider` names another provider); empty when none.
   */
  confirmations: string[];
}

export interface CodexConfigWriteOptions extends Omit<CodexProfileOptions, 'providerId'> {
  codexHome: string;
  /** Defaults to `providerIdForProfile(profile)`. */
  providerId?: string;
  /** Also point the user's config.toml at the bridge (see `createMakeDefaultEdits`). */
  makeDefault?: boolean;
  /** Clock for the backup name (tests). */
  now?: Date;
}

export interface ApplyCodexConfigOptions {
  /** The user agreed to `plan.confirmations` (after seeing the diff). */
  confirmed?: boolean;
}

export interface CodexConfigWriteResult {
  createdCodexHome: boolean;
  written: string[];
  unchanged: string[];
  backups: string[];
}

/** Codex's own keys in our provider table; anything else there comes from the user and is merged in. */
const MANAGED_PROVIDER_KEYS = new Set(['name', 'base_url', 'wire_api', 'http_headers', 'experimental_bearer_token', 'model_catalog_url']);

function analyseUserConfig(path: string, document: Record<string, unknown>, options: { profile: string; providerId: string }): string[] {
  const warnings: string[] = [];
  const legacyProfile = document.profile;
  if (legacyProfile !== undefined) {
    warnings.push(
      `${path} has a top-level \`profile = ${JSON.stringify(legacyProfile)}\`: Codex 0.171 refuses to start with it. Remove that line (profiles are now <name>.config.toml files).`,
    );
  }
  if (readPath(document, ['profiles', options.profile]) !== undefined) {
    warnings.push(
      `${path} has a legacy [profiles.${options.profile}] table: Codex refuses \`-p ${options.profile}\` while it exists. Move its settings into ${options.profile}.config.toml and remove the table.`,
    );
  }
  const provider = readPath(document, ['model_providers', options.providerId]);
  if (typeof provider === 'object' && provider !== null && !Array.isArray(provider)) {
    const extraKeys = Object.keys(provider).filter((key) => !MANAGED_PROVIDER_KEYS.has(key));
    if (extraKeys.length > 0) {
      warnings.push(
        `${path} also defines [model_providers.${options.providerId}] with ${extraKeys.join(', ')}: Codex merges those into the profile's provider (an env_key there, for example, makes every turn fail when the variable is unset).`,
      );
    }
  }
  return warnings;
}

export async function inspectCodexHome(codexHome: string): Promise<boolean> {
  try {
    const stats = await fs.stat(codexHome);
    if (!stats.isDirectory()) throw new CodexConfigFileError('not-a-directory', codexHome, `${codexHome} exists but is not a folder; choose another --codex-home`);
    return false;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return true;
    throw error;
  }
}

function narrowModeNeeded(existing: ExistingFile | null): boolean {
  return existing !== null && process.platform !== 'win32' && (existing.mode & 0o077) !== 0;
}

/** Reads the current files and computes what would be written. Writes nothing. */
export async function planCodexConfigWrite(options: CodexConfigWriteOptions): Promise<CodexConfigWritePlan> {
  const profileOptions = validateCodexProfileOptions({ ...options, providerId: options.providerId ?? providerIdForProfile(options.profile) });
  const codexHome = resolve(options.codexHome);
  const createCodexHome = await inspectCodexHome(codexHome);
  const files: PlannedCodexConfigFile[] = [];
  const warnings: string[] = [];
  const azureRisk = describeAzureUrlRisk(profileOptions.baseUrl);
  if (azureRisk !== null) warnings.push(azureRisk);
  const rendered = renderCodexProfile(profileOptions);

  if (rendered.catalogFileName !== null && rendered.catalogText !== null) {
    const catalogPath = join(codexHome, catalogFileNameFor(profileOptions.profile));
    const existing = await readTargetFile(catalogPath);
    files.push({
      role: 'model-catalog',
      path: catalogPath,
      currentText: existing?.text ?? null,
      newText: rendered.catalogText,
      changed: existing?.text !== rendered.catalogText,
      narrowMode: narrowModeNeeded(existing),
      backupPath: null,
    });
  }

  const profilePath = join(codexHome, profileFileNameFor(profileOptions.profile));
  const existingProfile = await readTargetFile(profilePath);
  let profileText = rendered.profileText;
  if (existingProfile !== null) {
    const document = parseTomlFile(profilePath, existingProfile.text);
    profileText = editTomlFile(profilePath, existingProfile.text, createCodexProfileEdits(profileOptions, document), rendered.profileText);
  }
  files.push({
    role: 'profile',
    path: profilePath,
    currentText: existingProfile?.text ?? null,
    newText: profileText,
    changed: existingProfile?.text !== profileText,
    narrowMode: narrowModeNeeded(existingProfile),
    backupPath: null,
  });

  const configPath = join(codexHome, 'config.toml');
  const confirmations: string[] = [];
  if (options.makeDefault) {
    const manualHint = editTomlText('', createMakeDefaultEdits(profileOptions, null));
    let existingConfig: ExistingFile | null;
    let document: Record<string, unknown> | null;
    try {
      existingConfig = await readTargetFile(configPath);
      document = existingConfig === null ? null : parseTomlFile(configPath, existingConfig.text);
    } catch (error) {
      // Refused as it is; the message also says what the change would have been, so it can be made by hand.
      if (CodexConfigFileError.is(error)) throw new CodexConfigFileError(error.codexConfigFileProblem, error.path, `${error.message}\nThe settings it would have added to ${configPath}:\n${manualHint}`, { cause: error });
      throw error;
    }
    if (document !== null) warnings.push(...analyseUserConfig(configPath, document, profileOptions));
    const currentProvider = document?.model_provider;
    if (currentProvider !== undefined && currentProvider !== profileOptions.providerId) {
      confirmations.push(
        `${configPath} sets model_provider = ${JSON.stringify(currentProvider)}: this replaces it with "${profileOptions.providerId}", so Codex and the Codex extension in VS Code use the bridge by default (\`freeform-bridge codex-config --restore\` puts the file back byte for byte).`,
      );
    }
    const existingMode = existingConfig === null ? null : await readMode(configPath);
    if (existingMode !== null && (existingMode & 0o200) === 0) {
      // A read-only config.toml was made so on purpose (a managed setup, a guard against tools): ask.
      confirmations.push(`${configPath} is read-only (mode ${existingMode.toString(8).padStart(4, '0')}): this replaces it anyway and keeps it read-only.`);
    }
    const edits = createMakeDefaultEdits(profileOptions, document);
    const newText = existingConfig === null ? manualHint : editTomlFile(configPath, existingConfig.text, edits, manualHint);
    const changed = existingConfig?.text !== newText;
    files.push({
      role: 'config',
      path: configPath,
      currentText: existingConfig?.text ?? null,
      newText,
      changed,
      narrowMode: narrowModeNeeded(existingConfig) && profileOptions.token !== null,
      backupPath: existingConfig !== null && changed ? `${configPath}.bak-${formatBackupTimestamp(options.now ?? new Date())}` : null,
    });
  } else {
    warnings.push(...(await inspectUserConfigReadOnly(configPath, profileOptions)));
  }

  return { codexHome, createCodexHome, profile: profileOptions.profile, files, warnings, runCommand: `codex -p ${profileOptions.profile}`, confirmations };
}

/** Without makeDefault config.toml is only read, through links too, and problems become warnings. */
async function inspectUserConfigReadOnly(configPath: string, options: { profile: string; providerId: string }): Promise<string[]> {
  let text: string;
  try {
    text = await fs.readFile(configPath, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return [];
    return [`could not read ${configPath} to check it (${(error as Error).message}); it was not changed`];
  }
  try {
    return analyseUserConfig(configPath, parseTomlText(text), options);
  } catch (error) {
    const detail = error instanceof TomlError ? `line ${error.line}, column ${error.column}: ${error.message.split('\n')[0]}` : String(error);
    return [`${configPath} is not valid TOML (${detail}): Codex will not start until it is fixed. freeform-bridge did not change it.`];
  }
}


/**
 * Whether `config.toml` makes the bridge Codex's default (what `--make-default` writes, from this
 * extension or the command line): then the Codex extension in VS Code needs the bridge from the moment
 * its window starts. Any problem reading the file is a plain "no".
 */
export async function isCodexDefaultPointedAtBridge(codexHome: string, providerId: string): Promise<boolean> {
  try {
    const document = parseTomlText(await fs.readFile(join(codexHome, 'config.toml'), 'utf8'));
    return document.model_provider === providerId && typeof readPath(document, ['model_providers', providerId, 'model_catalog_url']) === 'string';
  } catch {
    return false;
  }
}
