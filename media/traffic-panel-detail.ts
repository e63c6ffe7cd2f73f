import type { BodyContent, BodyReference, ExchangeDetail, OutputItemView, ToolView, WarningView } from '../src/shared/webview-protocol.ts';
import { renderExchangeActions, renderShowLoweredRequestButton } from './traffic-panel-actions.ts';
import { button, element, type Child, type PanelContext } from './traffic-panel-dom.ts';
import { durationText, formatBytes, formatMilliseconds, formatTime, formatTokens, plural, statusText } from './traffic-panel-format.ts';
import { renderPayload, wholeText } from './traffic-panel-payload.ts';
import { selectSelectedSummary, type PanelState } from './traffic-panel-state.ts';

/*
 * The detail of the opened round trip: its figures, the lifted calls, the warnings (each linked to
 * what was delivered for its call), function calls, the backend's answer, the declared tools and,
 * on demand, the lowered Chat request.
 */

/** The round trip's figures; each term and value are grouped, so the stylesheet can set them in columns. */
function metaList(entries: Array<[string, string]>): HTMLElement {
  const list = element('dl', { className: 'meta' });
  for (const [term, value] of entries) list.append(element('div', {}, element('dt', { text: term }), element('dd', { text: value })));
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

function renderWarning(context: PanelContext, exchangeId: string, warning: WarningView, items: OutputItemView[]): HTMLElement {
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
    const payload = renderPayload(context, warning.raw, 'Raw payload', { kind: 'warningRaw', exchangeId, index: warning.index });
    // The same text is shown with the call itself: folded here, still verbatim one click away.
    if (!sameAsDelivered) return payload;
    return element('details', { className: 'same-as-delivered' }, element('summary', { text: 'Raw payload (identical to the delivered input)' }), payload);
  };
  const deliveredNote = (): HTMLElement | null => {
    if (warning.callId === null) return null;
    if (!delivered) return element('p', { className: 'delivered none', text: 'Nothing was delivered to Codex for this call.' });
    const jump = button('Show the delivered call', () => document.getElementById(`item-${delivered.index}`)?.focus(), { className: 'link' });
    if (sameAsDelivered || deliveredInput === null) return element('p', { className: 'delivered' }, `Delivered ${sameAsDelivered ? 'unchanged ' : ''}as ${describeItem(delivered)}. `, jump);
    return element('div', { className: 'delivered' }, element('p', {}, `Delivered instead as ${describeItem(delivered)}: `, jump), renderPayload(context, deliveredInput, 'Delivered input', { kind: 'item', exchangeId, index: delivered.index }));
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

function renderItem(context: PanelContext, exchangeId: string, item: OutputItemView): HTMLElement {
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
        renderPayload(context, item.input, 'Input', reference, { className: 'lifted-input' }),
      );
    case 'function_call':
      return article(
        `${item.namespace ? `${item.namespace}.` : ''}${item.name}`,
        item.status,
        element('p', { className: 'call-line' }, 'call id ', element('code', { className: 'call-id', text: item.callId })),
        renderPayload(context, item.arguments, 'Arguments', reference),
      );
    case 'message':
      return article('assistant text', item.status, renderPayload(context, item.text, 'Text', reference));
    case 'reasoning':
      return article('reasoning', null, renderPayload(context, item.text, 'Reasoning', reference));
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

function renderLoweredRequest(context: PanelContext, exchangeId: string, content: BodyContent | null): HTMLElement {
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
        renderPayload(context, wholeText(tool.json), `Tool ${tool.wireName} as sent`, null),
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
    renderPayload(context, content.text, 'Lowered Chat request', { kind: 'loweredRequest', exchangeId }),
  );
}

function renderDetail(context: PanelContext, detailPane: HTMLElement, state: PanelState): void {
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
      renderExchangeActions(context, exchangeId, summary.loweredRequestBytes !== null),
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
      ...lifted.map((item) => renderItem(context, exchangeId, item)),
    ),
    section(
      `Warnings (${detail.warnings.length})`,
      'section-warnings',
      warnings.length === 0 ? element('p', { className: 'muted', text: 'No warnings.' }) : null,
      ...warnings.map((warning) => renderWarning(context, exchangeId, warning, detail.items)),
    ),
    section(
      `Function calls (${functions.length})`,
      'section-functions',
      functions.length === 0 ? element('p', { className: 'muted', text: 'No function_call delivered.' }) : null,
      ...functions.map((item) => renderItem(context, exchangeId, item)),
    ),
    section('Backend answer', 'section-answer', texts.length === 0 ? element('p', { className: 'muted', text: 'No text or reasoning.' }) : null, ...texts.map((item) => renderItem(context, exchangeId, item)), detail.usage ? renderPayload(context, wholeText(detail.usage), 'Usage', null) : null),
    section('Incoming request', 'section-request', detail.toolChoice ? renderToolChoice(detail.toolChoice) : null, renderTools(detail.tools)),
  );
  if (summary.loweredRequestBytes !== null) {
    const loaded = state.loweredRequest?.exchangeId === exchangeId ? state.loweredRequest : null;
    children.push(
      section(
        'Lowered Chat request',
        'section-lowered',
        loaded
          ? renderLoweredRequest(context, exchangeId, loaded.content)
          : renderShowLoweredRequestButton(context, exchangeId, summary.loweredRequestBytes),
      ),
    );
  }
  detailPane.replaceChildren(...children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false));
  detailPane.scrollTop = scroll;
}


/** The detail pane; rebuilt only when what it shows changed, since rebuilding loses the reader's place. */
export function createDetailView(context: PanelContext): { readonly root: HTMLElement; render(state: PanelState): void } {
  const root = element('section', { className: 'detail', attributes: { id: 'detail', 'aria-label': 'Round trip detail', tabindex: '-1' } });
  let rendered: { detail: unknown; loweredRequest: unknown; selectedId: string | null; showWhitespace: boolean; connected: boolean } | null = null;
  const render = (state: PanelState): void => {
    const key = { detail: state.detail, loweredRequest: state.loweredRequest, selectedId: state.ui.selectedId, showWhitespace: state.ui.showWhitespace, connected: state.connected };
    if (rendered && rendered.detail === key.detail && rendered.loweredRequest === key.loweredRequest && rendered.selectedId === key.selectedId && rendered.showWhitespace === key.showWhitespace && rendered.connected === key.connected) return;
    renderDetail(context, root, state);
    rendered = key;
  };
  return { root, render };
}
