import { createHash } from 'node:crypto';
import { join } from 'node:path';
import * as z from '../core/schema/zod.ts';
import { parseJson } from '../core/parse-json.ts';
import { CodexConfigFileError } from './codex-config-file-error.ts';
import type { PlannedCodexConfigFile } from './plan-codex-config-write.ts';
import { readTargetFile } from './read-target-file.ts';
import { writeFileAtomically } from './write-file-atomically.ts';

/** Next to config.toml: what `--make-default` replaced, so `--restore` can put it back byte for byte. */
export const RESTORE_RECORD_FILE_NAME = 'freeform-bridge.config-restore.json';


/** Written next to config.toml by the first `--make-default`; kept (with a new hash) by later ones. */
const restoreRecordSchema = z.object({
  version: z.literal(1),
  configPath: z.string(),
  /** The byte-exact copy of config.toml before the first change; null when there was no config.toml. */
  backupPath: z.nullable(z.string()),
  /** The original file's permission bits, put back with its content. */
  originalMode: z.nullable(z.number().check(z.int())),
  /** SHA-256 of what freeform-bridge last wrote: a different file means the user edited it since. */
  writtenSha256: z.string(),
});
export type RestoreRecord = z.infer<typeof restoreRecordSchema>;

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export async function readRestoreRecord(codexHome: string): Promise<RestoreRecord | null> {
  const path = join(codexHome, RESTORE_RECORD_FILE_NAME);
  const existing = await readTargetFile(path);
  if (existing === null) return null;
  const json = parseJson(existing.text);
  const parsed = restoreRecordSchema.safeParse(json.success ? json.value : null);
  if (!parsed.success) throw new CodexConfigFileError('malformed', path, `${path} is not a restore record written by freeform-bridge; it was left untouched. Look for config.toml.bak-* files next to it to restore by hand.`);
  return parsed.data;
}

export async function recordConfigChange(codexHome: string, file: PlannedCodexConfigFile, backupPath: string | null, previousMode: number | null): Promise<void> {
  const earlier = await readRestoreRecord(codexHome);
  // The first change is the one to undo: later runs only rewrite what freeform-bridge itself wrote.
  const record: RestoreRecord =
    earlier !== null && earlier.configPath === file.path
      ? { ...earlier, writtenSha256: sha256(file.newText) }
      : { version: 1, configPath: file.path, backupPath: file.currentText === null ? null : backupPath, originalMode: file.currentText === null ? null : previousMode, writtenSha256: sha256(file.newText) };
  await writeFileAtomically(join(codexHome, RESTORE_RECORD_FILE_NAME), `${JSON.stringify(record, null, 2)}\n`);
}
