import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CodexConfigFileError } from './codex-config-file-error.ts';
import { errorCode } from './read-target-file.ts';

/**
 * Files are written atomically (temporary file in the same folder, then rename) with mode 0600: the
 * profile holds the bridge token. A backup is the replaced text byte for byte, under a name that is
 * never taken over.
 */

export const FILE_MODE = 0o600;
export const DIRECTORY_MODE = 0o700;

export function formatBackupTimestamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

export async function writeFileAtomically(path: string, text: string): Promise<void> {
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

export async function writeBackup(path: string, preferredPath: string, text: string): Promise<string> {
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
