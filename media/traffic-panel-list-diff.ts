/*
 * Which rows of a keyed list to add, update, remove and move so that the list shows `next`, in
 * `next`'s order: pure, so it runs in plain Node tests, and so the DOM writer only touches the rows
 * that changed. With up to 5,000 round trips, rebuilding every row on each update would be the
 * panel's main cost.
 */

/** Put the row `key` right before the row `before` (null: at the end). */
export interface ListPlacement {
  key: string;
  before: string | null;
}

export interface KeyedListPatch {
  /** Rows no longer in the list: remove them first. */
  removed: string[];
  /** Rows to create, in list order. */
  added: string[];
  /** Rows kept whose content changed: rewrite them in place. */
  updated: string[];
  /**
   * Applied in order after the removals, these insertions give the new order. Rows already in
   * place are not listed: appending or prepending one row is one placement, not a rebuild.
   */
  placements: ListPlacement[];
}

/** What the list shows now: its rows in order and what each one was drawn from. */
export interface KeyedListShown<T> {
  order: readonly string[];
  items: ReadonlyMap<string, T>;
}

export function diffKeyedList<T>(shown: KeyedListShown<T>, next: readonly T[], keyOf: (item: T) => string, isUnchanged: (before: T, after: T) => boolean): KeyedListPatch {
  const nextKeys = next.map(keyOf);
  const wanted = new Set(nextKeys);
  if (wanted.size !== nextKeys.length) throw new Error('a keyed list needs distinct keys');
  const removed = shown.order.filter((key) => !wanted.has(key));
  const added: string[] = [];
  const updated: string[] = [];
  next.forEach((item, index) => {
    const key = nextKeys[index] as string;
    const before = shown.items.get(key);
    if (before === undefined) added.push(key);
    else if (!isUnchanged(before, item)) updated.push(key);
  });
  // After the removals the list is the kept rows in their old order. Walk the new order: a row that
  // is next among the rows not yet settled stays; any other row is inserted before that one.
  const kept = shown.order.filter((key) => wanted.has(key));
  const settled = new Set<string>();
  const placements: ListPlacement[] = [];
  let cursor = 0;
  for (const key of nextKeys) {
    while (cursor < kept.length && settled.has(kept[cursor] as string)) cursor += 1;
    settled.add(key);
    if (kept[cursor] === key) {
      cursor += 1;
      continue;
    }
    placements.push({ key, before: kept[cursor] ?? null });
  }
  return { removed, added, updated, placements };
}
