export const REDACTED = '[redacted]';

/**
 * Secrets of any length are hidden: every non-empty key counts. A higher threshold only decides which
 * keys leak (a 6-character "ollama" or "hunter" key is a key to whoever set it), while the cost of a
 * very short key is cosmetic: its characters are hidden wherever they occur. The one place that
 * decides this for the log, the panel, exports, curl commands and error bodies.
 */
export const MIN_REDACTED_SECRET_LENGTH = 1;

function escapeForRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `%2f` as well as `%2F`: encoders disagree on the case of percent escapes. */
function lowerCasePercentEscapes(text: string): string {
  return text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
}

/**
 * The spellings a secret takes in text we produce or receive: as is, inside a JSON string (once,
 * and once more when a JSON document is itself kept as a string), and percent-encoded in a URL
 * (component and form encoding, either case of hex digits).
 */
function listSecretSpellings(secret: string): Set<string> {
  const inJson = JSON.stringify(secret).slice(1, -1);
  const inJsonTwice = JSON.stringify(inJson).slice(1, -1);
  // PHP and some proxies escape `/` as `\/` in JSON: the same key, spelled differently.
  const inJsonSlashEscaped = inJson.replaceAll('/', '\\/');
  const inUrl = encodeURIComponent(secret);
  const inForm = new URLSearchParams({ k: secret }).toString().slice(2);
  // A typical key (letters, digits, - and _) is spelled the same everywhere: one scan of the text.
  return new Set([secret, inJson, inJsonTwice, inJsonSlashEscaped, JSON.stringify(inJsonSlashEscaped).slice(1, -1), inUrl, lowerCasePercentEscapes(inUrl), inForm, lowerCasePercentEscapes(inForm)]);
}

/**
 * Removes every known secret, in each of its spellings, from text: log lines, payloads kept for the
 * panel, exported JSON lines, curl commands, error bodies a backend echoes back. One pass over the
 * text with the longest spelling tried first, and markers already in the text kept as they are, so
 * redacting twice changes nothing and one secret never eats into another's marker.
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | null | undefined>): string {
  const spellings = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < MIN_REDACTED_SECRET_LENGTH) continue;
    for (const spelling of listSecretSpellings(secret)) if (text.includes(spelling)) spellings.add(spelling);
  }
  if (spellings.size === 0) return text;
  const alternatives = [...spellings].sort((left, right) => right.length - left.length).map(escapeForRegExp);
  const pattern = new RegExp(`${escapeForRegExp(REDACTED)}|${alternatives.join('|')}`, 'g');
  return text.replace(pattern, REDACTED);
}

/**
 * A copy of a JSON-like value with the secrets removed from every string in it. Object keys are left
 * alone (field names, not data), and so are the values under `preservedKeys`: identifiers and enum
 * values a protocol switches on, which a short secret must not garble. For messages built from kept
 * text after it was redacted, where formatting may have spelled a short secret again.
 */
export function redactSecretsInValue<T>(value: T, secrets: ReadonlyArray<string | null | undefined>, preservedKeys: ReadonlySet<string> = new Set()): T {
  if (!secrets.some((secret) => typeof secret === 'string' && secret.length >= MIN_REDACTED_SECRET_LENGTH)) return value;
  const visit = (current: unknown): unknown => {
    if (typeof current === 'string') return redactSecrets(current, secrets);
    if (Array.isArray(current)) return current.map(visit);
    if (typeof current === 'object' && current !== null) {
      const copy: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(current)) copy[key] = preservedKeys.has(key) ? child : visit(child);
      return copy;
    }
    return current;
  };
  return visit(value) as T;
}
