import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository's root folder, from this file's place in it. */
export const REPOSITORY_ROOT = resolve(__dirname, '..', '..');

/**
 * The files under `folders` (paths relative to the repository root) whose names match `names`,
 * skipping the folders in `skipped`. A folder that does not exist lists nothing.
 */
export function listRepositoryFiles(folders: readonly string[], names: RegExp, skipped: ReadonlySet<string>): string[] {
  const visit = (folder: string): string[] => {
    let entries: string[];
    try {
      entries = readdirSync(join(REPOSITORY_ROOT, folder));
    } catch {
      return [];
    }
    return entries.flatMap((entry) => {
      const path = join(folder, entry);
      if (skipped.has(path)) return [];
      if (statSync(join(REPOSITORY_ROOT, path)).isDirectory()) return visit(path);
      return names.test(entry) ? [path] : [];
    });
  };
  return folders.flatMap(visit);
}
