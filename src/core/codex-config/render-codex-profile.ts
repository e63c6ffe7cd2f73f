import { InvalidRequestError } from '../errors.ts';
import { modelCatalogUrlFor, renderModelCatalogEntry, serializeModelCatalog } from '../model-catalog/model-catalog-entry.ts';
import { catalogFileNameFor, profileFileNameFor, type ValidCodexProfileOptions } from './codex-profile-options.ts';
import { editTomlText, type TomlEdit } from './toml-edit.ts';

/**
 * Renders the Codex profile (`<profile>.config.toml`) and its model catalog
 * (`<profile>.model_catalog.json`) that point Codex at the bridge, and the edits that bring an
 * existing profile or config.toml up to date. Pure: src/codex-config reads, checks and writes the
 * files. `wire_api` must be "responses"; a catalog replaces Codex's bundled one, so only the profile
 * points at it.
 */

export interface RenderedCodexProfile {
  profileFileName: string;
  profileText: string;
  /** Null for the `functions` surface: Codex's fallback metadata already gives that surface. */
  catalogFileName: string | null;
  catalogText: string | null;
}

function readTable(data: Record<string, unknown> | null, path: readonly string[]): Record<string, unknown> | null {
  let current: unknown = data;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return null;
    current = (current as Record<string, unknown>)[segment];
  }
  return typeof current === 'object' && current !== null && !Array.isArray(current) ? (current as Record<string, unknown>) : null;
}


/**
 * Codex fetches a provider's `model_catalog_url` only when the provider has `env_key` or
 * `experimental_bearer_token` (a token in `http_headers` gets no fetch and an empty model list). A
 * bridge started without a token ignores Authorization, so this stand-in only makes the fetch happen.
 */
export const NO_BRIDGE_TOKEN_PLACEHOLDER = 'freeform-bridge-needs-no-token';

/** The user's own extra headers are kept; an Authorization header is dropped (the token moved to `experimental_bearer_token`). */
function keepUserHttpHeaders(existing: Record<string, unknown> | null): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(existing ?? {})) {
    if (name.toLowerCase() !== 'authorization' && typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/**
 * How often Codex retries a failed request to the bridge. Codex's defaults (4 HTTP retries inside each
 * of 6 attempts, each waiting out the bridge's `Retry-After: 2`) turn a stopped backend into a minute
 * of silence before the reason shows. On loopback a failure is not a flaky network: 2 quiet HTTP
 * retries and 1 visible "Reconnecting... 1/1" still ride out a backend that restarts in a few seconds,
 * and a dead one ends the turn with the bridge's reason in about 10 s. `stream_idle_timeout_ms` keeps
 * Codex's default: the bridge's keepalives hold Codex's idle timer off while a slow backend prefills.
 */
export const PROFILE_REQUEST_MAX_RETRIES = 2;
export const PROFILE_STREAM_MAX_RETRIES = 1;

/** A key the bridge sets only when the file has no value of that type there: the user's own value stays. */
function setUnlessPresent(existingDocument: Record<string, unknown> | null, table: readonly string[], key: string, value: number | boolean): TomlEdit[] {
  const present = readTable(existingDocument, table)?.[key];
  return typeof present === typeof value ? [] : [{ kind: 'set', table, key, value }];
}

function createProviderEdits(options: ValidCodexProfileOptions, existingDocument: Record<string, unknown> | null): TomlEdit[] {
  const table = ['model_providers', options.providerId];
  const headers = keepUserHttpHeaders(readTable(existingDocument, [...table, 'http_headers']));
  return [
    { kind: 'set', table, key: 'name', value: options.displayName },
    { kind: 'set', table, key: 'base_url', value: options.baseUrl },
    { kind: 'set', table, key: 'wire_api', value: 'responses' },
    { kind: 'set', table, key: 'experimental_bearer_token', value: options.token ?? NO_BRIDGE_TOKEN_PLACEHOLDER },
    { kind: 'set', table, key: 'model_catalog_url', value: modelCatalogUrlFor(options.baseUrl, options.toolSurface) },
    Object.keys(headers).length > 0 ? { kind: 'set', table, key: 'http_headers', value: headers } : { kind: 'remove', table, key: 'http_headers' },
    ...setUnlessPresent(existingDocument, table, 'request_max_retries', PROFILE_REQUEST_MAX_RETRIES),
    ...setUnlessPresent(existingDocument, table, 'stream_max_retries', PROFILE_STREAM_MAX_RETRIES),
  ];
}

/**
 * The keys the profile file owns. Everything else in an existing profile (keys the user added such as
 * `model_reasoning_effort` or `model_instructions_file`, comments, extra headers) is kept: re-running
 * the command refreshes the bridge's part and never clobbers the user's.
 */
export function createCodexProfileEdits(options: ValidCodexProfileOptions, existingDocument: Record<string, unknown> | null): TomlEdit[] {
  const edits: TomlEdit[] = [
    { kind: 'set', table: [], key: 'model', value: options.model },
    { kind: 'set', table: [], key: 'model_provider', value: options.providerId },
    options.toolSurface === 'functions'
      ? { kind: 'remove', table: [], key: 'model_catalog_json' }
      : { kind: 'set', table: [], key: 'model_catalog_json', value: catalogFileNameFor(options.profile) },
  ];
  // Unknown stays unknown: a value the user typed into the profile is better than none.
  if (options.contextWindow !== null) edits.push({ kind: 'set', table: [], key: 'model_context_window', value: options.contextWindow });
  // With the bridge stopped, Codex 0.171 otherwise prints "Reconnecting... waiting for network" and
  // waits forever: a refused loopback connection is not a network coming back. Profile only: in
  // config.toml (--make-default) the feature would change OpenAI's sessions too.
  edits.push(...setUnlessPresent(existingDocument, ['features'], 'unbounded_connection_retries', false));
  return [...edits, ...createProviderEdits(options, existingDocument)];
}

/**
 * `--make-default`: the edits to the user's `config.toml` that make a plain `codex` — and the Codex
 * extension in VS Code, which runs `codex app-server` on this file and never passes `-p` — use the
 * bridge. Only `model`, `model_provider` and our provider table change. Never a top-level `profile`
 * key (a hard error in Codex 0.171), `model_catalog_json` (it would replace Codex's bundled catalog
 * and hide OpenAI's models from the picker) or `model_context_window` (it would apply to OpenAI's
 * models too): the provider's `model_catalog_url` gives Codex the bridge's models, their tool surface
 * and context windows, for this provider only.
 */
export function createMakeDefaultEdits(options: ValidCodexProfileOptions, existingDocument: Record<string, unknown> | null): TomlEdit[] {
  return [
    { kind: 'set', table: [], key: 'model', value: options.model },
    { kind: 'set', table: [], key: 'model_provider', value: options.providerId },
    ...createProviderEdits(options, existingDocument),
  ];
}

function renderProfileHeader(options: ValidCodexProfileOptions): string {
  const lines = [
    `# Codex profile written by \`freeform-bridge codex-config\`. Use it with: codex -p ${options.profile}`,
    '# Running the command again updates only the keys it manages (model, model_provider,',
    `# model_catalog_json, model_context_window, [model_providers.${options.providerId}]) and keeps the rest.`,
    '# The retry settings and unbounded_connection_retries = false make a stopped backend or bridge fail the',
    '# turn in seconds; they are written once, so a value you change here stays.',
  ];
  if (options.toolSurface !== 'functions') {
    lines.push(
      `# ${catalogFileNameFor(options.profile)} is regenerated on every run; to give the model a longer`,
      '# base prompt than the catalog\'s short one, add model_instructions_file = "<path>" here.',
    );
  }
  if (options.token !== null) lines.push('# This file holds the bridge token: keep it private (it is written readable by you only).');
  return `${lines.join('\n')}\n`;
}

/** Renders a fresh profile and, for the free-form surfaces, its model catalog. */
export function renderCodexProfile(options: ValidCodexProfileOptions): RenderedCodexProfile {
  const profileText = editTomlText(renderProfileHeader(options), createCodexProfileEdits(options, null));
  const catalogText = options.toolSurface === 'functions' ? null : renderModelCatalog(options);
  return {
    profileFileName: profileFileNameFor(options.profile),
    profileText,
    catalogFileName: catalogText === null ? null : catalogFileNameFor(options.profile),
    catalogText,
  };
}

/**
 * The model catalog file of a profile (free-form surfaces only): one entry, text-only like the bridge's
 * live catalog when the backend does not report vision. Most local models see no images, and Codex
 * offers `view_image` only to a model whose entry lists images, so the model is not handed a tool
 * whose result it cannot read.
 */
export function renderModelCatalog(options: ValidCodexProfileOptions): string {
  if (options.toolSurface === 'functions') throw new InvalidRequestError('the functions tool surface needs no model catalog');
  return serializeModelCatalog([
    renderModelCatalogEntry({
      model: options.model,
      displayName: options.displayName,
      toolSurface: options.toolSurface,
      contextWindow: options.contextWindow,
      inputModalities: ['text'],
      reasoningLevels: [],
    }),
  ]);
}
