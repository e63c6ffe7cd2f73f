import { createHash, randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseToml, TomlDate, TomlError } from 'smol-toml';
import { z } from 'zod';
import {
  applyTomlEditsToData,
  catalogFileNameFor,
  createCodexProfileEdits,
  createMakeDefaultEdits,
  describeAzureUrlRisk,
  editTomlText,
  profileFileNameFor,
  providerIdForProfile,
  renderCodexProfile,
  validateCodexProfileOptions,
  type CodexProfileOptions,
  type TomlEdit,
} from '../core/codex-config/render-codex-config.ts';
import { InvalidRequestError } from '../core/errors.ts';
import { parseJson } from '../core/parse-json.ts';
import { redactSecrets } from '../core/redact-headers.ts';

/**
 * Writes the Codex profile, its model catalog and (only with `makeDefault`) the user's config.toml.
 * Two steps so the VS Code command can show a diff before anything is written: `planCodexConfigWrite`
 * reads and computes, `applyCodexConfigWrite` writes.
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

export type CodexConfigFileProblem =
  | 'symlink'
  | 'not-a-file'
  | 'not-a-directory'
  | 'unreadable'
  | 'not-utf8'
  | 'malformed'
  | 'unsafe-edit'
  | 'changed-since-plan'
  | 'foreign-owned'
  | 'needs-confirmation'
  | 'nothing-to-restore';

/** A file the writer refuses to touch; the message names the file and says what to do. */
export class CodexConfigFileError extends Error {
  readonly codexConfigFileProblem: CodexConfigFileProblem;
  readonly path: string;
  constructor(problem: CodexConfigFileProblem, path: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CodexConfigFileError';
    this.codexConfigFileProblem = problem;
    this.path = path;
  }
  static is(value: unknown): value is CodexConfigFileError {
    return typeof value === 'object' && value !== null && typeof (value as CodexConfigFileError).codexConfigFileProblem === 'string';
  }
}

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

const FILE_MODE = 0o600;
const DIRECTORY_MODE = 0o700;
/** Codex's own keys in our provider table; anything else there comes from the user and is merged in. */
const MANAGED_PROVIDER_KEYS = new Set(['name', 'base_url', 'wire_api', 'http_headers', 'experimental_bearer_token', 'model_catalog_url']);
/** Next to config.toml: what `--make-default` replaced, so `--restore` can put it back byte for byte. */
export const RESTORE_RECORD_FILE_NAME = 'freeform-bridge.config-restore.json';

// ---------------------------------------------------------------------------------------------
// Reading

interface ExistingFile {
  text: string;
  mode: number;
}

/** Another user's file in our CODEX_HOME (a shared or copied folder): rewriting it would make it ours and break theirs. */
function isForeignOwned(uid: number): boolean {
  return typeof process.getuid === 'function' && uid !== process.getuid();
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? (error as { code?: string }).code : undefined;
}

/**
 * Reads a file the writer may replace. Refuses symbolic links (also at open time, with O_NOFOLLOW,
 * so a link swapped in after the check is refused too), non-files, unreadable and non-UTF-8 files.
 */
async function readTargetFile(path: string): Promise<ExistingFile | null> {
  let stats;
  try {
    stats = await fs.lstat(path);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw new CodexConfigFileError('unreadable', path, `cannot inspect ${path}: ${(error as Error).message}; it was left untouched`, { cause: error });
  }
  if (stats.isSymbolicLink()) {
    const target = await fs.readlink(path).catch(() => 'an unknown target');
    throw new CodexConfigFileError(
      'symlink',
      path,
      `${path} is a symbolic link (to ${target}); freeform-bridge does not write through symbolic links, so it was left untouched. Replace it with a regular file, or choose another --codex-home or --profile.`,
    );
  }
  if (!stats.isFile()) {
    throw new CodexConfigFileError('not-a-file', path, `${path} exists but is not a regular file; it was left untouched`);
  }
  if (isForeignOwned(stats.uid)) {
    throw new CodexConfigFileError(
      'foreign-owned',
      path,
      `${path} belongs to another user (uid ${stats.uid}); freeform-bridge does not rewrite other users' files, so it was left untouched. Use your own CODEX_HOME (--codex-home), or change the file's owner.`,
    );
  }
  let bytes: Buffer;
  try {
    const handle = await fs.open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    try {
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ELOOP') {
      throw new CodexConfigFileError('symlink', path, `${path} became a symbolic link while being read; it was left untouched`, { cause: error });
    }
    const reason = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (error as Error).message;
    throw new CodexConfigFileError('unreadable', path, `cannot read ${path} (${reason}); it was left untouched. Fix its permissions or move it away, then run again.`, {
      cause: error,
    });
  }
  let text: string;
  try {
    // ignoreBOM keeps a byte-order mark in the text, so an edited file keeps it too.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (error) {
    throw new CodexConfigFileError('not-utf8', path, `${path} is not UTF-8 text; it was left untouched`, { cause: error });
  }
  return { text, mode: stats.mode & 0o777 };
}

/** Parsed TOML as plain data: tables as plain objects, dates and big integers as tagged objects. */
function toPlainTomlData(value: unknown): unknown {
  if (value instanceof TomlDate) return { tomlDate: value.toISOString() };
  if (typeof value === 'bigint') return { tomlBigInteger: value.toString() };
  if (Array.isArray(value)) return value.map(toPlainTomlData);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toPlainTomlData(item)]));
  }
  return value;
}

function parseTomlText(text: string): Record<string, unknown> {
  return toPlainTomlData(parseToml(text, { integersAsBigInt: 'asNeeded' })) as Record<string, unknown>;
}

function parseTomlFile(path: string, text: string): Record<string, unknown> {
  try {
    return parseTomlText(text);
  } catch (error) {
    const detail = error instanceof TomlError ? `line ${error.line}, column ${error.column}: ${error.message}` : String(error);
    throw new CodexConfigFileError(
      'malformed',
      path,
      `${path} is not valid TOML (${detail.trimEnd()})\nIt was left untouched. Fix it (Codex cannot load it either) or move it away, then run again.`,
      { cause: error },
    );
  }
}

/**
 * Applies the edits and proves they did nothing else: the result must parse to the original document
 * plus exactly the edits. The text scanner is simpler than a TOML parser, so this is the safety net.
 */
function editTomlFile(path: string, text: string, edits: readonly TomlEdit[], manualHint: string): string {
  const refuse = (reason: string, cause?: unknown): never => {
    throw new CodexConfigFileError(
      'unsafe-edit',
      path,
      `cannot update ${path} without disturbing the rest of it (${reason}); it was left untouched. Add these settings by hand:\n${manualHint}`,
      { cause },
    );
  };
  let edited = '';
  try {
    edited = editTomlText(text, edits);
  } catch (error) {
    if (InvalidRequestError.is(error)) refuse(error.message, error);
    throw error;
  }
  const expected = applyTomlEditsToData(parseTomlText(text), edits);
  let actual: Record<string, unknown> | null = null;
  try {
    actual = parseTomlText(edited);
  } catch (error) {
    refuse(`the edited text would not be valid TOML: ${(error as Error).message.split('\n')[0]}`, error);
  }
  if (!isDeepStrictEqual(actual, expected)) refuse('the edit would change other settings');
  return edited;
}

function readPath(data: Record<string, unknown> | null, path: readonly string[]): unknown {
  let current: unknown = data;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function formatBackupTimestamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

// ---------------------------------------------------------------------------------------------
// Planning

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

async function inspectCodexHome(codexHome: string): Promise<boolean> {
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

// ---------------------------------------------------------------------------------------------
// Applying

async function writeFileAtomically(path: string, text: string): Promise<void> {
  const temporaryPath = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  // 'wx' refuses an existing file (and a planted link) at the temporary name.
  const handle = await fs.open(temporaryPath, 'wx', FILE_MODE);
  try {
    try {
      await handle.writeFile(text, 'utf8');
      // The umask can only narrow the creation mode, but make it exact anyway.
      await handle.chmod(FILE_MODE);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // rename replaces a link itself, never its target, so a link planted since planning is not followed.
    await fs.rename(temporaryPath, path);
  } catch (error) {
    await fs.rm(temporaryPath, { force: true });
    throw error;
  }
}

async function writeBackup(path: string, preferredPath: string, text: string): Promise<string> {
  for (let attempt = 1; attempt <= 100; attempt += 1) {
    const candidate = attempt === 1 ? preferredPath : `${preferredPath}-${attempt}`;
    try {
      await fs.writeFile(candidate, text, { encoding: 'utf8', flag: 'wx', mode: FILE_MODE });
      return candidate;
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
  }
  throw new CodexConfigFileError('unsafe-edit', path, `cannot find a free backup name next to ${path}; nothing was written`);
}

/**
 * Writes a plan. Every file is first re-read and compared with what was planned (the VS Code diff
 * may have been open for a while); if any changed, nothing is written. Unchanged files are not
 * touched, so a second run writes nothing.
 */
export async function applyCodexConfigWrite(plan: CodexConfigWritePlan, options: ApplyCodexConfigOptions = {}): Promise<CodexConfigWriteResult> {
  if (plan.confirmations.length > 0 && options.confirmed !== true) {
    const configFile = plan.files.find((file) => file.role === 'config');
    throw new CodexConfigFileError('needs-confirmation', configFile?.path ?? plan.codexHome, `nothing was written: ${plan.confirmations.join(' ')} Confirm to go ahead.`);
  }
  const createdCodexHome = plan.createCodexHome && (await inspectCodexHome(plan.codexHome));
  if (createdCodexHome) await fs.mkdir(plan.codexHome, { recursive: true, mode: DIRECTORY_MODE });
  for (const file of plan.files) {
    const current = await readTargetFile(file.path);
    if ((current?.text ?? null) !== file.currentText) {
      throw new CodexConfigFileError('changed-since-plan', file.path, `${file.path} changed since the change was prepared; nothing was written. Run the command again.`);
    }
  }
  const result: CodexConfigWriteResult = { createdCodexHome, written: [], unchanged: [], backups: [] };
  for (const file of plan.files) {
    if (!file.changed) {
      if (file.narrowMode) await fs.chmod(file.path, FILE_MODE);
      result.unchanged.push(file.path);
      continue;
    }
    let backupPath: string | null = null;
    if (file.backupPath !== null && file.currentText !== null) {
      backupPath = await writeBackup(file.path, file.backupPath, file.currentText);
      result.backups.push(backupPath);
    }
    const previousMode = file.role === 'config' ? await readMode(file.path) : null;
    await writeFileAtomically(file.path, file.newText);
    result.written.push(file.path);
    if (file.role === 'config') await recordConfigChange(plan.codexHome, file, backupPath, previousMode);
  }
  return result;
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

// ---------------------------------------------------------------------------------------------
// Undoing --make-default

/** Written next to config.toml by the first `--make-default`; kept (with a new hash) by later ones. */
const restoreRecordSchema = z.object({
  version: z.literal(1),
  configPath: z.string(),
  /** The byte-exact copy of config.toml before the first change; null when there was no config.toml. */
  backupPath: z.string().nullable(),
  /** The original file's permission bits, put back with its content. */
  originalMode: z.number().int().nullable(),
  /** SHA-256 of what freeform-bridge last wrote: a different file means the user edited it since. */
  writtenSha256: z.string(),
});
type RestoreRecord = z.infer<typeof restoreRecordSchema>;

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

async function readMode(path: string): Promise<number | null> {
  try {
    return (await fs.stat(path)).mode & 0o777;
  } catch {
    return null;
  }
}

async function readRestoreRecord(codexHome: string): Promise<RestoreRecord | null> {
  const path = join(codexHome, RESTORE_RECORD_FILE_NAME);
  const existing = await readTargetFile(path);
  if (existing === null) return null;
  const json = parseJson(existing.text);
  const parsed = restoreRecordSchema.safeParse(json.success ? json.value : null);
  if (!parsed.success) throw new CodexConfigFileError('malformed', path, `${path} is not a restore record written by freeform-bridge; it was left untouched. Look for config.toml.bak-* files next to it to restore by hand.`);
  return parsed.data;
}

async function recordConfigChange(codexHome: string, file: PlannedCodexConfigFile, backupPath: string | null, previousMode: number | null): Promise<void> {
  const earlier = await readRestoreRecord(codexHome);
  // The first change is the one to undo: later runs only rewrite what freeform-bridge itself wrote.
  const record: RestoreRecord =
    earlier !== null && earlier.configPath === file.path
      ? { ...earlier, writtenSha256: sha256(file.newText) }
      : { version: 1, configPath: file.path, backupPath: file.currentText === null ? null : backupPath, originalMode: file.currentText === null ? null : previousMode, writtenSha256: sha256(file.newText) };
  await writeFileAtomically(join(codexHome, RESTORE_RECORD_FILE_NAME), `${JSON.stringify(record, null, 2)}\n`);
}

export interface CodexConfigRestorePlan {
  codexHome: string;
  configPath: string;
  /** Null when config.toml is gone. */
  currentText: string | null;
  /** What config.toml goes back to; null = it did not exist, so it is removed. */
  restoredText: string | null;
  backupPath: string | null;
  /** config.toml differs from what freeform-bridge wrote: restoring drops those edits (a backup keeps them). */
  editedSinceWrite: boolean;
  originalMode: number | null;
  now: Date;
}

/** Reads the restore record and the files; writes nothing. */
export async function planCodexConfigRestore(codexHomeGiven: string, now: Date = new Date()): Promise<CodexConfigRestorePlan> {
  const codexHome = resolve(codexHomeGiven);
  const record = await readRestoreRecord(codexHome);
  const configPath = join(codexHome, 'config.toml');
  if (record === null) {
    throw new CodexConfigFileError(
      'nothing-to-restore',
      configPath,
      `there is nothing to restore: freeform-bridge has not changed ${configPath} (no ${RESTORE_RECORD_FILE_NAME} in ${codexHome}). Backups made by earlier versions are the config.toml.bak-* files there.`,
    );
  }
  const current = await readTargetFile(record.configPath);
  let restoredText: string | null = null;
  if (record.backupPath !== null) {
    const backup = await readTargetFile(record.backupPath);
    if (backup === null) throw new CodexConfigFileError('nothing-to-restore', record.backupPath, `the backup ${record.backupPath} is gone, so ${record.configPath} cannot be restored; it was left untouched`);
    restoredText = backup.text;
  }
  return {
    codexHome,
    configPath: record.configPath,
    currentText: current?.text ?? null,
    restoredText,
    backupPath: record.backupPath,
    editedSinceWrite: current === null || sha256(current.text) !== record.writtenSha256,
    originalMode: record.originalMode,
    now,
  };
}

export interface CodexConfigRestoreResult {
  /** The copy of the replaced config.toml (it had edits made after freeform-bridge's), or null. */
  savedCurrentAs: string | null;
  restored: 'content' | 'removed' | 'unchanged';
}

/**
 * Puts config.toml back byte for byte (or removes it when there was none). Edits made since
 * freeform-bridge wrote it need `confirmed`, and even then the replaced file is kept as a backup.
 */
export async function applyCodexConfigRestore(plan: CodexConfigRestorePlan, options: ApplyCodexConfigOptions = {}): Promise<CodexConfigRestoreResult> {
  if (plan.editedSinceWrite && plan.currentText !== null && options.confirmed !== true) {
    throw new CodexConfigFileError(
      'needs-confirmation',
      plan.configPath,
      `${plan.configPath} was edited after freeform-bridge changed it; restoring would undo those edits too (the current file would be kept as a backup). Nothing was changed. Confirm to go ahead.`,
    );
  }
  const current = await readTargetFile(plan.configPath);
  if ((current?.text ?? null) !== plan.currentText) {
    throw new CodexConfigFileError('changed-since-plan', plan.configPath, `${plan.configPath} changed since the restore was prepared; nothing was changed. Run it again.`);
  }
  let savedCurrentAs: string | null = null;
  if (plan.currentText !== null && plan.editedSinceWrite) {
    savedCurrentAs = await writeBackup(plan.configPath, `${plan.configPath}.bak-${formatBackupTimestamp(plan.now)}-before-restore`, plan.currentText);
  }
  let restored: CodexConfigRestoreResult['restored'];
  if (plan.restoredText === null) {
    if (plan.currentText !== null) await fs.rm(plan.configPath);
    restored = plan.currentText === null ? 'unchanged' : 'removed';
  } else if (plan.currentText === plan.restoredText) {
    restored = 'unchanged';
  } else {
    await writeFileAtomically(plan.configPath, plan.restoredText);
    if (plan.originalMode !== null && process.platform !== 'win32') await fs.chmod(plan.configPath, plan.originalMode);
    restored = 'content';
  }
  await fs.rm(join(plan.codexHome, RESTORE_RECORD_FILE_NAME), { force: true });
  return { savedCurrentAs, restored };
}

// ---------------------------------------------------------------------------------------------
// Showing a plan as a unified diff (dry run)

interface DiffLine {
  kind: ' ' | '-' | '+';
  text: string;
  oldNumber: number;
  newNumber: number;
}

function splitLines(text: string): string[] {
  return text === '' ? [] : (text.match(/[^\n]*\n|[^\n]+$/g) ?? []);
}

/** Line diff: common prefix and suffix, then an LCS table over the (small) changed middle. */
function diffLines(oldLines: readonly string[], newLines: readonly string[]): DiffLine[] {
  let prefix = 0;
  while (prefix < oldLines.length && prefix < newLines.length && oldLines[prefix] === newLines[prefix]) prefix += 1;
  let suffix = 0;
  while (
    suffix < oldLines.length - prefix &&
    suffix < newLines.length - prefix &&
    oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]
  ) {
    suffix += 1;
  }
  const oldMiddle = oldLines.slice(prefix, oldLines.length - suffix);
  const newMiddle = newLines.slice(prefix, newLines.length - suffix);
  const middle: Array<{ kind: DiffLine['kind']; text: string }> = [];
  if (oldMiddle.length * newMiddle.length > 4_000_000) {
    for (const text of oldMiddle) middle.push({ kind: '-', text });
    for (const text of newMiddle) middle.push({ kind: '+', text });
  } else {
    const width = newMiddle.length + 1;
    const table = new Uint32Array((oldMiddle.length + 1) * width);
    for (let oldIndex = oldMiddle.length - 1; oldIndex >= 0; oldIndex -= 1) {
      for (let newIndex = newMiddle.length - 1; newIndex >= 0; newIndex -= 1) {
        table[oldIndex * width + newIndex] =
          oldMiddle[oldIndex] === newMiddle[newIndex]
            ? table[(oldIndex + 1) * width + newIndex + 1]! + 1
            : Math.max(table[(oldIndex + 1) * width + newIndex]!, table[oldIndex * width + newIndex + 1]!);
      }
    }
    let oldIndex = 0;
    let newIndex = 0;
    while (oldIndex < oldMiddle.length || newIndex < newMiddle.length) {
      if (oldIndex < oldMiddle.length && newIndex < newMiddle.length && oldMiddle[oldIndex] === newMiddle[newIndex]) {
        middle.push({ kind: ' ', text: oldMiddle[oldIndex]! });
        oldIndex += 1;
        newIndex += 1;
      } else if (oldIndex < oldMiddle.length && (newIndex >= newMiddle.length || table[(oldIndex + 1) * width + newIndex]! >= table[oldIndex * width + newIndex + 1]!)) {
        // Removals first on ties, as diff(1) prints them.
        middle.push({ kind: '-', text: oldMiddle[oldIndex]! });
        oldIndex += 1;
      } else {
        middle.push({ kind: '+', text: newMiddle[newIndex]! });
        newIndex += 1;
      }
    }
  }
  const operations = [
    ...oldLines.slice(0, prefix).map((text) => ({ kind: ' ' as const, text })),
    ...middle,
    ...oldLines.slice(oldLines.length - suffix).map((text) => ({ kind: ' ' as const, text })),
  ];
  let oldNumber = 0;
  let newNumber = 0;
  return operations.map((operation) => {
    if (operation.kind !== '+') oldNumber += 1;
    if (operation.kind !== '-') newNumber += 1;
    return { ...operation, oldNumber, newNumber };
  });
}

function formatDiffLine(line: DiffLine): string {
  const body = line.text.endsWith('\n') ? line.text.slice(0, -1).replace(/\r$/, '') : line.text.replace(/\r$/, '');
  return `${line.kind}${body}\n${line.text.endsWith('\n') ? '' : '\\ No newline at end of file\n'}`;
}

/** A unified diff (3 lines of context) from `currentText` (null = new file) to `newText`. */
export function formatUnifiedDiff(path: string, currentText: string | null, newText: string): string {
  const lines = diffLines(splitLines(currentText ?? ''), splitLines(newText));
  const changedIndexes = lines.flatMap((line, index) => (line.kind === ' ' ? [] : [index]));
  if (changedIndexes.length === 0) return '';
  let output = `--- ${currentText === null ? '/dev/null' : path}\n+++ ${path}\n`;
  const context = 3;
  let hunkStart = 0;
  while (hunkStart < changedIndexes.length) {
    let hunkEnd = hunkStart;
    while (hunkEnd + 1 < changedIndexes.length && changedIndexes[hunkEnd + 1]! - changedIndexes[hunkEnd]! <= context * 2 + 1) hunkEnd += 1;
    const first = Math.max(0, changedIndexes[hunkStart]! - context);
    const last = Math.min(lines.length - 1, changedIndexes[hunkEnd]! + context);
    const hunk = lines.slice(first, last + 1);
    const oldCount = hunk.filter((line) => line.kind !== '+').length;
    const newCount = hunk.filter((line) => line.kind !== '-').length;
    const firstLine = hunk[0]!;
    const oldStart = oldCount === 0 ? firstLine.oldNumber : firstLine.oldNumber - (firstLine.kind === '+' ? 0 : 1) + 1;
    const newStart = newCount === 0 ? firstLine.newNumber : firstLine.newNumber - (firstLine.kind === '-' ? 0 : 1) + 1;
    output += `@@ -${oldStart},${oldCount} +${newStart},${newCount} @@\n`;
    output += hunk.map(formatDiffLine).join('');
    hunkStart = hunkEnd + 1;
  }
  return output;
}

/** The whole plan as one diff, with secrets (the bridge token) replaced by a marker. */
export function formatCodexConfigPlanDiff(plan: CodexConfigWritePlan, secrets: readonly (string | null)[]): string {
  return plan.files
    .filter((file) => file.changed)
    .map((file) => redactSecrets(formatUnifiedDiff(file.path, file.currentText, file.newText), secrets))
    .join('');
}
