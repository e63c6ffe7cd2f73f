import { addCallOutcomeCounts, emptyCallOutcomeCounts, formatCallOutcomeLine, type CallOutcomeCounts } from '../core/call-outcome-tally.ts';

/**
 * The terminal's per-model tally: after each round trip, the running counts for its model as one line,
 * so a user trying models or `--grammar-repair` sees how each one's tool calls land.
 */
export function createCallTally(write: (line: string) => void): (model: string, counts: CallOutcomeCounts) => void {
  const perModel = new Map<string, CallOutcomeCounts>();
  return (model, counts) => {
    if (counts.valid + counts.repaired + counts.warned + counts.refused === 0) return;
    const running = perModel.get(model) ?? emptyCallOutcomeCounts();
    addCallOutcomeCounts(running, counts);
    perModel.set(model, running);
    write(`${formatCallOutcomeLine(model, running)}\n`);
  };
}
