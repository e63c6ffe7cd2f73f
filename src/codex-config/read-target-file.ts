import { constants, promises as fs } from 'node:fs';
import { CodexConfigFileError } from './codex-config-file-error.ts';

export interface ExistingFile {
  text: string;
  mode: number;
}

/** Another user's file in our CODEX_HOME (a shared or copied folder): rewriting it would make it ours and break theirs. */
function isForeignOwned(uid: number): boolean {
  return typeof process.getuid === 'function' && uid !== process.getuid();
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? (error as { code?: string }).code : undefined;
}

/**
 * Reads a file the writer may replace. Refuses symbolic links (also at open time, with O_NOFOLLOW,
 * so a link swapped in after the check is refused too), non-files, unreadable and non-UTF-8 files.
 */
export async function readTargetFile(path: string): Promise<ExistingFile | null> {
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

export async function readMode(path: string): Promise<number | null> {
  try {
    return (await fs.stat(path)).mode & 0o777;
  } catch {
    return null;
  }
}
