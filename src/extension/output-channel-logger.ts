import type * as vscode from 'vscode';
import type { Logger } from '../core/logger.ts';
import { redactSecrets } from '../core/redact-secrets.ts';
import { makeControlCharactersVisible } from '../core/terminal-text.ts';

/**
 * The four-method Logger over a LogOutputChannel, so the user controls the level
 * with VS Code's own "Set Log Level" and the lines carry VS Code's timestamps. Lines carry text from
 * engines and clients: their control characters are made visible, as on the CLI's terminal.
 */
export function createOutputChannelLogger(channel: vscode.LogOutputChannel, getSecrets: () => ReadonlyArray<string | null>): Logger {
  const format = (message: string, details?: Record<string, unknown>): string => {
    // Last line of defence: a backend may echo the key in an error body that ends up in a log line.
    const suffix = details && Object.keys(details).length > 0 ? ` ${JSON.stringify(details)}` : '';
    return makeControlCharactersVisible(redactSecrets(`${message}${suffix}`, getSecrets()));
  };
  return {
    error: (message, details) => channel.error(format(message, details)),
    warn: (message, details) => channel.warn(format(message, details)),
    info: (message, details) => channel.info(format(message, details)),
    debug: (message, details) => channel.debug(format(message, details)),
  };
}
