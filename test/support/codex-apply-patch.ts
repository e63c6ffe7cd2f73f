import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { makeTempDir, removeTempDir } from './cleanup.ts';

/*
 * The real Codex CLI's verdict on a patch: the `codex` binary that `npm ci` installs applies a patch on
 * its own when its first argument is `--codex-run-as-apply-patch` (the arg0 dispatch codex-rs uses for
 * its apply_patch helper), with the same parser the agent runs on a tool call. Each run gets a fresh
 * temporary folder holding the given files; the process has a time limit, so a test never hangs on it.
 */

const REPOSITORY_ROOT = resolve(__dirname, '../..');
const RUN_LIMIT_MS = 20_000;

export interface CodexApplyResult {
  /** Exit status 0: Codex printed "Success" and changed the files. */
  applied: boolean;
  /** What Codex printed (stdout, then stderr). */
  output: string;
  /** Every file in the folder afterwards, by relative path. */
  files: Record<string, string>;
}

/** The platform binary inside node_modules/@openai/codex-<platform>/vendor/<target>/bin. */
export function findCodexBinary(): string {
  const scope = join(REPOSITORY_ROOT, 'node_modules', '@openai');
  for (const entry of readdirSync(scope)) {
    if (!entry.startsWith('codex-')) continue;
    const vendor = join(scope, entry, 'vendor');
    if (!existsSync(vendor)) continue;
    for (const target of readdirSync(vendor)) {
      const binary = join(vendor, target, 'bin', 'codex');
      if (existsSync(binary)) return binary;
    }
  }
  throw new Error(`no codex binary under ${scope}; run npm ci`);
}

export function applyPatchWithCodex(patch: string, files: Readonly<Record<string, string>>): CodexApplyResult {
  const folder = makeTempDir('codex-apply-patch-');
  try {
    for (const [path, text] of Object.entries(files)) {
      const target = join(folder, path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
    const run = spawnSync(findCodexBinary(), ['--codex-run-as-apply-patch', patch], {
      cwd: folder,
      encoding: 'utf8',
      timeout: RUN_LIMIT_MS,
      killSignal: 'SIGKILL',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (run.error !== undefined) throw run.error;
    return { applied: run.status === 0, output: `${run.stdout}${run.stderr}`, files: readFolder(folder) };
  } finally {
    removeTempDir(folder);
  }
}

function readFolder(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (directory: string): void => {
    for (const entry of readdirSync(directory)) {
      const path = join(directory, entry);
      if (statSync(path).isDirectory()) walk(path);
      else files[relative(folder, path)] = readFileSync(path, 'utf8');
    }
  };
  walk(folder);
  return files;
}
