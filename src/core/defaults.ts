/**
 * Every default the bridge, the CLI and the extension share, in one place. package.json's
 * `contributes.configuration` repeats the ones VS Code shows as setting defaults; a unit test keeps
 * the two equal.
 */

/** The backend the bridge forwards to when none is configured: vLLM's usual local address. */
export const DEFAULT_BACKEND_URL = 'http://127.0.0.1:8000/v1';

/** The Codex profile name (`codex -p freeform-bridge`), also the provider id of the default profile. */
export const DEFAULT_CODEX_PROFILE = 'freeform-bridge';

/** The provider name Codex shows in its picker. */
export const DEFAULT_PROVIDER_DISPLAY_NAME = 'Freeform Bridge';

/** A `response.in_progress` keepalive every this many silent seconds; 0 disables it. */
export const DEFAULT_KEEPALIVE_SECONDS = 15;
export const MAX_KEEPALIVE_SECONDS = 3600;

/**
 * How long the bridge holds Codex's stream before committing to the backend's answer, so an early
 * backend failure can still become a retryable HTTP error instead of a `response.failed`.
 */
export const DEFAULT_COMMIT_GRACE_MS = 1500;

/**
 * The backend timeout: a backend silent this long (no status, no byte) is given up on. Long because a
 * local engine processing a long prompt says nothing until its first token, and that takes minutes on
 * modest hardware (a 100k-token context at a few hundred tokens per second). `serve
 * --backend-timeout-seconds` and the `freeformBridge.backendTimeoutSeconds` setting change it.
 */
export const DEFAULT_UPSTREAM_IDLE_TIMEOUT_SECONDS = 900;
export const MIN_UPSTREAM_IDLE_TIMEOUT_SECONDS = 5;
export const MAX_UPSTREAM_IDLE_TIMEOUT_SECONDS = 86_400;

/**
 * After this much backend silence the panel and the terminal say what the bridge waits for and how
 * long until it gives up: Codex only shows that it is working, and keepalives hide the wait from it.
 */
export const BACKEND_WAIT_NOTICE_SECONDS = 60;

/**
 * Whether a tool call the engine left in the assistant text (its chat template or tool-call parser did
 * not know the model's call format) is delivered as the call, when the whole text is nothing but
 * complete calls of offered tools. Always warned; `serve --no-recover-text-calls` and the
 * `freeformBridge.recoverTextToolCalls` setting turn it off.
 */
export const DEFAULT_RECOVER_TEXT_TOOL_CALLS = true;

/** Round trips the traffic panel keeps, and the bounds of that setting. */
export const DEFAULT_TRAFFIC_BUFFER_SIZE = 200;
export const MIN_TRAFFIC_BUFFER_SIZE = 10;
export const MAX_TRAFFIC_BUFFER_SIZE = 5000;

/**
 * The context window the live model catalog states when the backend reports none (Ollama without
 * `/api/show`, LM Studio, older engines): small enough that Codex compacts before a typical local
 * server runs out, and named in the entry's description and the log so the user knows it is a guess.
 */
export const DEFAULT_CATALOG_CONTEXT_WINDOW = 32_768;
