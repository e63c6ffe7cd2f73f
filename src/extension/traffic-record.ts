import type { ResponsesOutputItem, ResponsesUsage } from '../core/responses/responses-output.ts';
import type { BridgeWarning } from '../core/warnings.ts';
import { TEXT_VIEW_LIMIT, type ExchangeSummary, type OutputItemView, type TextView, type ToolView } from '../shared/webview-protocol.ts';
import { stringBytes, type StoredRequest } from './traffic-request-pool.ts';

/* One round trip as the traffic store keeps it, and what every part of the store reads from it. */

/** Per-object overhead added to the byte estimate of retained items and warnings. */
const OBJECT_OVERHEAD_BYTES = 64;

export interface ExchangeRecord {
  summary: ExchangeSummary;
  tools: ToolView[];
  toolChoice: { original: string; sent: string; rewritten: boolean } | null;
  inputItems: number | null;
  backendUrl: string | null;
  request: StoredRequest | null;
  items: ResponsesOutputItem[];
  warnings: BridgeWarning[];
  usage: ResponsesUsage | null;
  /** Bytes of the head, items and warnings (pooled fragments are counted in the pool). */
  ownBytes: number;
  /** The bodies were dropped to keep within the byte budget. */
  evicted: boolean;
}

export function toTextView(text: string): TextView {
  return text.length <= TEXT_VIEW_LIMIT ? { text, totalLength: text.length, truncated: false } : { text: text.slice(0, TEXT_VIEW_LIMIT), totalLength: text.length, truncated: true };
}

export function toJsonText(value: unknown): string {
  return JSON.stringify(value ?? null) ?? 'null';
}

export function estimateItemBytes(item: ResponsesOutputItem): number {
  switch (item.type) {
    case 'custom_tool_call':
      return OBJECT_OVERHEAD_BYTES + stringBytes(item.input) + stringBytes(item.name) + stringBytes(item.call_id);
    case 'function_call':
      return OBJECT_OVERHEAD_BYTES + stringBytes(item.arguments) + stringBytes(item.name) + stringBytes(item.call_id);
    case 'message':
      return OBJECT_OVERHEAD_BYTES + item.content.reduce((total, part) => total + stringBytes(part.text), 0);
    case 'reasoning':
      return OBJECT_OVERHEAD_BYTES + [...item.summary, ...item.content].reduce((total, part) => total + stringBytes(part.text), 0);
    default: {
      const unknownItem: never = item;
      return OBJECT_OVERHEAD_BYTES + stringBytes(toJsonText(unknownItem));
    }
  }
}

export function estimateWarningBytes(warning: BridgeWarning): number {
  return OBJECT_OVERHEAD_BYTES + stringBytes(warning.detail) + stringBytes(warning.raw) + stringBytes(warning.tool) + stringBytes(warning.callId);
}

/** The text of an item: a lifted input or arguments verbatim, a message's or reasoning's text joined. */
export function itemText(item: ResponsesOutputItem): string {
  switch (item.type) {
    case 'custom_tool_call':
      return item.input;
    case 'function_call':
      return item.arguments;
    case 'message':
      return item.content.map((part) => part.text).join('');
    case 'reasoning':
      return [...item.summary, ...item.content].map((part) => part.text).join('\n');
    default: {
      const unknownItem: never = item;
      return toJsonText(unknownItem);
    }
  }
}

export function toItemView(item: ResponsesOutputItem, index: number): OutputItemView {
  switch (item.type) {
    case 'custom_tool_call':
      return { kind: 'custom_tool_call', index, name: item.name, namespace: item.namespace ?? null, callId: item.call_id, input: toTextView(item.input), status: item.status };
    case 'function_call':
      return { kind: 'function_call', index, name: item.name, namespace: item.namespace ?? null, callId: item.call_id, arguments: toTextView(item.arguments), status: item.status };
    case 'message':
      return { kind: 'message', index, text: toTextView(itemText(item)), status: item.status };
    case 'reasoning':
      return { kind: 'reasoning', index, text: toTextView(itemText(item)) };
    default: {
      const unknownItem: never = item;
      throw new Error(`unknown output item ${toJsonText(unknownItem)}`);
    }
  }
}

export function callIdOf(item: ResponsesOutputItem): string | null {
  return item.type === 'custom_tool_call' || item.type === 'function_call' ? item.call_id : null;
}

export function redactItem(item: ResponsesOutputItem, redactText: (text: string) => string): ResponsesOutputItem {
  switch (item.type) {
    case 'custom_tool_call':
      return { ...item, input: redactText(item.input) };
    case 'function_call':
      return { ...item, arguments: redactText(item.arguments) };
    case 'message':
      return { ...item, content: item.content.map((part) => ({ ...part, text: redactText(part.text) })) };
    case 'reasoning':
      return {
        ...item,
        summary: item.summary.map((part) => ({ ...part, text: redactText(part.text) })),
        content: item.content.map((part) => ({ ...part, text: redactText(part.text) })),
      };
    default: {
      const unknownItem: never = item;
      return unknownItem;
    }
  }
}
