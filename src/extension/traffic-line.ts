import type { ExchangeEndEvent, ExchangeRejectedEvent } from '../core/traffic/traffic-event.ts';

/**
 * One plain-text line per finished exchange, for the status bar tooltip and the extension's test
 * API. The traffic panel renders the structured events instead.
 */
export function formatTrafficLine(event: ExchangeEndEvent | ExchangeRejectedEvent): string {
  if (event.type === 'exchange-rejected') {
    return `${event.startedAt}  ${event.exchangeId}  rejected ${event.httpStatus}: ${event.error.message}`;
  }
  const seconds = event.timings.totalMs === null ? '?' : (event.timings.totalMs / 1000).toFixed(1);
  const calls = event.output.filter((item) => item.type === 'custom_tool_call' || item.type === 'function_call').length;
  const parts = [`${event.outcome} ${event.httpStatus}`, `${seconds} s`, `${event.output.length} items`, `${calls} tool calls`];
  if (event.warnings.length > 0) parts.push(`${event.warnings.length} warnings (${[...new Set(event.warnings.map((warning) => warning.kind))].join(', ')})`);
  if (event.error) parts.push(`error ${event.error.code}: ${event.error.message}`);
  return `${new Date().toISOString()}  ${event.exchangeId}  ${event.roundTrip.text}  ${parts.join(', ')}`;
}
