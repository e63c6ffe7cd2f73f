import { createSingleCharacterSet, type CharacterSet } from './character-set.ts';
import type { PatternNode } from './pattern-node.ts';

/*
 * A Thompson automaton over code points: every state has at most one character transition plus
 * any number of empty ones. The matcher simulates it with state sets, so no input, however
 * hostile, can make matching backtrack.
 */

/** What a character state belongs to, so a mismatch can name the token it expected. */
export interface TokenLabel {
  /** `"*** End Patch"`, `LF`, `/(.+)/` … */
  token: string;
  /** Code-unit offset of this character inside a literal token; -1 when the token is not a literal. */
  offset: number;
  /** Innermost rule the token was written in; null for regex-syntax grammars. */
  rule: string | null;
}

export interface GrammarAutomaton {
  /** Character transition of each state (null: only empty transitions leave it). */
  readonly sets: ReadonlyArray<CharacterSet | null>;
  readonly targets: readonly number[];
  readonly empties: ReadonlyArray<readonly number[]>;
  readonly labels: ReadonlyArray<TokenLabel | null>;
  readonly start: number;
  readonly accept: number;
}

export interface Fragment {
  start: number;
  end: number;
}

/** Label of text a grammar's `%ignore` allows between tokens. */
export const IGNORED_TOKEN = '%ignore';

/** Far above Codex's grammars (a few hundred states); stops a grammar that inlines to millions. */
export const MAX_AUTOMATON_STATES = 200_000;

export class AutomatonBuilder {
  private readonly sets: Array<CharacterSet | null> = [];
  private readonly targets: number[] = [];
  private readonly empties: number[][] = [];
  private readonly labels: Array<TokenLabel | null> = [];

  addState(): number {
    if (this.sets.length >= MAX_AUTOMATON_STATES) {
      throw new Error(`the grammar expands to more than ${MAX_AUTOMATON_STATES} automaton states`);
    }
    this.sets.push(null);
    this.targets.push(-1);
    this.empties.push([]);
    this.labels.push(null);
    return this.sets.length - 1;
  }

  addEmpty(from: number, to: number): void {
    (this.empties[from] as number[]).push(to);
  }

  character(set: CharacterSet, label: TokenLabel | null): Fragment {
    const start = this.addState();
    const end = this.addState();
    this.sets[start] = set;
    this.targets[start] = end;
    this.labels[start] = label;
    return { start, end };
  }

  empty(): Fragment {
    const state = this.addState();
    return { start: state, end: state };
  }

  sequence(parts: Array<() => Fragment>): Fragment {
    if (parts.length === 0) return this.empty();
    let first: Fragment | null = null;
    let previous: Fragment | null = null;
    for (const part of parts) {
      const fragment = part();
      if (previous === null) first = fragment;
      else this.addEmpty(previous.end, fragment.start);
      previous = fragment;
    }
    return { start: (first as Fragment).start, end: (previous as Fragment).end };
  }

  choice(options: Array<() => Fragment>): Fragment {
    if (options.length === 1) return (options[0] as () => Fragment)();
    const start = this.addState();
    const end = this.addState();
    for (const option of options) {
      const fragment = option();
      this.addEmpty(start, fragment.start);
      this.addEmpty(fragment.end, end);
    }
    return { start, end };
  }

  /** `build` is called once per copy the bounds need: every copy gets its own states. */
  repeat(build: () => Fragment, min: number, max: number): Fragment {
    const parts: Array<() => Fragment> = [];
    if (max === Infinity) {
      for (let count = 1; count < min; count += 1) parts.push(build);
      parts.push(() => this.loop(build, min === 0));
      return this.sequence(parts);
    }
    for (let count = 0; count < min; count += 1) parts.push(build);
    if (max > min) parts.push(() => this.optionalChain(build, max - min));
    return this.sequence(parts);
  }

  /** `x*` (skippable) or `x+`, with a single copy of `x`. */
  private loop(build: () => Fragment, skippable: boolean): Fragment {
    const start = this.addState();
    const end = this.addState();
    const body = build();
    this.addEmpty(start, body.start);
    this.addEmpty(body.end, body.start);
    this.addEmpty(body.end, end);
    if (skippable) this.addEmpty(start, end);
    return { start, end };
  }

  /** Up to `count` more copies: `(x(x(x)?)?)?`, nested so each copy is entered only after the previous one. */
  private optionalChain(build: () => Fragment, count: number): Fragment {
    const start = this.addState();
    const end = this.addState();
    this.addEmpty(start, end);
    let previousEnd = start;
    for (let index = 0; index < count; index += 1) {
      const fragment = build();
      this.addEmpty(previousEnd, fragment.start);
      this.addEmpty(fragment.end, end);
      previousEnd = fragment.end;
    }
    return { start, end };
  }

  /** A pattern tree; `label` marks every character state (a named terminal's label) or null to derive one per character. */
  pattern(node: PatternNode, label: TokenLabel | null, rule: string | null): Fragment {
    switch (node.kind) {
      case 'characters':
        return this.character(node.set, label ?? { token: describeCharacterSet(node.set), offset: -1, rule });
      case 'sequence':
        return this.sequence(node.items.map((item) => () => this.pattern(item, label, rule)));
      case 'choice':
        return this.choice(node.options.map((option) => () => this.pattern(option, label, rule)));
      case 'repeat':
        return this.repeat(() => this.pattern(node.item, label, rule), node.min, node.max);
      default: {
        const unreachable: never = node;
        return unreachable;
      }
    }
  }

  /** A literal; with `token` set, each character remembers its offset so a mismatch can point at the token's start. */
  literal(text: string, ignoreCase: boolean, label: TokenLabel | null, rule: string | null): Fragment {
    const parts: Array<() => Fragment> = [];
    let offset = 0;
    for (const character of text) {
      const characterOffset = offset;
      const codePoint = character.codePointAt(0) as number;
      const set = createSingleCharacterSet(codePoint, ignoreCase, character);
      parts.push(() => this.character(set, label ?? { token: JSON.stringify(text), offset: characterOffset, rule }));
      offset += character.length;
    }
    return this.sequence(parts);
  }

  finish(fragment: Fragment): GrammarAutomaton {
    return {
      sets: this.sets,
      targets: this.targets,
      empties: this.empties,
      labels: this.labels,
      start: fragment.start,
      accept: fragment.end,
    };
  }
}

export function describeCharacterSet(set: CharacterSet): string {
  const single = set.ranges.length === 1 && set.classes.length === 0 && !set.negated ? set.ranges[0] : undefined;
  if (single !== undefined && single[0] === single[1]) return JSON.stringify(String.fromCodePoint(single[0]));
  return set.source;
}
