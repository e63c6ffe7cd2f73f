import type { ExchangeSummary } from '../src/shared/webview-protocol.ts';
import { plural } from './traffic-panel-format.ts';
import { shortModelNames } from './traffic-panel-model-name.ts';

/*
 * How each model's tool calls arrived, over the round trips the panel holds: valid as written,
 * repaired by the bridge, delivered with a warning, refused, left as text by the engine. Lets a user compare models and settings
 * at a glance; the rows say which round trip each count came from.
 */

type Outcomes = ExchangeSummary['callOutcomes'];

/** The hover text of the list's Calls header: what the two numbers of "1 + 0" are. */
export const CALLS_COLUMN_TITLE =
  'Tool calls the model made in this round trip: custom tool calls lifted back to Codex (apply_patch, exec …) + function calls passed through as they are. Hover a row for how its calls arrived; the line at the top sums them per model.';

function totalOutcomes(outcomes: Outcomes): number {
  return outcomes.valid + outcomes.repaired + outcomes.warned + outcomes.refused + outcomes.leftAsText;
}

export function describeCallOutcomes(outcomes: Outcomes): string {
  return `${outcomes.valid} valid, ${outcomes.repaired} repaired, ${outcomes.warned} with a warning, ${outcomes.refused} refused, ${outcomes.leftAsText} left as text`;
}

/** The hover text of one row's Calls cell. */
export function describeCallsCell(exchange: Pick<ExchangeSummary, 'liftedCallCount' | 'functionCallCount' | 'callOutcomes'>): string {
  const counts = `${plural(exchange.liftedCallCount, 'custom tool call')} lifted + ${plural(exchange.functionCallCount, 'function call')}`;
  const outcomes = exchange.callOutcomes;
  const judged = totalOutcomes(outcomes) > 0;
  return judged ? `${counts}: ${describeCallOutcomes(outcomes)}` : counts;
}

export function describeCallTally(exchanges: readonly ExchangeSummary[]): string {
  const perModel = new Map<string, Outcomes>();
  for (const exchange of exchanges) {
    const outcomes = exchange.callOutcomes;
    if (totalOutcomes(outcomes) === 0) continue;
    const model = exchange.model || 'unknown model';
    const running = perModel.get(model) ?? { valid: 0, repaired: 0, warned: 0, refused: 0, leftAsText: 0 };
    running.valid += outcomes.valid;
    running.repaired += outcomes.repaired;
    running.warned += outcomes.warned;
    running.refused += outcomes.refused;
    running.leftAsText += outcomes.leftAsText;
    perModel.set(model, running);
  }
  const names = shortModelNames(perModel.keys());
  return [...perModel].map(([model, counts]) => `${names.get(model) ?? model}: ${describeCallOutcomes(counts)}`).join(' · ');
}
