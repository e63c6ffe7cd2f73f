import { itemText, type ExchangeRecord } from './traffic-record.ts';
import type { PoolEntry } from './traffic-request-pool.ts';

/* Search over the round trips the traffic store holds. */

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Ids of the round trips whose payloads contain `query` (case-insensitive), in the records' order:
 * lowered request (also matched in its JSON-escaped form, so a line break typed as such finds `\n`
 * in the JSON), lifted inputs, arguments, texts, warnings and errors. A shared history fragment is
 * searched once however many requests hold it.
 */
export function searchRecords(records: Iterable<ExchangeRecord>, query: string): string[] {
  if (query === '') return [];
  const plain = new RegExp(escapeRegExp(query), 'i');
  const escaped = JSON.stringify(query).slice(1, -1);
  const jsonPattern = escaped === query ? plain : new RegExp(`${escapeRegExp(query)}|${escapeRegExp(escaped)}`, 'i');
  const poolHits = new Map<PoolEntry, boolean>();
  const poolMatches = (entry: PoolEntry): boolean => {
    let hit = poolHits.get(entry);
    if (hit === undefined) {
      hit = jsonPattern.test(entry.text);
      poolHits.set(entry, hit);
    }
    return hit;
  };
  const matches: string[] = [];
  for (const record of records) {
    const summary = record.summary;
    const found =
      plain.test(summary.id) ||
      plain.test(summary.model) ||
      plain.test(summary.roundTrip.text) ||
      plain.test(summary.error?.message ?? '') ||
      record.items.some((item) => plain.test(itemText(item)) || ((item.type === 'custom_tool_call' || item.type === 'function_call') && plain.test(item.name))) ||
      record.warnings.some((warning) => plain.test(warning.detail) || plain.test(warning.raw ?? '') || plain.test(warning.kind)) ||
      (record.request !== null && (jsonPattern.test(record.request.head) || (record.request.tools !== null && poolMatches(record.request.tools)) || record.request.messages.some(poolMatches)));
    if (found) matches.push(summary.id);
  }
  return matches;
}
