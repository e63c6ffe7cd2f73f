import type { ExchangeSummary } from '../src/shared/webview-protocol.ts';

/* How the panel writes times, sizes and counts: pure, shared by the list and the detail. */

export function formatMilliseconds(value: number | null): string {
  if (value === null) return '–';
  return value < 1000 ? `${value} ms` : `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`;
}

export function formatBytes(value: number | null): string {
  if (value === null) return '–';
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KB`;
  return `${(value / 1024 / 1024).toFixed(1)} MB`;
}

export function formatTime(iso: string, withMilliseconds = false): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0');
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  return withMilliseconds ? `${time}.${pad(date.getMilliseconds(), 3)}` : time;
}

export function formatTokens(value: number | null): string {
  return value === null ? '–' : String(value);
}

export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

export function statusText(exchange: ExchangeSummary): string {
  return exchange.httpStatus === null ? exchange.status : `${exchange.status} ${exchange.httpStatus}`;
}

function elapsedSince(exchange: ExchangeSummary): number {
  const started = Date.parse(exchange.startedAt);
  return Number.isNaN(started) ? 0 : Math.max(0, Date.now() - started);
}

export function durationText(exchange: ExchangeSummary): string {
  return exchange.status === 'running' ? `${formatMilliseconds(elapsedSince(exchange))}…` : formatMilliseconds(exchange.durationMs);
}
