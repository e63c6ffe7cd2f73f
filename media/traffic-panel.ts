import type {
  BodyContent,
  BodyReference,
  ExchangeDetail,
  ExchangeSummary,
  HostToWebviewMessage,
  OutputItemView,
  TextView,
  ToolView,
  WarningView,
  WebviewToHostMessage,
} from '../src/shared/webview-protocol.ts';
import {
  createInitialState,
  reducePanelState,
  selectSelectedSummary,
  selectToolNames,
  selectVisibleExchanges,
  KIND_FILTERS,
  STATUS_FILTERS,
  type PanelAction,
  type PanelState,
} from './traffic-panel-state.ts';

/*
 * The live traffic panel's DOM. Every payload is model output, i.e. attacker-controlled:
 * it only ever reaches the page as text (createTextNode / textContent), never as markup, and no
 * attribute that loads or runs anything is ever set from it. The CSP (nonce script, no inline
 * styles, nothing remote) is the second line of defence.
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

// ---------- small DOM helpers (text only) ----------

type Child = Node | string | null | undefined | false;

function element<K extends keyof HTMLElementTagNameMap>(tag: K, options: { className?: string; attributes?: Record<string, string>; text?: string } = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  for (const [name, value] of Object.entries(options.attributes ?? {})) node.setAttribute(name, value);
  if (options.text !== undefined) node.textContent = options.text;
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

function button(label: string, onClick: () => void, options: { className?: string; ariaLabel?: string; title?: string } = {}): HTMLButtonElement {
  const attributes: Record<string, string> = { type: 'button' };
  if (options.ariaLabel) attributes['aria-label'] = options.ariaLabel;
  if (options.title) attributes.title = options.title;
  const node = element('button', { className: options.className ?? 'action', attributes, text: label });
  node.addEventListener('click', onClick);
  return node;
}

function post(message: WebviewToHostMessage): void {
  vscodeApi.postMessage(message);
}

function formatMilliseconds(value: number | null): string {
  if (value === null) return '–';
  return value < 1000 ? `${value} ms` : `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`;
}

function formatBytes(value: number | null): string {
  if (value === null) return '–';
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KB`;
  return `${(value / 1024 / 1024).toFixed(1)} MB`;
}

function formatTime(iso: string, withMilliseconds = false): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0');
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  return withMilliseconds ? `${time}.${pad(date.getMilliseconds(), 3)}` : time;
}

function formatTokens(value: number | null): string {
  return value === null ? '–' : String(value);
}

function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

function statusText(exchange: ExchangeSummary): string {
  return exchange.httpStatus === null ? exchange.status : `${exchange.status} ${exchange.httpStatus}`;
}

function elapsedSince(exchange: ExchangeSummary): number {
  const started = Date.parse(exchange.startedAt);
  return Number.isNaN(started) ? 0 : Math.max(0, Date.now() - started);
}

function durationText(exchange: ExchangeSummary): string {
  return exchange.status === 'running' ? `${formatMilliseconds(elapsedSince(exchange))}…` : formatMilliseconds(exchange.durationMs);
}

// ---------- payloads: verbatim text with visible whitespace ----------

/** Characters a patch can hide: marked, but kept as themselves in the text. */
const INVISIBLE_CHARACTERS: ReadonlySet<string> = new Set(['\u00a0', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff']);

/**
 * Appends `text` so that the node's textContent is exactly `text`. With whitespace shown, line
 * ends, tabs, carriage returns, trailing blanks and invisible characters get their own spans, made
 * visible by CSS pseudo-elements (which are not part of the text, so copying stays verbatim).
 */
function appendVisibleText(target: HTMLElement, text: string, showWhitespace: boolean): void {
  if (!showWhitespace) {
    target.append(document.createTextNode(text));
    return;
  }
  const lines = text.split('\n');
  lines.forEach((line, lineIndex) => {
    const trailing = /[ \t]+$/.exec(line);
    const body = trailing ? line.slice(0, trailing.index) : line;
    appendMarkedRun(target, body, false);
    if (trailing) appendMarkedRun(target, trailing[0], true);
    if (lineIndex < lines.length - 1) target.append(element('span', { className: 'ws ws-newline', text: '\n' }));
  });
}

function appendMarkedRun(target: HTMLElement, run: string, trailing: boolean): void {
  let plain = '';
  const flush = (): void => {
    if (plain === '') return;
    target.append(trailing ? element('span', { className: 'ws ws-trailing', text: plain }) : document.createTextNode(plain));
    plain = '';
  };
  for (const character of run) {
    if (character === '\t') {
      flush();
      target.append(element('span', { className: trailing ? 'ws ws-tab ws-trailing' : 'ws ws-tab', text: '\t' }));
    } else if (character === '\r') {
      flush();
      target.append(element('span', { className: 'ws ws-cr', text: '\r' }));
    } else if (INVISIBLE_CHARACTERS.has(character)) {
      flush();
      const code = character.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0') ?? '';
      target.append(element('span', { className: 'ws ws-invisible', attributes: { title: `U+${code}` }, text: character }));
    } else {
      plain += character;
    }
  }
  flush();
}

function describeText(view: TextView): string {
  const lines = view.text === '' ? 0 : view.text.split('\n').length;
  const ending = view.truncated ? '' : view.text.endsWith('\n') ? ', ends with a line break' : ', no final line break';
  return `${plural(view.totalLength, 'character')}, ${plural(lines, 'line')}${ending}`;
}

function renderPayload(view: TextView, label: string, reference: BodyReference | null, options: { className?: string } = {}): HTMLElement {
  const pre = element('pre', {
    className: `payload-text${state.ui.showWhitespace ? ' show-whitespace' : ''}`,
    attributes: { tabindex: '0', role: 'region', 'aria-label': `${label}, ${describeText(view)}` },
  });
  appendVisibleText(pre, view.text, state.ui.showWhitespace);
  const actions = element('span', { className: 'payload-actions' });
  if (reference) {
    actions.append(
      button('Copy', () => post({ type: 'traffic/body/copy', body: reference }), { ariaLabel: `Copy ${label}` }),
      button('Open as JSON', () => post({ type: 'traffic/body/open', body: reference }), { ariaLabel: `Open ${label} as a JSON document` }),
    );
  }
  return element(
    'figure',
    { className: `payload ${options.className ?? ''}`.trim() },
    element('figcaption', {}, element('span', { className: 'payload-label', text: label }), element('span', { className: 'payload-size', text: describeText(view) }), actions),
    view.truncated ? element('p', { className: 'truncated', text: `Showing the first ${view.text.length} of ${view.totalLength} characters; open it as a document for the whole text.` }) : null,
    pre,
  );
}

// ---------- static layout ----------

const app = document.getElementById('app') ?? document.body.appendChild(element('main', { attributes: { id: 'app' } }));
app.textContent = '';
app.setAttribute('aria-busy', 'true');

const statsLine = element('span', { className: 'stats', attributes: { id: 'stats' } });
const orderButton = button('', () => dispatch({ type: 'order/toggle' }), { className: 'action toggle' });
orderButton.id = 'order';
const warningsOnlyInput = element('input', { attributes: { type: 'checkbox', id: 'warnings-only' } });
warningsOnlyInput.addEventListener('change', () => dispatch({ type: 'filter/warnings/set', warningsOnly: warningsOnlyInput.checked }));
const toolSelect = element('select', { attributes: { id: 'tool-filter' } });
toolSelect.addEventListener('change', () => dispatch({ type: 'filter/tool/set', tool: toolSelect.value }));
const statusSelect = element('select', { attributes: { id: 'status-filter' } });
for (const status of STATUS_FILTERS) statusSelect.append(element('option', { attributes: { value: status }, text: status === 'all' ? 'any status' : status }));
statusSelect.addEventListener('change', () => {
  const chosen = STATUS_FILTERS.find((status) => status === statusSelect.value) ?? 'all';
  dispatch({ type: 'filter/status/set', status: chosen });
});
const KIND_FILTER_LABELS: Readonly<Record<(typeof KIND_FILTERS)[number], string>> = {
  all: 'any kind',
  turn: 'turns',
  compaction: 'compactions',
  subagent: 'sub-agents',
  unlabelled: 'unlabelled',
};
const kindSelect = element('select', { attributes: { id: 'kind-filter' } });
for (const kind of KIND_FILTERS) kindSelect.append(element('option', { attributes: { value: kind }, text: KIND_FILTER_LABELS[kind] }));
kindSelect.addEventListener('change', () => {
  const chosen = KIND_FILTERS.find((kind) => kind === kindSelect.value) ?? 'all';
  dispatch({ type: 'filter/kind/set', kind: chosen });
});
const searchInput = element('input', { attributes: { type: 'search', id: 'search', placeholder: 'Search payloads', 'aria-label': 'Search in payloads' } });
let searchTimer: ReturnType<typeof setTimeout> | undefined;
const runSearch = (): void => {
  clearTimeout(searchTimer);
  if (searchInput.value === state.ui.query) return;
  dispatch({ type: 'query/set', query: searchInput.value });
  post({ type: 'traffic/search/run', query: searchInput.value });
};
searchInput.addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(runSearch, 250);
});
searchInput.addEventListener('keydown', (event) => {
  if (event.key === 'Enter') runSearch();
});
const pauseButton = button('', () => dispatch({ type: 'pause/toggle' }), { className: 'action toggle' });
pauseButton.id = 'pause';
const whitespaceButton = button('Whitespace', () => dispatch({ type: 'whitespace/toggle' }), { className: 'action toggle', title: 'Mark line ends, tabs and trailing blanks in payloads' });
whitespaceButton.id = 'whitespace';
const clearButton = button('Clear', () => post({ type: 'traffic/session/clear' }), { ariaLabel: 'Clear every round trip' });
clearButton.id = 'clear';
const exportButton = button('Export JSON Lines', () => post({ type: 'traffic/session/export' }), { ariaLabel: 'Export the session as JSON Lines' });
exportButton.id = 'export';

const notice = element('p', { className: 'notice', attributes: { id: 'notice', role: 'status', 'aria-live': 'polite' } });
const list = element('div', { className: 'list', attributes: { id: 'list', role: 'listbox', tabindex: '0', 'aria-label': 'Round trips' } });
const emptyMessage = element('p', { className: 'empty', attributes: { id: 'empty' } });
const detailPane = element('section', { className: 'detail', attributes: { id: 'detail', 'aria-label': 'Round trip detail', tabindex: '-1' } });

app.append(
  element(
    'header',
    { className: 'top' },
    element('h1', { attributes: { id: 'title' }, text: 'Live traffic' }),
    statsLine,
    notice,
  ),
  element(
    'div',
    { className: 'toolbar', attributes: { role: 'toolbar', 'aria-label': 'Traffic list controls' } },
    orderButton,
    element('label', { className: 'check' }, warningsOnlyInput, ' Warnings & errors only'),
    element('label', { attributes: { for: 'tool-filter' }, text: 'Tool' }),
    toolSelect,
    element('label', { attributes: { for: 'status-filter' }, text: 'Status' }),
    statusSelect,
    element('label', { attributes: { for: 'kind-filter' }, text: 'Kind' }),
    kindSelect,
    searchInput,
    pauseButton,
    whitespaceButton,
    clearButton,
    exportButton,
  ),
  element(
    'div',
    { className: 'layout' },
    element(
      'section',
      { className: 'list-pane', attributes: { 'aria-label': 'Round trips' } },
      element(
        'div',
        { className: 'row list-header', attributes: { 'aria-hidden': 'true' } },
        ...[
          ['Time', 'Started at'],
          ['Kind', 'Turn, compaction or a sub-agent’s round trip (from Codex’s x-codex-turn-metadata header)'],
          ['Model', 'Model Codex asked for'],
          ['Mode', 'stream (SSE) or one JSON body'],
          ['Status', 'Outcome; HTTP status on hover'],
          ['Duration', 'Whole round trip'],
          ['TTFT', 'Time to first token'],
          ['Tokens', 'Tokens in / out'],
          ['Calls', 'Lifted custom_tool_calls + function calls'],
          ['⚠', 'Warnings'],
        ].map(([label, title]) => element('span', { text: label, attributes: { title: title ?? '' } })),
      ),
      list,
      emptyMessage,
    ),
    detailPane,
  ),
);

// ---------- list ----------

/** Duration cells of running round trips, refreshed every second. */
let runningCells = new Map<string, { cell: HTMLElement; exchange: ExchangeSummary }>();

function rowId(exchange: ExchangeSummary): string {
  return `exchange-${exchange.sequence}`;
}

function describeExchange(exchange: ExchangeSummary): string {
  const parts = [
    formatTime(exchange.startedAt),
    exchange.roundTrip.text,
    exchange.model || 'unknown model',
    exchange.stream ? 'stream' : 'not streamed',
    statusText(exchange),
    `duration ${durationText(exchange)}`,
    `first token ${formatMilliseconds(exchange.firstTokenMs)}`,
    `tokens ${formatTokens(exchange.inputTokens)} in, ${formatTokens(exchange.outputTokens)} out`,
    plural(exchange.liftedCallCount, 'lifted call'),
    plural(exchange.functionCallCount, 'function call'),
    plural(exchange.warningCount, 'warning'),
  ];
  if (exchange.error) parts.push(`error: ${exchange.error.message}`);
  return parts.join(', ');
}

/** The kind column: the kind, or for a sub-agent's turn the agent itself (the header says "Kind"). */
function kindCellText(exchange: ExchangeSummary): string {
  const { kind, text } = exchange.roundTrip;
  return kind === 'subagent' ? text.replace(/^sub-agent /, '') : kind;
}

function renderRow(exchange: ExchangeSummary): HTMLElement {
  const selected = exchange.id === state.ui.selectedId;
  const active = exchange.id === state.ui.activeId;
  const duration = element('span', { className: 'cell-duration', text: durationText(exchange) });
  if (exchange.status === 'running') runningCells.set(exchange.id, { cell: duration, exchange });
  const row = element(
    'div',
    {
      className: `row exchange status-${exchange.status}${selected ? ' selected' : ''}${active ? ' active' : ''}${exchange.warningCount > 0 ? ' has-warnings' : ''}`,
      attributes: { id: rowId(exchange), role: 'option', 'aria-selected': String(selected), 'aria-label': describeExchange(exchange) },
    },
    element('span', { className: 'cell-time', text: formatTime(exchange.startedAt), attributes: { title: exchange.startedAt } }),
    element('span', { className: 'cell-kind' }, element('span', { className: `badge kind-${exchange.roundTrip.kind}`, text: kindCellText(exchange), attributes: { title: exchange.roundTrip.text } })),
    element('span', { className: 'cell-model', text: exchange.model, attributes: { title: exchange.upstreamModel === exchange.model ? exchange.model : `${exchange.model} → ${exchange.upstreamModel}` } }),
    element('span', { className: 'cell-mode', text: exchange.stream ? 'stream' : 'json' }),
    element('span', { className: 'cell-status' }, element('span', { className: `badge status-${exchange.status}`, text: exchange.status, attributes: { title: statusText(exchange) } })),
    duration,
    element('span', { className: 'cell-ttft', text: formatMilliseconds(exchange.firstTokenMs) }),
    element('span', { className: 'cell-tokens', text: `${formatTokens(exchange.inputTokens)} / ${formatTokens(exchange.outputTokens)}` }),
    element('span', { className: 'cell-calls', text: `${exchange.liftedCallCount} + ${exchange.functionCallCount}`, attributes: { title: `${plural(exchange.liftedCallCount, 'lifted custom_tool_call')}, ${plural(exchange.functionCallCount, 'function call')}` } }),
    element('span', { className: `cell-warnings${exchange.warningCount > 0 ? ' warn' : ''}`, text: String(exchange.warningCount) }),
  );
  row.addEventListener('click', () => {
    dispatch({ type: 'exchange/select', exchangeId: exchange.id });
    list.focus();
  });
  return row;
}

function renderList(): void {
  runningCells = new Map();
  const visible = selectVisibleExchanges(state);
  list.replaceChildren(...visible.map(renderRow));
  const active = visible.find((exchange) => exchange.id === state.ui.activeId);
  if (active) {
    list.setAttribute('aria-activedescendant', rowId(active));
    document.getElementById(rowId(active))?.scrollIntoView({ block: 'nearest' });
  } else {
    list.removeAttribute('aria-activedescendant');
  }
  const filtered = state.exchanges.length - visible.length;
  emptyMessage.hidden = visible.length > 0;
  emptyMessage.textContent = !state.connected
    ? 'Waiting for the bridge…'
    : state.exchanges.length === 0
      ? 'No round trips yet. Run Codex against the bridge (codex -p freeform-bridge) and they appear here as they happen.'
      : `No round trip matches the filters (${plural(filtered, 'hidden round trip')}).`;
}

function renderToolbar(): void {
  const ui = state.ui;
  orderButton.textContent = ui.order === 'newest-first' ? 'Newest first' : 'Newest last';
  orderButton.setAttribute('aria-label', `Order: ${orderButton.textContent}. Press to reverse.`);
  warningsOnlyInput.checked = ui.warningsOnly;
  const tools = selectToolNames(state);
  const options = [element('option', { attributes: { value: '' }, text: 'any tool' }), ...tools.map((name) => element('option', { attributes: { value: name }, text: name }))];
  toolSelect.replaceChildren(...options);
  toolSelect.value = ui.toolFilter;
  statusSelect.value = ui.statusFilter;
  kindSelect.value = ui.kindFilter;
  if (document.activeElement !== searchInput) searchInput.value = ui.query;
  pauseButton.textContent = ui.paused ? `Resume${state.pending.length > 0 ? ` (${state.pending.length} waiting)` : ''}` : 'Pause';
  pauseButton.setAttribute('aria-pressed', String(ui.paused));
  whitespaceButton.setAttribute('aria-pressed', String(ui.showWhitespace));
  const stats = state.stats;
  statsLine.textContent = stats
    ? `${plural(stats.exchangeCount, 'round trip')} (buffer ${stats.capacity}) · bodies ${formatBytes(stats.retainedBodyBytes)} of ${formatBytes(stats.maxBodyBytes)}${stats.evictedBodyCount > 0 ? ` · ${stats.evictedBodyCount} evicted` : ''}`
    : '';
}

// ---------- detail ----------

function metaList(entries: Array<[string, string]>): HTMLElement {
  const list = element('dl', { className: 'meta' });
  for (const [term, value] of entries) list.append(element('dt', { text: term }), element('dd', { text: value }));
  return list;
}

function section(title: string, id: string, ...children: Child[]): HTMLElement {
  const headingId = `${id}-heading`;
  return element('section', { className: 'detail-section', attributes: { id, 'aria-labelledby': headingId } }, element('h3', { attributes: { id: headingId }, text: title }), ...children);
}

function describeItem(item: OutputItemView): string {
  switch (item.kind) {
    case 'custom_tool_call':
      return `custom_tool_call ${item.namespace ? `${item.namespace}.` : ''}${item.name} (${item.callId})`;
    case 'function_call':
      return `function_call ${item.namespace ? `${item.namespace}.` : ''}${item.name} (${item.callId})`;
    case 'message':
      return 'message';
    case 'reasoning':
      return 'reasoning';
    default: {
      const unknownItem: never = item;
      return String(unknownItem);
    }
  }
}

function renderWarning(exchangeId: string, warning: WarningView, items: OutputItemView[]): HTMLElement {
  const delivered = warning.deliveredIndex === null ? undefined : items[warning.deliveredIndex];
  const header = element(
    'header',
    { className: 'item-header' },
    element('span', { className: 'badge warning-kind', text: warning.kind }),
    warning.tool ? element('span', { className: 'item-name', text: warning.tool }) : null,
    warning.callId ? element('code', { className: 'call-id', text: warning.callId }) : null,
  );
  const deliveredInput = delivered?.kind === 'custom_tool_call' ? delivered.input : delivered?.kind === 'function_call' ? delivered.arguments : null;
  const sameAsDelivered = deliveredInput !== null && warning.raw !== null && deliveredInput.text === warning.raw.text;
  const rawPayload = (): HTMLElement | null => {
    if (!warning.raw) return null;
    const payload = renderPayload(warning.raw, 'Raw payload', { kind: 'warningRaw', exchangeId, index: warning.index });
    // The same text is shown with the call itself: folded here, still verbatim one click away.
    if (!sameAsDelivered) return payload;
    return element('details', { className: 'same-as-delivered' }, element('summary', { text: 'Raw payload (identical to the delivered input)' }), payload);
  };
  const deliveredNote = (): HTMLElement | null => {
    if (warning.callId === null) return null;
    if (!delivered) return element('p', { className: 'delivered none', text: 'Nothing was delivered to Codex for this call.' });
    const jump = button('Show the delivered call', () => document.getElementById(`item-${delivered.index}`)?.focus(), { className: 'link' });
    if (sameAsDelivered || deliveredInput === null) return element('p', { className: 'delivered' }, `Delivered ${sameAsDelivered ? 'unchanged ' : ''}as ${describeItem(delivered)}. `, jump);
    return element('div', { className: 'delivered' }, element('p', {}, `Delivered instead as ${describeItem(delivered)}: `, jump), renderPayload(deliveredInput, 'Delivered input', { kind: 'item', exchangeId, index: delivered.index }));
  };
  return element(
    'article',
    { className: 'warning', attributes: { id: `warning-${warning.index}`, 'aria-label': `Warning ${warning.kind}${warning.tool ? ` for ${warning.tool}` : ''}` } },
    header,
    element('p', { className: 'warning-detail', text: warning.detail }),
    rawPayload(),
    deliveredNote(),
  );
}

function renderItem(exchangeId: string, item: OutputItemView): HTMLElement {
  const reference: BodyReference = { kind: 'item', exchangeId, index: item.index };
  const article = (title: string, status: string | null, ...children: Child[]): HTMLElement =>
    element(
      'article',
      { className: `item item-${item.kind}`, attributes: { id: `item-${item.index}`, tabindex: '-1', 'aria-label': title } },
      element('header', { className: 'item-header' }, element('span', { className: 'badge item-kind', text: item.kind }), element('span', { className: 'item-name', text: title }), status ? element('span', { className: 'item-status', text: status }) : null),
      ...children,
    );
  switch (item.kind) {
    case 'custom_tool_call':
      return article(
        `${item.namespace ? `${item.namespace}.` : ''}${item.name}`,
        item.status,
        element('p', { className: 'call-line' }, 'call id ', element('code', { className: 'call-id', text: item.callId })),
        renderPayload(item.input, 'Input', reference, { className: 'lifted-input' }),
      );
    case 'function_call':
      return article(
        `${item.namespace ? `${item.namespace}.` : ''}${item.name}`,
        item.status,
        element('p', { className: 'call-line' }, 'call id ', element('code', { className: 'call-id', text: item.callId })),
        renderPayload(item.arguments, 'Arguments', reference),
      );
    case 'message':
      return article('assistant text', item.status, renderPayload(item.text, 'Text', reference));
    case 'reasoning':
      return article('reasoning', null, renderPayload(item.text, 'Reasoning', reference));
    default: {
      const unknownItem: never = item;
      return element('p', { text: String(unknownItem) });
    }
  }
}

function describeTool(tool: ToolView): string {
  const notes: string[] = [];
  if (tool.namespace) notes.push(`flattened from namespace ${tool.namespace}`);
  if (tool.source === 'additional_tools') notes.push('hoisted from additional_tools');
  if (tool.reason) notes.push(tool.reason);
  return notes.join('; ');
}

function renderTools(tools: ToolView[]): HTMLElement {
  if (tools.length === 0) return element('p', { className: 'muted', text: 'No tools declared.' });
  const table = element('table', { className: 'tools' });
  table.append(
    element('caption', { className: 'visually-hidden', text: 'Declared tools and what lowering did with each' }),
    element('thead', {}, element('tr', {}, ...['Tool', 'Kind', 'Disposition', 'Sent as', 'Why'].map((label) => element('th', { attributes: { scope: 'col' }, text: label })))),
  );
  const body = element('tbody');
  const order = ['bridged', 'lowered', 'passthrough', 'dropped'];
  const sorted = [...tools].sort((left, right) => order.indexOf(left.disposition) - order.indexOf(right.disposition));
  for (const tool of sorted) {
    body.append(
      element(
        'tr',
        { className: `disposition-${tool.disposition}` },
        element('th', { attributes: { scope: 'row' }, text: tool.namespace ? `${tool.namespace}.${tool.name}` : tool.name }),
        element('td', { text: tool.kind }),
        element('td', {}, element('span', { className: `badge disposition disposition-${tool.disposition}`, text: tool.disposition })),
        element('td', {}, tool.wireName ? element('code', { text: tool.wireName }) : '–'),
        element('td', { text: describeTool(tool) }),
      ),
    );
  }
  table.append(body);
  const counts = order.map((disposition) => [disposition, tools.filter((tool) => tool.disposition === disposition).length] as const).filter(([, count]) => count > 0);
  const hoisted = tools.filter((tool) => tool.source === 'additional_tools').length;
  const flattened = tools.filter((tool) => tool.namespace !== null).length;
  const summary = [...counts.map(([disposition, count]) => `${count} ${disposition}`), hoisted > 0 ? `${hoisted} hoisted` : '', flattened > 0 ? `${flattened} flattened` : ''].filter(Boolean).join(', ');
  return element('div', {}, element('p', { className: 'muted', text: summary }), element('div', { className: 'table-scroll' }, table));
}

function renderToolChoice(toolChoice: { original: string; sent: string; rewritten: boolean }): HTMLElement {
  return element(
    'p',
    { className: `tool-choice${toolChoice.rewritten ? ' rewritten' : ''}` },
    'tool_choice ',
    element('code', { text: toolChoice.original }),
    toolChoice.rewritten ? ' rewritten to ' : ' sent unchanged as ',
    element('code', { text: toolChoice.sent }),
    toolChoice.rewritten ? element('span', { className: 'badge mark', text: 'rewritten' }) : null,
  );
}

function renderLoweredRequest(exchangeId: string, content: BodyContent | null): HTMLElement {
  if (content === null) return element('p', { className: 'muted', text: 'The lowered request is no longer kept (evicted to bound memory).' });
  const tools = element('div', { className: 'lowered-tools' });
  for (const tool of content.loweredTools ?? []) {
    const mark =
      tool.disposition === 'bridged'
        ? `bridged: ${tool.kind} tool ${tool.name} sent as function ${tool.wireName}`
        : tool.namespace
          ? `flattened: ${tool.namespace}.${tool.name} sent as ${tool.wireName}`
          : `${tool.disposition}: ${tool.kind} ${tool.name}`;
    tools.append(
      element(
        'details',
        { className: `lowered-tool disposition-${tool.disposition}` },
        element('summary', {}, element('code', { text: tool.wireName }), ' ', element('span', { className: `badge mark disposition-${tool.disposition}`, text: mark })),
        renderPayload({ text: tool.json, totalLength: tool.json.length, truncated: false }, `Tool ${tool.wireName} as sent`, null),
      ),
    );
  }
  return element(
    'div',
    { className: 'lowered-request' },
    content.toolChoice ? renderToolChoice(content.toolChoice) : null,
    element('h4', { text: `Tools sent (${content.loweredTools?.length ?? 0})` }),
    tools,
    element('h4', { text: 'Request JSON' }),
    renderPayload(content.text, 'Lowered Chat request', { kind: 'loweredRequest', exchangeId }),
  );
}

function renderDetail(): void {
  const scroll = detailPane.scrollTop;
  const selectedId = state.ui.selectedId;
  if (selectedId === null) {
    detailPane.replaceChildren(element('p', { className: 'muted placeholder', text: 'Open a round trip (click it, or move with the arrow keys and press Enter) to see the request, the answer, every lifted call and every warning.' }));
    return;
  }
  const detail: ExchangeDetail | null = state.detail;
  const summary = selectSelectedSummary(state);
  if (!detail || !summary) {
    detailPane.replaceChildren(element('p', { className: 'muted', text: 'Loading…' }));
    return;
  }
  const exchangeId = summary.id;
  const lifted = detail.items.filter((item) => item.kind === 'custom_tool_call');
  const functions = detail.items.filter((item) => item.kind === 'function_call');
  const texts = detail.items.filter((item) => item.kind === 'message' || item.kind === 'reasoning');
  const children: Child[] = [
    element(
      'header',
      { className: 'detail-header' },
      element('h2', { attributes: { id: 'detail-title' }, text: `Round trip ${summary.id}` }),
      element(
        'div',
        { className: 'detail-actions' },
        button('Open as JSON', () => post({ type: 'traffic/body/open', body: { kind: 'exchange', exchangeId } }), { ariaLabel: 'Open the whole round trip as a JSON document' }),
        summary.loweredRequestBytes !== null ? button('Copy as curl', () => post({ type: 'traffic/curl/copy', exchangeId }), { ariaLabel: 'Copy the lowered request as a curl command, secrets redacted' }) : null,
        summary.loweredRequestBytes !== null ? button('Open request as JSON', () => post({ type: 'traffic/body/open', body: { kind: 'loweredRequest', exchangeId } }), { ariaLabel: 'Open the lowered Chat request as a JSON document' }) : null,
      ),
    ),
    metaList([
      ['Started', `${formatTime(summary.startedAt, true)} (${summary.startedAt})`],
      ['Kind', summary.roundTrip.text],
      ['Model', summary.upstreamModel && summary.upstreamModel !== summary.model ? `${summary.model} → ${summary.upstreamModel}` : summary.model || '–'],
      ['Mode', summary.stream ? 'stream (SSE)' : 'one JSON body'],
      ['Status', statusText(summary)],
      ['Duration', durationText(summary)],
      ['Time to first token', formatMilliseconds(summary.firstTokenMs)],
      ['Backend headers after', formatMilliseconds(summary.upstreamHeadersMs)],
      ['Tokens in / out', `${formatTokens(summary.inputTokens)} / ${formatTokens(summary.outputTokens)}`],
      ['Codex request', `${formatBytes(summary.requestBytes)}${detail.inputItems !== null ? `, ${plural(detail.inputItems, 'input item')}` : ''}`],
      ['Lowered request', formatBytes(summary.loweredRequestBytes)],
      ['Backend', detail.backendUrl ?? '–'],
    ]),
  ];
  if (!summary.bodyRetained && summary.status !== 'rejected') {
    children.push(element('p', { className: 'notice-inline', text: 'This round trip\'s bodies were evicted to keep memory bounded; only its summary is left.' }));
  }
  if (summary.error) {
    children.push(section(summary.status === 'rejected' ? 'Rejected' : 'Backend error', 'section-error', element('p', { className: 'error-line' }, element('span', { className: 'badge error', text: summary.error.code ?? 'error' }), ' ', summary.error.message)));
  }
  // Warnings about a call first (they are what a mangled patch produces), then the request-level ones.
  const warnings = [...detail.warnings].sort((left, right) => Number(left.callId === null) - Number(right.callId === null) || left.index - right.index);
  children.push(
    section(
      `Lifted custom tool calls (${lifted.length})`,
      'section-lifted',
      lifted.length === 0 ? element('p', { className: 'muted', text: 'No custom_tool_call delivered.' }) : null,
      ...lifted.map((item) => renderItem(exchangeId, item)),
    ),
    section(
      `Warnings (${detail.warnings.length})`,
      'section-warnings',
      warnings.length === 0 ? element('p', { className: 'muted', text: 'No warnings.' }) : null,
      ...warnings.map((warning) => renderWarning(exchangeId, warning, detail.items)),
    ),
    section(
      `Function calls (${functions.length})`,
      'section-functions',
      functions.length === 0 ? element('p', { className: 'muted', text: 'No function_call delivered.' }) : null,
      ...functions.map((item) => renderItem(exchangeId, item)),
    ),
    section('Backend answer', 'section-answer', texts.length === 0 ? element('p', { className: 'muted', text: 'No text or reasoning.' }) : null, ...texts.map((item) => renderItem(exchangeId, item)), detail.usage ? renderPayload({ text: detail.usage, totalLength: detail.usage.length, truncated: false }, 'Usage', null) : null),
    section('Incoming request', 'section-request', detail.toolChoice ? renderToolChoice(detail.toolChoice) : null, renderTools(detail.tools)),
  );
  if (summary.loweredRequestBytes !== null) {
    const loaded = state.loweredRequest?.exchangeId === exchangeId ? state.loweredRequest : null;
    children.push(
      section(
        'Lowered Chat request',
        'section-lowered',
        loaded
          ? renderLoweredRequest(exchangeId, loaded.content)
          : button(`Show lowered request (${formatBytes(summary.loweredRequestBytes)})`, () => post({ type: 'traffic/body/request', body: { kind: 'loweredRequest', exchangeId } }), { ariaLabel: 'Show the lowered Chat request here' }),
      ),
    );
  }
  detailPane.replaceChildren(...children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false));
  detailPane.scrollTop = scroll;
}

// ---------- state and rendering ----------

let rendered: { detail: unknown; loweredRequest: unknown; selectedId: string | null; showWhitespace: boolean; connected: boolean } | null = null;
let noticeTimer: ReturnType<typeof setTimeout> | undefined;

function render(): void {
  app.setAttribute('aria-busy', String(!state.connected));
  renderToolbar();
  renderList();
  // The detail is rebuilt only when what it shows changed: rebuilding would lose the reader's place.
  const key = { detail: state.detail, loweredRequest: state.loweredRequest, selectedId: state.ui.selectedId, showWhitespace: state.ui.showWhitespace, connected: state.connected };
  if (!rendered || rendered.detail !== key.detail || rendered.loweredRequest !== key.loweredRequest || rendered.selectedId !== key.selectedId || rendered.showWhitespace !== key.showWhitespace || rendered.connected !== key.connected) {
    renderDetail();
    rendered = key;
  }
  notice.textContent = state.notice?.message ?? '';
  notice.className = `notice${state.notice?.level === 'error' ? ' error' : ''}`;
}

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

list.addEventListener('keydown', (event) => {
  const moves: Record<string, Extract<PanelAction, { type: 'cursor/move' }>['to']> = {
    ArrowDown: 'next',
    ArrowUp: 'previous',
    Home: 'first',
    End: 'last',
    PageDown: 'page-down',
    PageUp: 'page-up',
  };
  const move = moves[event.key];
  if (move) {
    event.preventDefault();
    dispatch({ type: 'cursor/move', to: move });
    return;
  }
  if (event.key === 'Enter' || event.key === ' ') {
    event.preventDefault();
    if (state.ui.activeId === null) dispatch({ type: 'cursor/move', to: 'first' });
    if (state.ui.activeId !== null) dispatch({ type: 'exchange/select', exchangeId: state.ui.activeId });
    return;
  }
  if (event.key === 'Escape' && state.ui.selectedId !== null) {
    event.preventDefault();
    dispatch({ type: 'exchange/select', exchangeId: null });
  }
});
list.addEventListener('focus', () => {
  // Focus lands on the list: put the cursor somewhere visible so screen readers announce a row.
  if (state.ui.activeId === null || !selectVisibleExchanges(state).some((exchange) => exchange.id === state.ui.activeId)) dispatch({ type: 'cursor/move', to: 'first' });
});

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

setInterval(() => {
  for (const { cell, exchange } of runningCells.values()) cell.textContent = durationText(exchange);
}, 1000);

render();
post({ type: 'webview/ready' });
