import { promises as fs } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CodexConfigFileError } from './codex-config-file-error.ts';
import type { ApplyCodexConfigOptions } from './plan-codex-config-write.ts';
import { readTargetFile } from './read-target-file.ts';
import { readRestoreRecord, RESTORE_RECORD_FILE_NAME, sha256 } from './restore-record.ts';
import { formatBackupTimestamp, writeBackup, writeFileAtomically } from './write-file-atomically.ts';

/** Undoing `--make-default`: config.toml goes back to what it was before the first change. */

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
  // The record lives in CODEX_HOME, which may be shared or synced: a tampered one must not make the
  // restore copy any readable file over any writable one. Only the two files it can name are trusted.
  const backupName = /^config\.toml\.bak-[0-9A-Za-z-]+$/;
  const backupKnown = record.backupPath === null || (dirname(record.backupPath) === codexHome && backupName.test(basename(record.backupPath)));
  if (record.configPath !== configPath || !backupKnown) {
    throw new CodexConfigFileError(
      'malformed',
      join(codexHome, RESTORE_RECORD_FILE_NAME),
      `the restore record ${join(codexHome, RESTORE_RECORD_FILE_NAME)} names a file freeform-bridge did not write (only ${configPath} and its config.toml.bak-* backups there are restored); nothing was changed`,
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
    // Permission bits only: a record cannot ask for setuid or sticky bits.
    originalMode: record.originalMode === null ? null : record.originalMode & 0o777,
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
