import type { ExchangeSummary } from '../src/shared/webview-protocol.ts';

/*
 * How each model's tool calls arrived, over the round trips the panel holds: valid as written,
 * repaired by the bridge, delivered with a warning, refused. Lets a user compare models and settings
 * at a glance; the rows say which round trip each count came from.
 */

type Outcomes = ExchangeSummary['callOutcomes'];

export function describeCallTally(exchanges: readonly ExchangeSummary[]): string {
  const perModel = new Map<string, Outcomes>();
  for (const exchange of exchanges) {
    const outcomes = exchange.callOutcomes;
    if (outcomes.valid + outcomes.repaired + outcomes.warned + outcomes.refused === 0) continue;
    const model = exchange.model || 'unknown model';
    const running = perModel.get(model) ?? { valid: 0, repaired: 0, warned: 0, refused: 0 };
    running.valid += outcomes.valid;
    running.repaired += outcomes.repaired;
    running.warned += outcomes.warned;
    running.refused += outcomes.refused;
    perModel.set(model, running);
  }
  return [...perModel]
    .map(([model, counts]) => `${model}: ${counts.valid} valid, ${counts.repaired} repaired, ${counts.warned} with a warning, ${counts.refused} refused`)
    .join(' · ');
}
