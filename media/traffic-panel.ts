import type { HostToWebviewMessage, WebviewToHostMessage } from '../src/shared/webview-protocol.ts';
import { createToolbar } from './traffic-panel-actions.ts';
import { createDetailView } from './traffic-panel-detail.ts';
import { element, type PanelContext } from './traffic-panel-dom.ts';
import { describeCallTally } from './traffic-panel-call-tally.ts';
import { createTrafficList } from './traffic-panel-list.ts';
import { createInitialState, reducePanelState, type PanelAction, type PanelState } from './traffic-panel-state.ts';

/*
 * The live traffic panel's entry: it holds the state, routes the host's messages through the
 * reducer and renders the toolbar, the list and the detail. Every payload is model output, i.e.
 * attacker-controlled: it only ever reaches the page as text, never as markup (see
 * traffic-panel-dom.ts); the CSP (nonce script, no inline styles, nothing remote) is the second
 * line of defence.
 */

interface VsCodeApi {
  postMessage(message: WebviewToHostMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const HOST_MESSAGE_TYPES: ReadonlySet<string> = new Set<HostToWebviewMessage['type']>([
  'traffic/snapshot',
  'traffic/exchange/upsert',
  'traffic/exchange/remove',
  'traffic/exchange/detail',
  'traffic/body/show',
  'traffic/search/result',
  'traffic/notice/show',
]);

const vscodeApi = acquireVsCodeApi();
let state: PanelState = createInitialState(vscodeApi.getState());
let noticeTimer: ReturnType<typeof setTimeout> | undefined;

const post = (message: WebviewToHostMessage): void => vscodeApi.postMessage(message);

function dispatch(action: PanelAction): void {
  const previous = state;
  state = reducePanelState(state, action);
  if (state === previous) return;
  if (state.ui !== previous.ui) vscodeApi.setState(state.ui);
  if (state.ui.selectedId !== previous.ui.selectedId) post({ type: 'traffic/exchange/select', exchangeId: state.ui.selectedId });
  if (state.notice !== previous.notice && state.notice) {
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => dispatch({ type: 'notice/clear' }), 6000);
  }
  render();
}

const context: PanelContext = { getState: () => state, dispatch, post };

const app = document.getElementById('app') ?? document.body.appendChild(element('main', { attributes: { id: 'app' } }));
app.textContent = '';
app.setAttribute('aria-busy', 'true');

const toolbar = createToolbar(context);
const trafficList = createTrafficList(context);
const detailView = createDetailView(context);
const notice = element('p', { className: 'notice', attributes: { id: 'notice', role: 'status', 'aria-live': 'polite' } });
const callTally = element('p', { className: 'stats call-tally', attributes: { id: 'call-tally', title: 'Tool calls per model over the round trips held here' } });

app.append(
  element('header', { className: 'top' }, element('h1', { attributes: { id: 'title' }, text: 'Live traffic' }), toolbar.statsLine, callTally, notice),
  toolbar.root,
  element('div', { className: 'layout' }, trafficList.root, detailView.root),
);

function render(): void {
  app.setAttribute('aria-busy', String(!state.connected));
  toolbar.render(state);
  trafficList.render(state);
  detailView.render(state);
  const tally = describeCallTally(state.exchanges);
  callTally.textContent = tally === '' ? '' : `Tool calls · ${tally}`;
  callTally.hidden = tally === '';
  notice.textContent = state.notice?.message ?? '';
  notice.className = `notice${state.notice?.level === 'error' ? ' error' : ''}`;
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const data = event.data;
  if (typeof data !== 'object' || data === null || !HOST_MESSAGE_TYPES.has(String((data as { type?: unknown }).type))) return;
  const message = data as HostToWebviewMessage;
  const wasConnected = state.connected;
  dispatch({ type: 'host', message });
  if (message.type === 'traffic/snapshot' && !wasConnected) {
    // Restore what was open before a reload: the host keeps no per-view state.
    if (state.ui.selectedId !== null) post({ type: 'traffic/exchange/select', exchangeId: state.ui.selectedId });
    if (state.ui.query.trim() !== '') post({ type: 'traffic/search/run', query: state.ui.query });
  }
});

render();
post({ type: 'webview/ready' });
