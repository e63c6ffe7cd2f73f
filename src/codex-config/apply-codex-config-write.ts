import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { CodexConfigFileError } from './codex-config-file-error.ts';
import { inspectCodexHome, type ApplyCodexConfigOptions, type CodexConfigWritePlan, type CodexConfigWriteResult } from './plan-codex-config-write.ts';
import { readMode, readTargetFile } from './read-target-file.ts';
import { recordConfigChange } from './restore-record.ts';
import { DIRECTORY_MODE, FILE_MODE, writeBackup, writeFileAtomically } from './write-file-atomically.ts';

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
  const unlock = await lockCodexHome(plan.codexHome, plan.files.find((file) => file.role === 'config')?.path ?? plan.codexHome);
  try {
    return await writePlannedFiles(plan, createdCodexHome);
  } finally {
    await unlock();
  }
}

/** Held while files are compared and written, so two runs at once cannot both write (and mix their restore records). */
const LOCK_FILE_NAME = 'freeform-bridge.config.lock';

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function lockCodexHome(codexHome: string, path: string): Promise<() => Promise<void>> {
  const lockPath = join(codexHome, LOCK_FILE_NAME);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await fs.writeFile(lockPath, `${process.pid}\n`, { flag: 'wx', mode: FILE_MODE });
      return () => fs.rm(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock left by a run that died is taken over; one held by a live run is not.
      const holder = Number.parseInt(await fs.readFile(lockPath, 'utf8').catch(() => ''), 10);
      if (attempt === 0 && Number.isInteger(holder) && holder > 0 && !isProcessAlive(holder)) {
        await fs.rm(lockPath, { force: true });
        continue;
      }
      throw new CodexConfigFileError('changed-since-plan', path, `another freeform-bridge run is writing the Codex config now (${lockPath}, process ${Number.isInteger(holder) ? holder : 'unknown'}); nothing was written. Run the command again when it is done.`);
    }
  }
  throw new CodexConfigFileError('changed-since-plan', path, `could not take ${lockPath}; nothing was written. Run the command again.`);
}

async function writePlannedFiles(plan: CodexConfigWritePlan, createdCodexHome: boolean): Promise<CodexConfigWriteResult> {
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
    // A read-only config.toml stays read-only (and private: it may hold the token).
    if (previousMode !== null && (previousMode & 0o200) === 0) await fs.chmod(file.path, previousMode & FILE_MODE);
    result.written.push(file.path);
    if (file.role === 'config') await recordConfigChange(plan.codexHome, file, backupPath, previousMode);
  }
  return result;
}
