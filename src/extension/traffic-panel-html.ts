/** Tab title of the live traffic panel (the vscode tier looks for it). */
export const TRAFFIC_PANEL_TITLE = 'Freeform Bridge Traffic';

/**
 * The panel's page, kept free of `vscode` so its Content-Security-Policy is unit-tested: nothing
 * inline, nothing remote; the one script runs by nonce and styles come only from the webview's own
 * resource origin (the dist/media folder, the panel's only localResourceRoot).
 */
export function renderTrafficPanelHtml(parts: { nonce: string; cspSource: string; scriptUri: string; styleUri: string }): string {
  const attribute = (value: string): string => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const csp = `default-src 'none'; style-src ${parts.cspSource}; script-src 'nonce-${parts.nonce}'; img-src 'none'; connect-src 'none'; frame-src 'none'; form-action 'none'; base-uri 'none'`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${attribute(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${attribute(parts.styleUri)}">
<title>${TRAFFIC_PANEL_TITLE}</title>
</head>
<body>
<main id="app" aria-busy="true">
<h1 id="title">Live traffic</h1>
<p id="loading">Waiting for the bridge…</p>
</main>
<script nonce="${attribute(parts.nonce)}" src="${attribute(parts.scriptUri)}"></script>
</body>
</html>`;
}
