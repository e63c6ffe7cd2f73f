/** Headers that carry secrets; redacted before anything is logged, exported or shown in the panel. */
const SECRET_HEADER_NAMES = new Set(['authorization', 'proxy-authorization', 'api-key', 'x-api-key', 'cookie', 'set-cookie']);

export const REDACTED = '[redacted]';

export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const redacted: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    redacted[name] = SECRET_HEADER_NAMES.has(name.toLowerCase()) ? REDACTED : Array.isArray(value) ? value.join(', ') : value;
  }
  return redacted;
}

/**
 * Removes every occurrence of a known secret from free text (error bodies echoed by a backend can
 * quote the Authorization header back). Secrets shorter than 4 characters are left alone: replacing
 * them would shred ordinary text and they are not worth hiding.
 */
export function redactSecrets(text: string, secrets: readonly (string | null | undefined)[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) result = result.split(secret).join(REDACTED);
  }
  return result;
}
