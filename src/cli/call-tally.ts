import { addCallOutcomeCounts, countCallOutcomes, emptyCallOutcomeCounts, formatCallOutcomeLine, totalCallOutcomes, type CallOutcomeCounts } from '../core/traffic/call-outcome-tally.ts';
import type { TrafficListener } from '../core/traffic/traffic-event.ts';

/**
 * The terminal's per-model tally: after each round trip with tool calls, the running counts for its
 * model as one line, so a user trying models or `--grammar-repair` sees how each one's calls land.
 * A traffic listener, so `serve` only has to pass it to the bridge next to its other listeners.
 */
export function createCallTallyListener(write: (line: string) => void): TrafficListener {
  const modelByExchange = new Map<string, string>();
  const perModel = new Map<string, CallOutcomeCounts>();
  return (event) => {
    if (event.type === 'exchange-start') {
      modelByExchange.set(event.exchangeId, event.upstreamModel || event.model);
      return;
    }
    if (event.type !== 'exchange-end') return;
    const model = modelByExchange.get(event.exchangeId) ?? '';
    modelByExchange.delete(event.exchangeId);
    const counts = countCallOutcomes(event.output, event.warnings);
    if (totalCallOutcomes(counts) === 0) return;
    const running = perModel.get(model) ?? emptyCallOutcomeCounts();
    addCallOutcomeCounts(running, counts);
    perModel.set(model, running);
    write(`${formatCallOutcomeLine(model, running)}\n`);
  };
}
