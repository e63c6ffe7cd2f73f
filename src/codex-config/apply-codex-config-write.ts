import { promises as fs } from 'node:fs';
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
