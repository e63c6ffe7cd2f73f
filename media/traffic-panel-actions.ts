import type { BodyReference } from '../src/shared/webview-protocol.ts';
import { KIND_FILTERS, selectToolNames, STATUS_FILTERS, type PanelState } from './traffic-panel-state.ts';
import { button, element, type PanelContext } from './traffic-panel-dom.ts';
import { formatBytes, plural } from './traffic-panel-format.ts';

/*
 * What the user can do besides reading: the toolbar (order, filters, search, pause, whitespace,
 * clear, export) and the copy / open buttons of bodies and round trips. Each either changes the
 * panel's state or asks the host; none touches a payload.
 */

const KIND_FILTER_LABELS: Readonly<Record<(typeof KIND_FILTERS)[number], string>> = {
  all: 'any kind',
  turn: 'turns',
  compaction: 'compactions',
  subagent: 'sub-agents',
  unlabelled: 'unlabelled',
};

export interface Toolbar {
  /** The toolbar row itself. */
  readonly root: HTMLElement;
  /** The "n round trips (buffer …)" line, placed in the header. */
  readonly statsLine: HTMLElement;
  render(state: PanelState): void;
}

export function createToolbar(context: PanelContext): Toolbar {
  const { dispatch, post } = context;
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
    if (searchInput.value === context.getState().ui.query) return;
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

  const root = element(
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
  );

  const render = (state: PanelState): void => {
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
  };
  return { root, statsLine, render };
}

/** Copy and Open as JSON for one body shown in the detail. */
export function renderBodyActions(context: PanelContext, reference: BodyReference, label: string): HTMLButtonElement[] {
  return [
    button('Copy', () => context.post({ type: 'traffic/body/copy', body: reference }), { ariaLabel: `Copy ${label}` }),
    button('Open as JSON', () => context.post({ type: 'traffic/body/open', body: reference }), { ariaLabel: `Open ${label} as a JSON document` }),
  ];
}

/** The detail header's actions on the whole round trip; the request ones only while its lowered request is kept. */
export function renderExchangeActions(context: PanelContext, exchangeId: string, hasLoweredRequest: boolean): HTMLElement {
  const { post } = context;
  return element(
    'div',
    { className: 'detail-actions' },
    button('Open as JSON', () => post({ type: 'traffic/body/open', body: { kind: 'exchange', exchangeId } }), { ariaLabel: 'Open the whole round trip as a JSON document' }),
    hasLoweredRequest ? button('Copy as curl', () => post({ type: 'traffic/curl/copy', exchangeId }), { ariaLabel: 'Copy the lowered request as a curl command, secrets redacted' }) : null,
    hasLoweredRequest ? button('Open request as JSON', () => post({ type: 'traffic/body/open', body: { kind: 'loweredRequest', exchangeId } }), { ariaLabel: 'Open the lowered Chat request as a JSON document' }) : null,
  );
}

/** Loads the lowered request into the detail (it is not sent with the detail: it can be megabytes). */
export function renderShowLoweredRequestButton(context: PanelContext, exchangeId: string, bytes: number | null): HTMLButtonElement {
  return button(`Show lowered request (${formatBytes(bytes)})`, () => context.post({ type: 'traffic/body/request', body: { kind: 'loweredRequest', exchangeId } }), { ariaLabel: 'Show the lowered Chat request here' });
}
