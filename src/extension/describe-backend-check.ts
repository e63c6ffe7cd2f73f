/** What Check Backend Connection found; the command returns it. */
export type BackendCheckOutcome =
  | { reachable: true; backendUrl: string; models: string[] }
  | { reachable: false; backendUrl: string; reason: string; status: number | null };

/** Model names shown in the notification; the whole list goes to the log. */
const SHOWN_MODELS = 5;

/**
 * The one-line report for a backend check. Kept free of `vscode` so it is unit-tested in plain
 * Node. `suggestApiKey` is true when the backend refused the request for want of a (valid) key.
 */
export function describeBackendCheck(outcome: BackendCheckOutcome, hasApiKey: boolean): { message: string; suggestApiKey: boolean } {
  if (outcome.reachable) {
    const { models } = outcome;
    if (models.length === 0) return { message: `Freeform Bridge: ${outcome.backendUrl} answers but lists no models. Start the backend with a model loaded.`, suggestApiKey: false };
    const shown = models.slice(0, SHOWN_MODELS).join(', ');
    const more = models.length > SHOWN_MODELS ? ` and ${models.length - SHOWN_MODELS} more (see the log)` : '';
    return { message: `Freeform Bridge: ${outcome.backendUrl} is reachable and serves ${models.length} ${models.length === 1 ? 'model' : 'models'}: ${shown}${more}.`, suggestApiKey: false };
  }
  const refused = outcome.status === 401 || outcome.status === 403;
  const hint = refused ? (hasApiKey ? ' The stored API key was refused: set the right one.' : ' The backend wants an API key: set one.') : '';
  const wrongUrl =
    outcome.status === null
      ? ` Is the backend running, and is ${outcome.backendUrl} its OpenAI-compatible base URL (ending in /v1)?`
      : outcome.status === 404
        ? ' Does the URL end in /v1 (the OpenAI-compatible base URL)?'
        : '';
  return { message: `Freeform Bridge: GET ${outcome.backendUrl.replace(/\/+$/, '')}/models failed: ${outcome.reason}.${hint}${wrongUrl}`, suggestApiKey: refused };
}
