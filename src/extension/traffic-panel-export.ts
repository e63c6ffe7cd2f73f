import { redactSecrets } from '../core/redact-secrets.ts';

/*
 * Text the traffic panel hands out of VS Code (clipboard, files): kept pure so the redaction rules
 * are unit-tested. Nothing here ever contains the backend API key or the bridge token.
 */

/** The environment variable the copied curl command reads the backend API key from. */
export const CURL_API_KEY_VARIABLE = 'FREEFORM_BRIDGE_BACKEND_API_KEY';

export interface CurlCommandOptions {
  /** The backend's base URL (ending in /v1), as the bridge called it. */
  backendUrl: string;
  /** The lowered Chat request exactly as sent upstream. */
  request: unknown;
  /** The backend needs an API key: the command then sends one from the environment, never the key itself. */
  usesApiKey: boolean;
  /** Secrets to remove from the body, should a payload quote one. */
  secrets: ReadonlyArray<string | null | undefined>;
}

/** POSIX shell single quoting: the only character to handle is the single quote itself. */
export function quoteForShell(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * A curl command replaying the lowered request against the backend. The API key is referenced as
 * "$FREEFORM_BRIDGE_BACKEND_API_KEY" (double quotes so the shell expands it), so the command works
 * for whoever has the key and shows it to nobody.
 */
export function renderCurlCommand(options: CurlCommandOptions): string {
  const url = `${options.backendUrl.replace(/\/+$/, '')}/chat/completions`;
  const body = redactSecrets(JSON.stringify(options.request), options.secrets);
  const streaming = typeof options.request === 'object' && options.request !== null && (options.request as { stream?: unknown }).stream === true;
  const lines = [`curl ${streaming ? '-N ' : ''}${quoteForShell(redactSecrets(url, options.secrets))}`, `  -H 'Content-Type: application/json'`];
  if (options.usesApiKey) lines.push(`  -H "Authorization: Bearer $${CURL_API_KEY_VARIABLE}"`);
  lines.push(`  --data-binary ${quoteForShell(body)}`);
  return lines.join(' \\\n');
}

/** One JSON document per line (JSON Lines): JSON.stringify never emits a raw line break. */
export function renderJsonLines(values: Iterable<unknown>, secrets: ReadonlyArray<string | null | undefined>): string {
  let text = '';
  for (const value of values) text += `${redactSecrets(JSON.stringify(value), secrets)}\n`;
  return text;
}
