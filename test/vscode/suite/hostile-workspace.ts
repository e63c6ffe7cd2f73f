/**
 * Shared by the runner and the suite: the environment variable through which the runner tells the
 * extension host which backend the workspace's own `.vscode/settings.json` names (run-vscode-tests.ts).
 */
export const HOSTILE_BACKEND_VARIABLE = 'FREEFORM_BRIDGE_VSCODE_HOSTILE_BACKEND_URL';
