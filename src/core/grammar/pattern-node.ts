import type { CharacterSet } from './character-set.ts';

/**
 * A regular expression as a tree, whatever it was written in (a Lark `/regexp/`, a `"literal"`, a
 * `regex`-syntax grammar). Only constructs that keep the language regular and need no backtracking
 * are representable: no anchors, lookarounds or back-references.
 */
export type PatternNode =
  | { kind: 'characters'; set: CharacterSet }
  | { kind: 'sequence'; items: PatternNode[] }
  | { kind: 'choice'; options: PatternNode[] }
  /** `max` is `Infinity` for `*`, `+` and `{n,}`. */
  | { kind: 'repeat'; item: PatternNode; min: number; max: number };

/** Python's `re` refuses nothing near this; we stop here so one `{1,100000}` cannot inflate the automaton. */
export const MAX_REPEAT_COUNT = 1000;
