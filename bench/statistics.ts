/** Percentiles and summaries of timing samples (milliseconds). */

export interface Summary {
  count: number;
  mean: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Linear interpolation between the two nearest ranks (the "R-7" definition spreadsheets use). */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * fraction;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const lowerValue = sorted[lower] as number;
  const upperValue = sorted[upper] as number;
  return lowerValue + (upperValue - lowerValue) * (position - lower);
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((left, right) => left - right);
  const total = sorted.reduce((sum, value) => sum + value, 0);
  return {
    count: sorted.length,
    mean: sorted.length > 0 ? total / sorted.length : Number.NaN,
    min: sorted[0] ?? Number.NaN,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** Rounds every number in a summary for the JSON report (microsecond precision is plenty). */
export function roundSummary(summary: Summary, digits = 3): Summary {
  const factor = 10 ** digits;
  const round = (value: number): number => Math.round(value * factor) / factor;
  return {
    count: summary.count,
    mean: round(summary.mean),
    min: round(summary.min),
    p50: round(summary.p50),
    p90: round(summary.p90),
    p99: round(summary.p99),
    max: round(summary.max),
  };
}

/**
 * The order of three sides for iteration (or round) `index`. Each order is followed by its reverse, so
 * over every two iterations each side sits on average in the middle and each side of any two goes
 * first as often as the other; six iterations run all six orders once.
 */
export function threeSideOrder<Side>(sides: readonly [Side, Side, Side], index: number): readonly [Side, Side, Side] {
  const [a, b, c] = sides;
  const orders: ReadonlyArray<readonly [Side, Side, Side]> = [
    [a, b, c],
    [c, b, a],
    [b, c, a],
    [a, c, b],
    [c, a, b],
    [b, a, c],
  ];
  return orders[index % orders.length] as readonly [Side, Side, Side];
}
