import type * as vscode from 'vscode';
import type { Logger } from '../core/logger.ts';

/**
 * The four-method Logger (style.md §10) over a LogOutputChannel, so the user controls the level
 * with VS Code's own "Set Log Level" and the lines carry VS Code's timestamps.
 */
export function createOutputChannelLogger(channel: vscode.LogOutputChannel, getSecrets: () => ReadonlyArray<string | null>): Logger {
  const format = (message: string, details?: Record<string, unknown>): string => {
    const suffix = details && Object.keys(details).length > 0 ? ` ${JSON.stringify(details)}` : '';
    return redactSecrets(`${message}${suffix}`, getSecrets());
  };
  return {
    error: (message, details) => channel.error(format(message, details)),
    warn: (message, details) => channel.warn(format(message, details)),
    info: (message, details) => channel.info(format(message, details)),
    debug: (message, details) => channel.debug(format(message, details)),
  };
}

/**
 * Last line of defence: the server already redacts headers, but a backend may echo the key in an
 * error body, and that text ends up in a log line.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | null>): string {
  let redacted = text;
  for (const secret of secrets) {
    // Very short values would redact ordinary words; real keys and our tokens are long.
    if (secret && secret.length >= 8) redacted = redacted.split(secret).join('[redacted]');
  }
  return redacted;
}
