import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { z } from 'zod';
import type { BridgeController } from './bridge-controller.ts';
import { formatTrafficLine } from './traffic-line.ts';

export const TRAFFIC_PANEL_VIEW_TYPE = 'freeformBridge.traffic';
export const TRAFFIC_PANEL_TITLE = 'Freeform Bridge Traffic';

/** The only message the placeholder's script sends; anything else is ignored. */
const webviewMessageSchema = z.object({ type: z.literal('webview/ready') });

/**
 * A deliberately small stand-in for the live traffic panel (issue #5 replaces it): one line of
 * text per finished exchange. Kept CSP-clean (nonce, default-src 'none', textContent only) so
 * its replacement starts from the same rules.
 */
export class TrafficPlaceholderPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | null = null;
  /** How often the view's script said ready: proves it runs under the CSP (the tests read it). */
  private readyCount = 0;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly controller: BridgeController) {
    const subscription = controller.onTraffic((event) => {
      if (this.panel && (event.type === 'exchange-end' || event.type === 'exchange-rejected')) {
        void this.panel.webview.postMessage({ type: 'traffic/line/append', line: formatTrafficLine(event) });
      }
    });
    this.disposables.push({ dispose: () => subscription.dispose() });
  }

  show(): void {
    if (this.panel) {
      this.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(TRAFFIC_PANEL_VIEW_TYPE, TRAFFIC_PANEL_TITLE, vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [],
    });
    this.panel = panel;
    panel.webview.html = renderPlaceholderHtml(randomBytes(16).toString('base64'));
    panel.webview.onDidReceiveMessage(
      (message: unknown) => {
        // The webview will render model output: treat what it says as untrusted.
        if (!webviewMessageSchema.safeParse(message).success) return;
        this.readyCount += 1;
        // A complete snapshot on every ready (style.md §11): the view may have been reloaded.
        void panel.webview.postMessage({ type: 'traffic/lines/snapshot', lines: [...this.controller.getTrafficLines()] });
      },
      undefined,
      this.disposables,
    );
    panel.onDidDispose(() => {
      this.panel = null;
    });
  }

  getViewState(): { open: boolean; readyCount: number } {
    return { open: this.panel !== null, readyCount: this.readyCount };
  }

  dispose(): void {
    this.panel?.dispose();
    for (const disposable of this.disposables) disposable.dispose();
  }
}

function renderPlaceholderHtml(nonce: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${TRAFFIC_PANEL_TITLE}</title>
<style nonce="${nonce}">
body { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); color: var(--vscode-foreground); }
#lines { white-space: pre-wrap; margin: 0; }
</style>
</head>
<body>
<h1 id="title">Live traffic</h1>
<p id="empty">No exchanges yet. Run <code>codex -p …</code> against the bridge.</p>
<pre id="lines"></pre>
<script nonce="${nonce}">
(() => {
  const vscodeApi = acquireVsCodeApi();
  const lines = document.getElementById('lines');
  const empty = document.getElementById('empty');
  const LIMIT = 200;
  function append(line) {
    if (typeof line !== 'string') return;
    empty.hidden = true;
    lines.append(document.createTextNode(line + '\\n'));
    while (lines.childNodes.length > LIMIT) lines.removeChild(lines.firstChild);
  }
  window.addEventListener('message', (event) => {
    const message = event.data;
    if (!message || typeof message.type !== 'string') return;
    if (message.type === 'traffic/lines/snapshot' && Array.isArray(message.lines)) {
      lines.textContent = '';
      empty.hidden = message.lines.length > 0;
      message.lines.forEach(append);
    } else if (message.type === 'traffic/line/append') {
      append(message.line);
    }
  });
  vscodeApi.postMessage({ type: 'webview/ready' });
})();
</script>
</body>
</html>`;
}
