import { checkHttpUrl } from '../backend-url.ts';
import { DEFAULT_CODEX_PROFILE, DEFAULT_PROVIDER_DISPLAY_NAME } from '../defaults.ts';
import { InvalidRequestError } from '../errors.ts';
import type { CodexToolSurface } from '../model-catalog/model-catalog-entry.ts';

/**
 * What a Codex profile says and the rules Codex sets for it (re-checked with codex-cli 0.171.0
 * --strict-config): profiles are sibling files selected with `-p`, never `[profiles.x]` tables or a
 * top-level `profile` key; provider ids `openai`, `ollama` and `lmstudio` are reserved and refused by
 * Codex; a provider Codex takes for OpenAI's own service or for Azure cannot work with the bridge.
 */

/** Codex 0.171 refuses a user table with these ids: "Built-in providers cannot be overridden". */
const RESERVED_PROVIDER_IDS = new Set(['openai', 'ollama', 'lmstudio']);

/**
 * Codex treats a provider with one of these ids (any case) as OpenAI's own service: it asks for
 * remote compaction (a `compaction_trigger` item) and fails the turn when the answer lacks OpenAI's
 * `compaction` item, which no Chat Completions backend can produce.
 */
const OPENAI_TREATED_PROVIDER_IDS = new Set(['openai', 'azure']);

/** Base URL fragments that make Codex treat a provider as Azure OpenAI, with the same consequence. */
export const AZURE_URL_MARKERS: readonly string[] = ['openai.azure.', 'cognitiveservices.azure.', 'aoai.azure.', 'azure-api.', 'azurefd.', 'windows.net/openai'];

/** The Azure marker in `baseUrl` (case-insensitive), or null. */
export function findAzureUrlMarker(baseUrl: string): string | null {
  const lower = baseUrl.toLowerCase();
  return AZURE_URL_MARKERS.find((marker) => lower.includes(marker)) ?? null;
}

/**
 * A warning for a base URL Codex would take for Azure OpenAI, or null. A warning, not an error: a
 * bridge may sit behind such a gateway name on purpose, and the user decides.
 */
export function describeAzureUrlRisk(baseUrl: string): string | null {
  const marker = findAzureUrlMarker(baseUrl);
  if (marker === null) return null;
  return `the base URL ${baseUrl} contains '${marker}', so Codex will treat this provider as Azure OpenAI and ask for remote compaction, which the bridge cannot answer (long sessions then fail with "remote compaction v2 expected exactly one compaction output item"); point Codex at the bridge's own address (http://127.0.0.1:PORT/v1) instead`;
}

const NAME_PATTERN = /^[A-Za-z0-9_-]+$/;
const MAXIMUM_NAME_LENGTH = 64;

export interface CodexProfileOptions {
  /** Profile name: the file is `<profile>.config.toml`, used as `codex -p <profile>`. */
  profile: string;
  /** Id of the `[model_providers.<id>]` table; see `providerIdForProfile`. */
  providerId: string;
  /** The bridge's OpenAI-compatible base URL ending in /v1; Codex POSTs `{baseUrl}/responses`. */
  baseUrl: string;
  /** Model name Codex sends (and the catalog slug). */
  model: string;
  toolSurface: CodexToolSurface;
  /** Bridge token sent as `Authorization: Bearer <token>`; null when the bridge requires none. */
  token: string | null;
  /** Context window in tokens, when known (from the engine's /v1/models or the user). */
  contextWindow: number | null;
  /** Provider display name shown by Codex; defaults to "Freeform Bridge". */
  displayName?: string;
}

declare const validBrand: unique symbol;

/**
 * Options `validateCodexProfileOptions` accepted, normalised (the base URL without a trailing slash,
 * the display name filled in). The one way to get them is that validator, and everything that renders
 * or edits a profile asks for them, so options are checked once, where they come in.
 */
export type ValidCodexProfileOptions = Readonly<CodexProfileOptions & { displayName: string }> & { readonly [validBrand]: true };

/**
 * The provider id for a profile. Prefixing keeps a profile named `ollama` or `openai` from turning
 * into a reserved provider id (a hard error in Codex), and keeps our table apart from the user's own.
 */
export function providerIdForProfile(profile: string): string {
  return profile === DEFAULT_CODEX_PROFILE ? profile : `${DEFAULT_CODEX_PROFILE}-${profile}`;
}

export function profileFileNameFor(profile: string): string {
  return `${profile}.config.toml`;
}

export function catalogFileNameFor(profile: string): string {
  return `${profile}.model_catalog.json`;
}

function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/**
 * A model name Codex may send: non-empty, no surrounding spaces, no C0, DEL or C1 control characters.
 * Checked before the name is printed anywhere: an engine's model list is not trusted text.
 */
export function validateModelName(model: string): void {
  if (model.trim() === '' || model !== model.trim() || hasControlCharacter(model)) {
    throw new InvalidRequestError(`model name '${model}' is not allowed: it must be non-empty, without surrounding spaces or control characters`, { param: 'model' });
  }
}

/** Validates the options and returns them normalised (base URL without a trailing slash). */
export function validateCodexProfileOptions(options: CodexProfileOptions): ValidCodexProfileOptions {
  const { profile, providerId, model, token, contextWindow } = options;
  if (!NAME_PATTERN.test(profile) || profile.length > MAXIMUM_NAME_LENGTH) {
    throw new InvalidRequestError(
      `profile name '${profile}' is not allowed: use 1 to ${MAXIMUM_NAME_LENGTH} letters, digits, '-' or '_' (it becomes the file name <profile>.config.toml)`,
      { param: 'profile' },
    );
  }
  if (!NAME_PATTERN.test(providerId) || providerId.length > MAXIMUM_NAME_LENGTH + DEFAULT_CODEX_PROFILE.length + 1) {
    throw new InvalidRequestError(`provider id '${providerId}' is not allowed: use letters, digits, '-' or '_'`, { param: 'providerId' });
  }
  if (OPENAI_TREATED_PROVIDER_IDS.has(providerId.toLowerCase())) {
    throw new InvalidRequestError(
      `provider id '${providerId}' is not allowed: Codex treats a provider named '${providerId.toLowerCase()}' (in any case) as OpenAI's own service and asks it for remote compaction, which the bridge cannot answer; choose another id`,
      { param: 'providerId' },
    );
  }
  if (RESERVED_PROVIDER_IDS.has(providerId)) {
    throw new InvalidRequestError(`provider id '${providerId}' is reserved by Codex for its built-in provider; choose another`, { param: 'providerId' });
  }
  const baseUrl = validateBaseUrl(options.baseUrl);
  validateModelName(model);
  if (token !== null && !/^[\x21-\x7e]+$/.test(token)) {
    // The token ends up in an HTTP header: spaces, line breaks or non-ASCII would break or inject headers.
    throw new InvalidRequestError('the bridge token must be non-empty printable ASCII without spaces', { param: 'token' });
  }
  if (contextWindow !== null && (!Number.isSafeInteger(contextWindow) || contextWindow <= 0)) {
    throw new InvalidRequestError(`context window must be a positive integer number of tokens, got ${contextWindow}`, { param: 'contextWindow' });
  }
  const displayName = options.displayName ?? DEFAULT_PROVIDER_DISPLAY_NAME;
  if (displayName.trim() === '' || hasControlCharacter(displayName)) {
    throw new InvalidRequestError('the provider display name must be non-empty, without control characters', { param: 'displayName' });
  }
  if (OPENAI_TREATED_PROVIDER_IDS.has(displayName.trim().toLowerCase())) {
    // Codex matches the provider's name as well as its id: 'OpenAI' or 'Azure' switch on OpenAI-only code paths.
    throw new InvalidRequestError(`the provider display name must not be '${displayName.trim()}': Codex treats such a provider as OpenAI's own service`, { param: 'displayName' });
  }
  return { ...options, baseUrl, displayName } as ValidCodexProfileOptions;
}

function validateBaseUrl(text: string): string {
  const check = checkHttpUrl(text, 'http://127.0.0.1:18080/v1');
  if (!check.ok) throw new InvalidRequestError(`base URL ${check.problem}`, { param: 'baseUrl' });
  const url = check.url;
  if (url.username !== '' || url.password !== '') {
    throw new InvalidRequestError(`base URL '${text}' must not contain a user name or password; use the bridge token instead`, { param: 'baseUrl' });
  }
  if (url.search !== '' || url.hash !== '') {
    // Codex appends "/responses" to the string, so a query or fragment would end up before it.
    throw new InvalidRequestError(`base URL '${text}' must not contain a query or fragment`, { param: 'baseUrl' });
  }
  const normalised = url.toString().replace(/\/+$/, '');
  if (!normalised.endsWith('/v1')) {
    throw new InvalidRequestError(`base URL '${text}' must end in /v1 (Codex POSTs {base URL}/responses), e.g. http://127.0.0.1:18080/v1`, { param: 'baseUrl' });
  }
  return normalised;
}
