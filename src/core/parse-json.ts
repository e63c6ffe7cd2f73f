/**
 * The one JSON entry point (style.md §4): never `JSON.parse` and cast. The raw text is kept for the
 * traffic view.
 */
export type ParseJsonResult =
  | { success: true; value: unknown; rawValue: string }
  | { success: false; error: Error; rawValue: string };

export function parseJson(text: string): ParseJsonResult {
  try {
    return { success: true, value: JSON.parse(text) as unknown, rawValue: text };
  } catch (error) {
    return { success: false, error: error instanceof Error ? error : new Error(String(error)), rawValue: text };
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether a parsed JSON value nests arrays and objects more than `limit` levels deep (a scalar is 0
 * levels, `[]` is 1). Iterative on purpose: V8's `JSON.parse` accepts any depth, but `JSON.stringify`,
 * zod and the backends' parsers recurse and overflow their stacks on what it accepts.
 */
export function exceedsJsonNestingDepth(value: unknown, limit: number): boolean {
  const pending: Array<{ value: object; depth: number }> = [];
  if (typeof value === 'object' && value !== null) pending.push({ value, depth: 1 });
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.depth > limit) return true;
    const children: unknown[] = Array.isArray(next.value) ? next.value : Object.values(next.value);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) pending.push({ value: child, depth: next.depth + 1 });
    }
  }
  return false;
}
