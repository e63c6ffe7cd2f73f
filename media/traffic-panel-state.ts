import type {
  BodyContent,
  ExchangeDetail,
  ExchangeStatus,
  ExchangeSummary,
  HostToWebviewMessage,
  RoundTripKind,
  TrafficStats,
} from '../src/shared/webview-protocol.ts';

/*
 * The traffic panel's state and its pure reducer: no DOM here, so it runs in plain Node tests.
 * Only `ui` survives a reload (webview getState/setState); the rest comes back with the host's
 * snapshot. Type-only imports from the protocol keep zod out of the browser bundle.
 */

export type ListOrder = 'newest-first' | 'newest-last';
export type StatusFilter = 'all' | ExchangeStatus;

export const STATUS_FILTERS: readonly StatusFilter[] = ['all', 'running', 'completed', 'incomplete', 'failed', 'rejected', 'aborted'];

export type KindFilter = 'all' | RoundTripKind;

/** What a round trip is for Codex (from its `x-codex-turn-metadata` header), for the kind filter. */
export const KIND_FILTERS: readonly KindFilter[] = ['all', 'turn', 'compaction', 'subagent', 'unlabelled'];

/** What the user chose; persisted with setState. */
export interface PanelUiState {
  order: ListOrder;
  warningsOnly: boolean;
  /** Tool name to show round trips for; '' = every tool. */
  toolFilter: string;
  statusFilter: StatusFilter;
  /** Turns, compactions or sub-agents' round trips only; 'all' = every kind. */
  kindFilter: KindFilter;
  /** Text searched in payloads (by the host); '' = no search. */
  query: string;
  /** The list is frozen; updates wait in `pending`. */
  paused: boolean;
  /** The round trip opened in the detail pane. */
  selectedId: string | null;
  /** The list row the keyboard cursor is on. */
  activeId: string | null;
  /** Mark spaces, tabs and line ends in payloads. */
  showWhitespace: boolean;
}

export interface PanelState {
  ui: PanelUiState;
  /** The host's snapshot has arrived. */
  connected: boolean;
  /** Round trips shown, oldest first (by sequence). */
  exchanges: ExchangeSummary[];
  /** Updates that arrived while paused, latest per round trip. */
  pending: ExchangeSummary[];
  stats: TrafficStats | null;
  /** Detail of `ui.selectedId`, once the host sent it. */
  detail: ExchangeDetail | null;
  /** The lowered request body of the selected round trip, once asked for. */
  loweredRequest: { exchangeId: string; content: BodyContent | null } | null;
  /** Ids the host found for `ui.query`; null while no search is active or the answer is pending. */
  searchMatches: string[] | null;
  notice: { level: 'info' | 'error'; message: string } | null;
}

export type PanelAction =
  | { type: 'host'; message: HostToWebviewMessage }
  | { type: 'order/toggle' }
  | { type: 'filter/warnings/set'; warningsOnly: boolean }
  | { type: 'filter/tool/set'; tool: string }
  | { type: 'filter/status/set'; status: StatusFilter }
  | { type: 'filter/kind/set'; kind: KindFilter }
  | { type: 'query/set'; query: string }
  | { type: 'pause/toggle' }
  | { type: 'exchange/select'; exchangeId: string | null }
  | { type: 'cursor/move'; to: 'next' | 'previous' | 'first' | 'last' | 'page-down' | 'page-up' }
  | { type: 'cursor/set'; exchangeId: string }
  | { type: 'whitespace/toggle' }
  | { type: 'notice/clear' };

const PAGE_SIZE = 10;

export const DEFAULT_UI_STATE: PanelUiState = {
  order: 'newest-first',
  warningsOnly: false,
  toolFilter: '',
  statusFilter: 'all',
  kindFilter: 'all',
  query: '',
  paused: false,
  selectedId: null,
  activeId: null,
  showWhitespace: true,
};

/** Reads what setState stored; anything malformed falls back to the defaults field by field. */
export function restoreUiState(saved: unknown): PanelUiState {
  if (typeof saved !== 'object' || saved === null) return { ...DEFAULT_UI_STATE };
  const value = saved as Partial<Record<keyof PanelUiState, unknown>>;
  const stringOrNull = (field: unknown): string | null => (typeof field === 'string' ? field : null);
  return {
    order: value.order === 'newest-last' ? 'newest-last' : 'newest-first',
    warningsOnly: value.warningsOnly === true,
    toolFilter: typeof value.toolFilter === 'string' ? value.toolFilter : '',
    statusFilter: STATUS_FILTERS.find((status) => status === value.statusFilter) ?? 'all',
    kindFilter: KIND_FILTERS.find((kind) => kind === value.kindFilter) ?? 'all',
    query: typeof value.query === 'string' ? value.query : '',
    paused: value.paused === true,
    selectedId: stringOrNull(value.selectedId),
    activeId: stringOrNull(value.activeId),
    showWhitespace: value.showWhitespace !== false,
  };
}

export function createInitialState(saved?: unknown): PanelState {
  return {
    ui: restoreUiState(saved),
    connected: false,
    exchanges: [],
    pending: [],
    stats: null,
    detail: null,
    loweredRequest: null,
    searchMatches: null,
    notice: null,
  };
}

function upsertInto(list: readonly ExchangeSummary[], exchange: ExchangeSummary): ExchangeSummary[] {
  const index = list.findIndex((candidate) => candidate.id === exchange.id);
  if (index === -1) return [...list, exchange].sort((left, right) => left.sequence - right.sequence);
  const next = [...list];
  next[index] = exchange;
  return next;
}

function reduceHostMessage(state: PanelState, message: HostToWebviewMessage): PanelState {
  switch (message.type) {
    case 'traffic/snapshot': {
      const exchanges = [...message.exchanges].sort((left, right) => left.sequence - right.sequence);
      const known = new Set(exchanges.map((exchange) => exchange.id));
      const selectedId = state.ui.selectedId !== null && known.has(state.ui.selectedId) ? state.ui.selectedId : null;
      const activeId = state.ui.activeId !== null && known.has(state.ui.activeId) ? state.ui.activeId : null;
      return {
        ...state,
        connected: true,
        exchanges,
        pending: [],
        stats: message.stats,
        ui: { ...state.ui, selectedId, activeId },
        detail: selectedId === null ? null : state.detail,
        loweredRequest: selectedId === null ? null : state.loweredRequest,
        searchMatches: state.searchMatches?.filter((id) => known.has(id)) ?? null,
      };
    }
    case 'traffic/exchange/upsert':
      if (state.ui.paused) return { ...state, pending: upsertInto(state.pending, message.exchange), stats: message.stats };
      return { ...state, exchanges: upsertInto(state.exchanges, message.exchange), stats: message.stats };
    case 'traffic/exchange/remove': {
      const removed = new Set(message.exchangeIds);
      const selectedGone = state.ui.selectedId !== null && removed.has(state.ui.selectedId);
      return {
        ...state,
        exchanges: state.exchanges.filter((exchange) => !removed.has(exchange.id)),
        pending: state.pending.filter((exchange) => !removed.has(exchange.id)),
        stats: message.stats,
        ui: {
          ...state.ui,
          selectedId: selectedGone ? null : state.ui.selectedId,
          activeId: state.ui.activeId !== null && removed.has(state.ui.activeId) ? null : state.ui.activeId,
        },
        detail: selectedGone ? null : state.detail,
        loweredRequest: selectedGone ? null : state.loweredRequest,
        searchMatches: state.searchMatches?.filter((id) => !removed.has(id)) ?? null,
      };
    }
    case 'traffic/exchange/detail':
      // A late answer for a round trip the user has left is dropped.
      if (message.exchangeId !== state.ui.selectedId) return state;
      return { ...state, detail: message.detail };
    case 'traffic/body/show':
      if (message.body.kind !== 'loweredRequest' || message.body.exchangeId !== state.ui.selectedId) return state;
      return { ...state, loweredRequest: { exchangeId: message.body.exchangeId, content: message.content } };
    case 'traffic/search/result':
      if (message.query !== state.ui.query.trim()) return state;
      return { ...state, searchMatches: message.exchangeIds };
    case 'traffic/notice/show':
      return { ...state, notice: { level: message.level, message: message.message } };
    default: {
      const unknownMessage: never = message;
      return unknownMessage;
    }
  }
}

function moveCursor(state: PanelState, to: Extract<PanelAction, { type: 'cursor/move' }>['to']): PanelState {
  const visible = selectVisibleExchanges(state);
  if (visible.length === 0) return state;
  const current = visible.findIndex((exchange) => exchange.id === state.ui.activeId);
  const last = visible.length - 1;
  let index: number;
  switch (to) {
    case 'first':
      index = 0;
      break;
    case 'last':
      index = last;
      break;
    case 'next':
      index = current === -1 ? 0 : Math.min(last, current + 1);
      break;
    case 'previous':
      index = current === -1 ? 0 : Math.max(0, current - 1);
      break;
    case 'page-down':
      index = current === -1 ? 0 : Math.min(last, current + PAGE_SIZE);
      break;
    case 'page-up':
      index = current === -1 ? 0 : Math.max(0, current - PAGE_SIZE);
      break;
    default: {
      const unknownMove: never = to;
      return unknownMove;
    }
  }
  const target = visible[index];
  return target ? { ...state, ui: { ...state.ui, activeId: target.id } } : state;
}

export function reducePanelState(state: PanelState, action: PanelAction): PanelState {
  switch (action.type) {
    case 'host':
      return reduceHostMessage(state, action.message);
    case 'order/toggle':
      return { ...state, ui: { ...state.ui, order: state.ui.order === 'newest-first' ? 'newest-last' : 'newest-first' } };
    case 'filter/warnings/set':
      return { ...state, ui: { ...state.ui, warningsOnly: action.warningsOnly } };
    case 'filter/tool/set':
      return { ...state, ui: { ...state.ui, toolFilter: action.tool } };
    case 'filter/status/set':
      return { ...state, ui: { ...state.ui, statusFilter: action.status } };
    case 'filter/kind/set':
      return { ...state, ui: { ...state.ui, kindFilter: action.kind } };
    case 'query/set':
      // The host answers asynchronously; until then the previous matches would be misleading.
      return { ...state, ui: { ...state.ui, query: action.query }, searchMatches: null };
    case 'pause/toggle': {
      if (!state.ui.paused) return { ...state, ui: { ...state.ui, paused: true } };
      let exchanges = state.exchanges;
      for (const exchange of state.pending) exchanges = upsertInto(exchanges, exchange);
      return { ...state, exchanges, pending: [], ui: { ...state.ui, paused: false } };
    }
    case 'exchange/select':
      if (action.exchangeId === state.ui.selectedId) return state;
      return {
        ...state,
        ui: { ...state.ui, selectedId: action.exchangeId, activeId: action.exchangeId ?? state.ui.activeId },
        detail: null,
        loweredRequest: null,
      };
    case 'cursor/move':
      return moveCursor(state, action.to);
    case 'cursor/set':
      return { ...state, ui: { ...state.ui, activeId: action.exchangeId } };
    case 'whitespace/toggle':
      return { ...state, ui: { ...state.ui, showWhitespace: !state.ui.showWhitespace } };
    case 'notice/clear':
      return { ...state, notice: null };
    default: {
      const unknownAction: never = action;
      return unknownAction;
    }
  }
}

/** The list as shown: filters applied, in the chosen order. */
export function selectVisibleExchanges(state: PanelState): ExchangeSummary[] {
  const { warningsOnly, toolFilter, statusFilter, kindFilter, query } = state.ui;
  const matches = query.trim() !== '' && state.searchMatches !== null ? new Set(state.searchMatches) : null;
  const visible = state.exchanges.filter(
    (exchange) =>
      (!warningsOnly || exchange.warningCount > 0 || exchange.error !== null) &&
      (toolFilter === '' || exchange.toolNames.includes(toolFilter)) &&
      (statusFilter === 'all' || exchange.status === statusFilter) &&
      (kindFilter === 'all' || exchange.roundTrip.kind === kindFilter) &&
      (matches === null || matches.has(exchange.id)),
  );
  return state.ui.order === 'newest-first' ? visible.reverse() : visible;
}

/** Tool names for the tool filter, sorted; the current filter stays listed even if no round trip has it now. */
export function selectToolNames(state: PanelState): string[] {
  const names = new Set<string>();
  for (const exchange of state.exchanges) for (const name of exchange.toolNames) names.add(name);
  if (state.ui.toolFilter !== '') names.add(state.ui.toolFilter);
  return [...names].sort();
}

/** The summary of the opened round trip (fresher than its detail while it runs). */
export function selectSelectedSummary(state: PanelState): ExchangeSummary | null {
  return state.exchanges.find((exchange) => exchange.id === state.ui.selectedId) ?? state.detail?.summary ?? null;
}
