import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import * as vscode from 'vscode';
import { redactSecrets, redactSecretsInValue } from '../core/redact-secrets.ts';
import type { Logger } from '../core/logger.ts';
import type { BridgeTrafficEvent } from '../server/start-event-encoding.ts';
import { parseWebviewToHostMessage, WEBVIEW_IDENTIFIER_FIELDS, type BodyReference, type HostToWebviewMessage, type WebviewToHostMessage } from '../shared/webview-protocol.ts';
import type { BridgeController } from './bridge-controller.ts';
import { renderCurlCommand, renderJsonLines } from './traffic-panel-export.ts';
import { renderTrafficPanelHtml, TRAFFIC_PANEL_TITLE } from './traffic-panel-html.ts';
import { DEFAULT_BACKEND_URL, DEFAULT_TRAFFIC_BUFFER_SIZE, MAX_TRAFFIC_BUFFER_SIZE, MIN_TRAFFIC_BUFFER_SIZE } from '../core/defaults.ts';
import { TrafficStore } from './traffic-store.ts';

export const TRAFFIC_PANEL_VIEW_TYPE = 'freeformBridge.traffic';
const BUFFER_SIZE_SETTING = 'freeformBridge.trafficBufferSize';
/** The webview bundle folder (scripts/build.mjs): the only folder the webview may load from. */
const MEDIA_FOLDER = ['dist', 'media'] as const;

export interface TrafficPanelOptions {
  extensionUri: vscode.Uri;
  /** Whether the backend needs an API key (the copied curl command then reads one from the environment). */
  getBackendApiKey: () => string | null;
  /** Every secret (backend API key, bridge token): removed from anything shown, copied or saved. */
  getSecretValues: () => ReadonlyArray<string | null>;
  /** Where a message the host refuses from the webview is reported. */
  logger: Logger;
}

export interface ExportTrafficResult {
  kind: 'exported' | 'cancelled';
  uri?: string;
  exchanges?: number;
}

function readBufferSize(): number {
  const value = vscode.workspace.getConfiguration().get<unknown>(BUFFER_SIZE_SETTING);
  // settings.json is hand-edited: the contributed schema only warns about a bad value.
  if (typeof value !== 'number' || !Number.isInteger(value)) return DEFAULT_TRAFFIC_BUFFER_SIZE;
  return Math.min(MAX_TRAFFIC_BUFFER_SIZE, Math.max(MIN_TRAFFIC_BUFFER_SIZE, value));
}

/** Enough to recognise a refused message in the log, without echoing what it carried. */
function describeMessageType(message: unknown): string {
  const type = typeof message === 'object' && message !== null ? (message as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type.slice(0, 80) : typeof message;
}

function describeBody(reference: BodyReference): string {
  switch (reference.kind) {
    case 'exchange':
      return 'round trip';
    case 'loweredRequest':
      return 'lowered request';
    case 'item':
      return 'payload';
    case 'warningRaw':
      return 'raw payload';
    default: {
      const unknownReference: never = reference;
      return String(unknownReference);
    }
  }
}

/**
 * The live traffic panel's host side. Records every traffic event in a bounded store
 * from activation on, whether or not the panel is open, so opening (or reopening: no
 * retainContextWhenHidden) restores the session from a snapshot.
 */
export class TrafficPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | null = null;
  /** How often the view's script said ready: proves it runs under the CSP (the tests read it). */
  private readyCount = 0;
  /** The round trip opened in the panel: its detail is re-sent while it changes. */
  private selectedId: string | null = null;
  private readonly store: TrafficStore;
  private readonly disposables: vscode.Disposable[] = [];
  private panelDisposables: vscode.Disposable[] = [];

  constructor(
    private readonly controller: BridgeController,
    private readonly options: TrafficPanelOptions,
  ) {
    this.store = new TrafficStore({
      capacity: readBufferSize(),
      getBackendUrl: () => controller.getRunningSettings()?.backendUrl ?? null,
      redactText: (text) => this.redact(text),
    });
    const subscription = controller.onTraffic((event) => this.record(event));
    this.disposables.push(
      { dispose: () => subscription.dispose() },
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (!event.affectsConfiguration(BUFFER_SIZE_SETTING)) return;
        const removed = this.store.resize(readBufferSize());
        if (removed.length > 0) this.post({ type: 'traffic/exchange/remove', exchangeIds: removed, stats: this.store.getStats() });
        else this.post({ type: 'traffic/snapshot', exchanges: this.store.getSummaries(), stats: this.store.getStats() });
      }),
    );
  }

  show(): void {
    if (this.panel) {
      this.panel.reveal();
      return;
    }
    const mediaRoot = vscode.Uri.joinPath(this.options.extensionUri, ...MEDIA_FOLDER);
    const panel = vscode.window.createWebviewPanel(TRAFFIC_PANEL_VIEW_TYPE, TRAFFIC_PANEL_TITLE, vscode.ViewColumn.Active, {
      enableScripts: true,
      enableFindWidget: true,
      localResourceRoots: [mediaRoot],
    });
    this.panel = panel;
    this.selectedId = null;
    const webview = panel.webview;
    webview.html = renderTrafficPanelHtml({
      nonce: randomBytes(16).toString('base64'),
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(mediaRoot, 'traffic-panel.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(mediaRoot, 'traffic-panel.css')).toString(),
    });
    this.panelDisposables.push(
      webview.onDidReceiveMessage((message: unknown) => {
        // The webview renders model output: whatever it says is validated before use.
        const parsed = parseWebviewToHostMessage(message);
        if (parsed) void this.handleMessage(parsed);
        else this.options.logger.warn('the traffic panel sent a message the host does not accept; ignored', { type: describeMessageType(message) });
      }),
      panel.onDidDispose(() => {
        this.panel = null;
        this.selectedId = null;
        for (const disposable of this.panelDisposables) disposable.dispose();
        this.panelDisposables = [];
      }),
    );
  }

  getViewState(): { open: boolean; readyCount: number; exchanges: number; retainedBodyBytes: number } {
    const stats = this.store.getStats();
    return { open: this.panel !== null, readyCount: this.readyCount, exchanges: stats.exchangeCount, retainedBodyBytes: stats.retainedBodyBytes };
  }

  dispose(): void {
    this.panel?.dispose();
    for (const disposable of this.disposables) disposable.dispose();
  }

  private redact(text: string): string {
    return redactSecrets(text, this.options.getSecretValues());
  }

  private post(message: HostToWebviewMessage): void {
    // The store keeps text redacted, but formatting it for the view (pretty JSON, summaries) can
    // spell a short key again: every string leaving for the webview is redacted once more.
    if (this.panel) void this.panel.webview.postMessage(redactSecretsInValue(message, this.options.getSecretValues(), WEBVIEW_IDENTIFIER_FIELDS));
  }

  private record(event: BridgeTrafficEvent): void {
    const change = this.store.apply(event);
    if (!this.panel) return;
    const stats = this.store.getStats();
    if (change.removedIds.length > 0) this.post({ type: 'traffic/exchange/remove', exchangeIds: change.removedIds, stats });
    for (const exchange of change.upserted) this.post({ type: 'traffic/exchange/upsert', exchange, stats });
    if (this.selectedId !== null && change.upserted.some((exchange) => exchange.id === this.selectedId)) {
      this.post({ type: 'traffic/exchange/detail', exchangeId: this.selectedId, detail: this.store.getDetail(this.selectedId) });
    }
  }

  private async handleMessage(message: WebviewToHostMessage): Promise<void> {
    switch (message.type) {
      case 'webview/ready':
        this.readyCount += 1;
        this.selectedId = null;
        // A complete snapshot on every ready: the view may have been reloaded.
        this.post({ type: 'traffic/snapshot', exchanges: this.store.getSummaries(), stats: this.store.getStats() });
        return;
      case 'traffic/exchange/select':
        this.selectedId = message.exchangeId;
        if (message.exchangeId !== null) this.post({ type: 'traffic/exchange/detail', exchangeId: message.exchangeId, detail: this.store.getDetail(message.exchangeId) });
        return;
      case 'traffic/body/request':
        this.post({ type: 'traffic/body/show', body: message.body, content: this.store.getBodyContent(message.body) });
        return;
      case 'traffic/body/open': {
        const text = this.store.getDocumentText(message.body);
        if (text === null) return this.notify('error', `The ${describeBody(message.body)} is no longer kept (evicted to bound memory).`);
        const document = await vscode.workspace.openTextDocument({ language: 'json', content: this.redact(text) });
        await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: false });
        return;
      }
      case 'traffic/body/copy': {
        const text = this.store.getCopyText(message.body);
        if (text === null) return this.notify('error', `The ${describeBody(message.body)} is no longer kept (evicted to bound memory).`);
        return this.copy(this.redact(text), `Copied the ${describeBody(message.body)} (${text.length} characters).`);
      }
      case 'traffic/curl/copy': {
        const request = this.store.getLoweredRequestValue(message.exchangeId);
        if (request === null) return this.notify('error', 'The lowered request is no longer kept (evicted to bound memory).');
        const backendUrl = this.store.getBackendUrlOf(message.exchangeId) ?? this.controller.getRunningSettings()?.backendUrl ?? DEFAULT_BACKEND_URL;
        const command = renderCurlCommand({ backendUrl, request, usesApiKey: this.options.getBackendApiKey() !== null, secrets: this.options.getSecretValues() });
        return this.copy(command, 'Copied the request as a curl command (the API key is read from $FREEFORM_BRIDGE_BACKEND_API_KEY).');
      }
      case 'traffic/search/run': {
        const query = message.query.trim();
        this.post({ type: 'traffic/search/result', query, exchangeIds: this.store.search(query) });
        return;
      }
      case 'traffic/session/clear':
        this.store.clear();
        this.selectedId = null;
        this.post({ type: 'traffic/snapshot', exchanges: [], stats: this.store.getStats() });
        return;
      case 'traffic/session/export': {
        const result = await this.exportSession(undefined);
        if (result.kind === 'exported') this.notify('info', `Exported ${result.exchanges ?? 0} round trips to ${result.uri ?? ''}.`);
        return;
      }
      default: {
        const unknownMessage: never = message;
        throw new Error(`unhandled webview message ${String(unknownMessage)}`);
      }
    }
  }

  private notify(level: 'info' | 'error', message: string): void {
    this.post({ type: 'traffic/notice/show', level, message });
  }

  private async copy(text: string, confirmation: string): Promise<void> {
    try {
      await vscode.env.clipboard.writeText(text);
      this.notify('info', confirmation);
    } catch (error) {
      // A browser-hosted VS Code may refuse clipboard access.
      this.notify('error', `Could not write to the clipboard: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Writes the kept round trips as JSON Lines to `argument.uri`, or where the save dialog says. */
  async exportSession(argument: unknown): Promise<ExportTrafficResult> {
    let target: vscode.Uri | undefined;
    const given = typeof argument === 'object' && argument !== null ? (argument as { uri?: unknown }).uri : undefined;
    if (given instanceof vscode.Uri) target = given;
    else if (typeof given === 'string' && given !== '') target = vscode.Uri.file(given);
    else {
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(homedir());
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      target = await vscode.window.showSaveDialog({
        title: 'Export Freeform Bridge traffic as JSON Lines',
        defaultUri: vscode.Uri.joinPath(folder, `freeform-bridge-traffic-${stamp}.jsonl`),
        filters: { 'JSON Lines': ['jsonl'] },
      });
    }
    if (!target) return { kind: 'cancelled' };
    const text = renderJsonLines(this.store.exportValues(), this.options.getSecretValues());
    await vscode.workspace.fs.writeFile(target, Buffer.from(text, 'utf8'));
    return { kind: 'exported', uri: target.toString(), exchanges: this.store.getStats().exchangeCount };
  }
}
