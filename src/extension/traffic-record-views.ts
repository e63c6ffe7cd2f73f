import { isPlainObject, parseJson } from '../core/parse-json.ts';
import type { BodyContent, BodyReference, ExchangeDetail, LoweredToolMark, WarningView } from '../shared/webview-protocol.ts';
import { callIdOf, itemText, toItemView, toJsonText, toTextView, type ExchangeRecord } from './traffic-record.ts';
import { rebuildStoredRequest } from './traffic-request-pool.ts';

/*
 * What the panel, "open as JSON", "copy" and the export read from one kept round trip. Pure reads:
 * nothing here changes a record.
 */

export function toExchangeDetail(record: ExchangeRecord): ExchangeDetail {
  const deliveredIndex = new Map<string, number>();
  record.items.forEach((item, index) => {
    const callId = callIdOf(item);
    if (callId !== null && !deliveredIndex.has(callId)) deliveredIndex.set(callId, index);
  });
  return {
    summary: { ...record.summary },
    tools: record.tools.map((tool) => ({ ...tool })),
    toolChoice: record.toolChoice,
    inputItems: record.inputItems,
    items: record.items.map(toItemView),
    warnings: record.warnings.map(
      (warning, index): WarningView => ({
        index,
        kind: warning.kind,
        tool: warning.tool,
        callId: warning.callId,
        detail: warning.detail,
        raw: warning.raw === undefined ? null : toTextView(warning.raw),
        deliveredIndex: warning.callId === null ? null : (deliveredIndex.get(warning.callId) ?? null),
      }),
    ),
    usage: record.usage ? JSON.stringify(record.usage, null, 2) : null,
    backendUrl: record.backendUrl,
  };
}

/** A body for the panel (formatted, cut at TEXT_VIEW_LIMIT). */
export function toBodyContent(record: ExchangeRecord, reference: BodyReference): BodyContent | null {
  switch (reference.kind) {
    case 'loweredRequest': {
      if (!record.request) return null;
      const value = rebuildStoredRequest(record.request);
      return { text: toTextView(JSON.stringify(value, null, 2)), loweredTools: markLoweredTools(record), toolChoice: record.toolChoice };
    }
    case 'exchange':
    case 'item':
    case 'warningRaw': {
      const text = toDocumentText(record, reference);
      return text === null ? null : { text: toTextView(text), loweredTools: null, toolChoice: null };
    }
    default: {
      const unknownReference: never = reference;
      throw new Error(`unknown body ${toJsonText(unknownReference)}`);
    }
  }
}

/** Full text for "open as JSON document": formatted JSON of the referenced body. */
export function toDocumentText(record: ExchangeRecord, reference: BodyReference): string | null {
  switch (reference.kind) {
    case 'exchange':
      return JSON.stringify(toExportValue(record), null, 2);
    case 'loweredRequest':
      return record.request ? JSON.stringify(rebuildStoredRequest(record.request), null, 2) : null;
    case 'item': {
      const item = record.items[reference.index];
      return item ? JSON.stringify(item, null, 2) : null;
    }
    case 'warningRaw': {
      const warning = record.warnings[reference.index];
      return warning ? JSON.stringify(warning, null, 2) : null;
    }
    default: {
      const unknownReference: never = reference;
      throw new Error(`unknown body ${toJsonText(unknownReference)}`);
    }
  }
}

/** Text for "copy": a lifted input, arguments or raw payload verbatim; JSON for whole bodies. */
export function toCopyText(record: ExchangeRecord, reference: BodyReference): string | null {
  if (reference.kind === 'item') {
    const item = record.items[reference.index];
    return item ? itemText(item) : null;
  }
  if (reference.kind === 'warningRaw') return record.warnings[reference.index]?.raw ?? null;
  return toDocumentText(record, reference);
}

/** One round trip as a JSON value, for the export and "open as JSON". */
export function toExportValue(record: ExchangeRecord): Record<string, unknown> {
  const parse = (text: string): unknown => {
    const parsed = parseJson(text);
    return parsed.success ? parsed.value : text;
  };
  return {
    exchange: { ...record.summary },
    backendUrl: record.backendUrl,
    inputItems: record.inputItems,
    tools: record.tools,
    toolChoice: record.toolChoice ? { original: parse(record.toolChoice.original), sent: parse(record.toolChoice.sent) } : null,
    loweredRequest: record.request ? rebuildStoredRequest(record.request) : null,
    output: record.items,
    warnings: record.warnings,
    usage: record.usage,
  };
}

function markLoweredTools(record: ExchangeRecord): LoweredToolMark[] {
  if (!record.request?.tools) return [];
  const parsed = parseJson(record.request.tools.text);
  if (!parsed.success || !Array.isArray(parsed.value)) return [];
  return parsed.value.map((tool: unknown): LoweredToolMark => {
    const wireName = wireNameOf(tool);
    const declared = record.tools.find((candidate) => candidate.wireName === wireName && candidate.disposition !== 'dropped');
    return {
      wireName: wireName ?? '?',
      name: declared?.name ?? wireName ?? '?',
      namespace: declared?.namespace ?? null,
      kind: declared?.kind ?? 'function',
      disposition: declared?.disposition ?? 'lowered',
      json: JSON.stringify(tool, null, 2),
    };
  });
}

function wireNameOf(tool: unknown): string | null {
  if (!isPlainObject(tool)) return null;
  for (const key of ['function', 'custom']) {
    const inner = tool[key];
    if (isPlainObject(inner) && typeof inner.name === 'string') return inner.name;
  }
  return null;
}
