import { countCallOutcomes, emptyCallOutcomeCounts } from '../core/traffic/call-outcome-tally.ts';
import type { ResponsesOutputItem } from '../core/responses/responses-output.ts';
import { UNLABELLED_ROUND_TRIP } from '../core/traffic/round-trip-label.ts';
import type { BridgeWarning, WarningKind } from '../core/warnings.ts';
import type { ExchangeSummary } from '../shared/webview-protocol.ts';

/* The one line per round trip the list shows: what a new one starts as, and the counts it carries. */

/** Error messages in summaries are cut here: they travel in every snapshot. */
const SUMMARY_ERROR_LIMIT = 2000;

export function createExchangeSummary(id: string, sequence: number, startedAt: string): ExchangeSummary {
  return {
    id,
    sequence,
    startedAt,
    roundTrip: { ...UNLABELLED_ROUND_TRIP },
    model: '',
    upstreamModel: '',
    stream: false,
    status: 'running',
    httpStatus: null,
    durationMs: null,
    firstTokenMs: null,
    upstreamHeadersMs: null,
    inputTokens: null,
    outputTokens: null,
    liftedCallCount: 0,
    functionCallCount: 0,
    warningCount: 0,
    warningKinds: [],
    toolNames: [],
    callOutcomes: emptyCallOutcomeCounts(),
    error: null,
    requestBytes: 0,
    loweredRequestBytes: null,
    bodyRetained: true,
  };
}

/** Sets the summary's counts, warning kinds and tool names from the items and warnings seen so far. */
export function countOutputInto(summary: ExchangeSummary, items: readonly ResponsesOutputItem[], warnings: readonly BridgeWarning[]): void {
  summary.liftedCallCount = items.filter((item) => item.type === 'custom_tool_call').length;
  summary.functionCallCount = items.filter((item) => item.type === 'function_call').length;
  summary.warningCount = warnings.length;
  summary.warningKinds = [...new Set<WarningKind>(warnings.map((warning) => warning.kind))];
  const names = new Set<string>();
  for (const item of items) if (item.type === 'custom_tool_call' || item.type === 'function_call') names.add(item.name);
  for (const warning of warnings) if (warning.tool) names.add(warning.tool);
  summary.toolNames = [...names];
  summary.callOutcomes = countCallOutcomes(items, warnings);
}

/** An error message fit for a summary: secrets removed, cut at a length every snapshot can carry. */
export function capSummaryError(message: string, redactText: (text: string) => string): string {
  const redacted = redactText(message);
  return redacted.length > SUMMARY_ERROR_LIMIT ? `${redacted.slice(0, SUMMARY_ERROR_LIMIT)} …` : redacted;
}
