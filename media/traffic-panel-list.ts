import type { ExchangeSummary } from '../src/shared/webview-protocol.ts';
import { CALLS_COLUMN_TITLE, describeCallOutcomes, describeCallsCell } from './traffic-panel-call-tally.ts';
import { element, type PanelContext } from './traffic-panel-dom.ts';
import { durationText, formatMilliseconds, formatTime, formatTokens, plural, statusText } from './traffic-panel-format.ts';
import { diffKeyedList, type KeyedListPatch } from './traffic-panel-list-diff.ts';
import { shortModelNames } from './traffic-panel-model-name.ts';
import { selectVisibleExchanges, type PanelAction, type PanelState } from './traffic-panel-state.ts';

/*
 * The list of round trips. Rows are keyed by exchange id and kept between renders: an update
 * rewrites only the rows whose round trip (or selection) changed, adds the new ones, removes the
 * gone ones and moves rows only when the order changed.
 */

/** What a row is drawn from. */
interface RowModel {
  exchange: ExchangeSummary;
  /** The model as the Model column shows it (shortened; see traffic-panel-model-name.ts). */
  modelName: string;
  selected: boolean;
  active: boolean;
}

/** A row and the cells an update rewrites. */
interface RowView {
  row: HTMLElement;
  time: HTMLElement;
  kindBadge: HTMLElement;
  model: HTMLElement;
  mode: HTMLElement;
  statusBadge: HTMLElement;
  duration: HTMLElement;
  ttft: HTMLElement;
  tokens: HTMLElement;
  calls: HTMLElement;
  warnings: HTMLElement;
}

/**
 * The columns, in order: the cell class (the stylesheet hides the less important ones when the list
 * is narrow), the header and its hover text.
 */
const COLUMNS: ReadonlyArray<readonly [string, string, string]> = [
  ['cell-time', 'Time', 'Started at'],
  ['cell-kind', 'Kind', 'Turn, compaction or a sub-agent’s round trip (from Codex’s x-codex-turn-metadata header)'],
  ['cell-model', 'Model', 'Model Codex asked for, shortened; the full id on hover'],
  ['cell-mode', 'Mode', 'stream (SSE) or one JSON body'],
  ['cell-status', 'Status', 'Outcome; HTTP status on hover'],
  ['cell-duration', 'Duration', 'Whole round trip'],
  ['cell-ttft', 'TTFT', 'Time to first token'],
  ['cell-tokens', 'Tokens', 'Tokens in / out'],
  ['cell-calls', 'Calls', CALLS_COLUMN_TITLE],
  ['cell-warnings', '⚠', 'Warnings'],
];

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
  const outcomes = exchange.callOutcomes;
  if (outcomes.repaired + outcomes.warned + outcomes.refused + outcomes.leftAsText > 0) {
    parts.push(`calls ${describeCallOutcomes(outcomes)}`);
  }
  if (exchange.error) parts.push(`error: ${exchange.error.message}`);
  return parts.join(', ');
}

/** The kind column: the kind, or for a sub-agent's turn the agent itself (the header says "Kind"). */
function kindCellText(exchange: ExchangeSummary): string {
  const { kind, text } = exchange.roundTrip;
  return kind === 'subagent' ? text.replace(/^sub-agent /, '') : kind;
}

/**
 * The host sends a fresh object for every update and every snapshot, so a row compares by value;
 * a summary is a small JSON object, far cheaper to compare than a row is to draw.
 */
function isRowUnchanged(before: RowModel, after: RowModel): boolean {
  if (before.selected !== after.selected || before.active !== after.active || before.modelName !== after.modelName) return false;
  return before.exchange === after.exchange || JSON.stringify(before.exchange) === JSON.stringify(after.exchange);
}

function createRowView(exchangeId: string, context: PanelContext, list: HTMLElement): RowView {
  const cell = (className: string): HTMLElement => element('span', { className });
  const view: RowView = {
    row: element('div'),
    time: cell('cell-time'),
    kindBadge: element('span'),
    model: cell('cell-model'),
    mode: cell('cell-mode'),
    statusBadge: element('span'),
    duration: cell('cell-duration'),
    ttft: cell('cell-ttft'),
    tokens: cell('cell-tokens'),
    calls: cell('cell-calls'),
    warnings: cell('cell-warnings'),
  };
  view.row.append(
    view.time,
    element('span', { className: 'cell-kind' }, view.kindBadge),
    view.model,
    view.mode,
    element('span', { className: 'cell-status' }, view.statusBadge),
    view.duration,
    view.ttft,
    view.tokens,
    view.calls,
    view.warnings,
  );
  view.row.addEventListener('click', () => {
    context.dispatch({ type: 'exchange/select', exchangeId });
    list.focus();
  });
  return view;
}

function fillRowView(view: RowView, { exchange, modelName, selected, active }: RowModel): void {
  const { row } = view;
  row.className = `row exchange status-${exchange.status}${selected ? ' selected' : ''}${active ? ' active' : ''}${exchange.warningCount > 0 ? ' has-warnings' : ''}`;
  row.setAttribute('id', rowId(exchange));
  row.setAttribute('role', 'option');
  row.setAttribute('aria-selected', String(selected));
  row.setAttribute('aria-label', describeExchange(exchange));
  view.time.textContent = formatTime(exchange.startedAt);
  view.time.setAttribute('title', exchange.startedAt);
  view.kindBadge.className = `badge kind-${exchange.roundTrip.kind}`;
  view.kindBadge.textContent = kindCellText(exchange);
  view.kindBadge.setAttribute('title', exchange.roundTrip.text);
  view.model.textContent = modelName;
  view.model.setAttribute('title', exchange.upstreamModel === exchange.model ? exchange.model : `${exchange.model} → ${exchange.upstreamModel}`);
  view.mode.textContent = exchange.stream ? 'stream' : 'json';
  view.statusBadge.className = `badge status-${exchange.status}`;
  view.statusBadge.textContent = exchange.status;
  view.statusBadge.setAttribute('title', statusText(exchange));
  view.duration.textContent = durationText(exchange);
  view.ttft.textContent = formatMilliseconds(exchange.firstTokenMs);
  view.tokens.textContent = `${formatTokens(exchange.inputTokens)} / ${formatTokens(exchange.outputTokens)}`;
  view.calls.textContent = `${exchange.liftedCallCount} + ${exchange.functionCallCount}`;
  view.calls.setAttribute('title', describeCallsCell(exchange));
  view.warnings.className = `cell-warnings${exchange.warningCount > 0 ? ' warn' : ''}`;
  view.warnings.textContent = String(exchange.warningCount);
}

export interface TrafficList {
  /** The list pane: column header, rows and the empty message. */
  readonly root: HTMLElement;
  render(state: PanelState): KeyedListPatch;
}

export function createTrafficList(context: PanelContext): TrafficList {
  const list = element('div', { className: 'list', attributes: { id: 'list', role: 'listbox', tabindex: '0', 'aria-label': 'Round trips' } });
  const emptyMessage = element('p', { className: 'empty', attributes: { id: 'empty' } });
  const root = element(
    'section',
    { className: 'list-pane', attributes: { 'aria-label': 'Round trips' } },
    element('div', { className: 'row list-header', attributes: { 'aria-hidden': 'true' } }, ...COLUMNS.map(([className, label, title]) => element('span', { className, text: label, attributes: { title } }))),
    list,
    emptyMessage,
  );
  const views = new Map<string, RowView>();
  let shown: { order: string[]; items: Map<string, RowModel> } = { order: [], items: new Map() };
  /** Rows of running round trips: their duration cell counts up every second. */
  let running: RowModel[] = [];

  const render = (state: PanelState): KeyedListPatch => {
    const visible = selectVisibleExchanges(state);
    const modelNames = shortModelNames(state.exchanges.map((exchange) => exchange.model));
    const models = visible.map(
      (exchange): RowModel => ({ exchange, modelName: modelNames.get(exchange.model) ?? exchange.model, selected: exchange.id === state.ui.selectedId, active: exchange.id === state.ui.activeId }),
    );
    const patch = diffKeyedList(shown, models, (model) => model.exchange.id, isRowUnchanged);
    for (const key of patch.removed) {
      views.get(key)?.row.remove();
      views.delete(key);
    }
    const byKey = new Map(models.map((model) => [model.exchange.id, model]));
    for (const key of patch.added) {
      const view = createRowView(key, context, list);
      views.set(key, view);
    }
    for (const key of [...patch.added, ...patch.updated]) {
      const view = views.get(key);
      const model = byKey.get(key);
      if (view && model) fillRowView(view, model);
    }
    for (const { key, before } of patch.placements) {
      const row = views.get(key)?.row;
      if (row) list.insertBefore(row, before === null ? null : (views.get(before)?.row ?? null));
    }
    shown = { order: models.map((model) => model.exchange.id), items: byKey };
    running = models.filter((model) => model.exchange.status === 'running');

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
    return patch;
  };

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
      context.dispatch({ type: 'cursor/move', to: move });
      return;
    }
    const ui = context.getState().ui;
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      if (ui.activeId === null) context.dispatch({ type: 'cursor/move', to: 'first' });
      const activeId = context.getState().ui.activeId;
      if (activeId !== null) context.dispatch({ type: 'exchange/select', exchangeId: activeId });
      return;
    }
    if (event.key === 'Escape' && ui.selectedId !== null) {
      event.preventDefault();
      context.dispatch({ type: 'exchange/select', exchangeId: null });
    }
  });
  list.addEventListener('focus', () => {
    // Focus lands on the list: put the cursor somewhere visible so screen readers announce a row.
    const state = context.getState();
    if (state.ui.activeId === null || !selectVisibleExchanges(state).some((exchange) => exchange.id === state.ui.activeId)) context.dispatch({ type: 'cursor/move', to: 'first' });
  });

  // Running round trips show their elapsed time, refreshed every second without a render.
  setInterval(() => {
    for (const { exchange } of running) {
      const cell = views.get(exchange.id)?.duration;
      if (cell) cell.textContent = durationText(exchange);
    }
  }, 1000);

  return { root, render };
}
