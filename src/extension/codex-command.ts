import * as os from 'node:os';
import * as path from 'node:path';

/** Where Codex reads its configuration: the setting, else $CODEX_HOME, else ~/.codex. */
export function resolveCodexHome(setting: string | null): string {
  const configured = setting ?? process.env.CODEX_HOME ?? '';
  if (configured === '') return path.join(os.homedir(), '.codex');
  return configured.startsWith('~') ? path.join(os.homedir(), configured.slice(1)) : path.resolve(configured);
}

/**
 * The command a user types in a terminal. When the profile was written somewhere other than the
 * folder Codex reads by default, CODEX_HOME has to be set for that one command.
 */
export function buildCodexCommand(profile: string, codexHomeSetting: string | null, platform: NodeJS.Platform = process.platform): string {
  const command = `codex -p ${profile}`;
  if (codexHomeSetting === null) return command;
  const home = resolveCodexHome(codexHomeSetting);
  const defaultHome = process.env.CODEX_HOME ? path.resolve(process.env.CODEX_HOME) : path.join(os.homedir(), '.codex');
  if (home === defaultHome) return command;
  if (platform === 'win32') return `$env:CODEX_HOME='${home.replace(/'/g, "''")}'; ${command}`;
  return `CODEX_HOME='${home.replace(/'/g, `'\\''`)}' ${command}`;
}
