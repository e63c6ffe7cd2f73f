import { characterSetHas, findCharacterSetSample } from './character-set.ts';
import { IGNORED_TOKEN, type GrammarAutomaton } from './grammar-automaton.ts';

/*
 * Matches an input against a compiled grammar in one left-to-right pass. The automaton is run as a
 * lazily built DFA: each set of automaton states met becomes one cached state with a transition
 * table filled per character actually seen, so a multi-megabyte patch costs one table lookup per
 * character and nothing can backtrack. When the input stops matching, the live state set tells
 * exactly which tokens would have been accepted there.
 */

export type GrammarMatchResult =
  | { status: 'match' }
  | { status: 'mismatch'; mismatch: GrammarMismatch }
  /** The work budget ran out (only a pathological grammar gets here); nothing is known. */
  | { status: 'inconclusive'; reason: string };

export interface GrammarMismatch {
  /** UTF-16 offset of the reported position: the failing character, or the start of the literal it broke. */
  offset: number;
  /** 1-based. */
  line: number;
  /** 1-based, in characters (code points) from the start of the line. */
  column: number;
  /** Tokens that could have continued the input there, in grammar order; "the end of the input" when it could have ended. */
  expected: string[];
  /** Innermost rule every expectation belongs to, when they share one. */
  rule: string | null;
  /** The input from `offset` to the end of its line, shortened. */
  found: string;
  /** The input ran out: it is a valid beginning that stops too early. */
  endOfInput: boolean;
  /** With `endOfInput`: the shortest text that would make the input match, when it is short. */
  completion: string | null;
}

export interface GrammarMatcher {
  match(input: string): GrammarMatchResult;
}

interface DeterministicState {
  /** Sorted automaton states, closed under empty transitions. */
  readonly states: readonly number[];
  readonly accepting: boolean;
  /** Transitions for ASCII characters (`undefined`: not computed yet, `null`: no way on). */
  readonly ascii: Array<DeterministicState | null | undefined>;
  readonly others: Map<number, DeterministicState | null>;
}

/** Cached DFA states and transitions per matcher; past them steps are computed on the fly, so memory stays bounded. */
const MAX_CACHED_STATES = 2_000;
const MAX_CACHED_TRANSITIONS = 500_000;
/**
 * Automaton states visited while computing transitions in one match. Codex's grammars visit a few
 * dozen per new (state, character) pair, so even a patch full of distinct CJK characters stays far
 * below; a grammar whose state sets run into the thousands stops here instead of taking minutes.
 */
const BASE_WORK_BUDGET = 2_000_000;
const WORK_BUDGET_PER_CHARACTER = 2;
const MAX_COMPLETION_LENGTH = 80;
const MAX_FOUND_LENGTH = 60;
const MAX_EXPECTED_SHOWN = 8;

export function createGrammarMatcher(automaton: GrammarAutomaton): GrammarMatcher {
  const stateCount = automaton.sets.length;
  // Per-matcher scratch space for closures (the matcher is the owner; nothing is module-level).
  const marks = new Uint32Array(stateCount);
  let markStamp = 0;
  const cache = new Map<string, DeterministicState>();
  let work = 0;
  let cachedTransitions = 0;

  const closeOver = (seeds: readonly number[]): number[] => {
    markStamp += 1;
    if (markStamp === 0xffffffff) {
      marks.fill(0);
      markStamp = 1;
    }
    const result: number[] = [];
    const stack = [...seeds];
    while (stack.length > 0) {
      const state = stack.pop() as number;
      if (marks[state] === markStamp) continue;
      marks[state] = markStamp;
      result.push(state);
      for (const next of automaton.empties[state] as readonly number[]) if (marks[next] !== markStamp) stack.push(next);
    }
    work += result.length;
    return result.sort((left, right) => left - right);
  };

  const createState = (states: number[]): DeterministicState => {
    const key = states.join(',');
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const state: DeterministicState = {
      states,
      accepting: states.includes(automaton.accept),
      ascii: new Array<DeterministicState | null | undefined>(128),
      others: new Map(),
    };
    if (cache.size < MAX_CACHED_STATES) cache.set(key, state);
    return state;
  };

  const step = (from: DeterministicState, codePoint: number): DeterministicState | null => {
    const seeds: number[] = [];
    for (const state of from.states) {
      const set = automaton.sets[state];
      if (set && characterSetHas(set, codePoint)) seeds.push(automaton.targets[state] as number);
    }
    work += from.states.length;
    const next = seeds.length === 0 ? null : createState(closeOver(seeds));
    // States past the cache limit are not registered; caching their transitions would grow memory without bound.
    if (cache.size < MAX_CACHED_STATES && cachedTransitions < MAX_CACHED_TRANSITIONS) {
      cachedTransitions += 1;
      if (codePoint < 128) from.ascii[codePoint] = next;
      else from.others.set(codePoint, next);
    }
    return next;
  };

  const startState = createState(closeOver([automaton.start]));

  return {
    match(input) {
      work = 0;
      const budget = BASE_WORK_BUDGET + WORK_BUDGET_PER_CHARACTER * input.length;
      let state = startState;
      let index = 0;
      const length = input.length;
      while (index < length) {
        let codePoint = input.charCodeAt(index);
        let width = 1;
        if (codePoint >= 0xd800 && codePoint <= 0xdbff && index + 1 < length) {
          const low = input.charCodeAt(index + 1);
          if (low >= 0xdc00 && low <= 0xdfff) {
            codePoint = (codePoint - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
            width = 2;
          }
        }
        let next = codePoint < 128 ? state.ascii[codePoint] : state.others.get(codePoint);
        if (next === undefined) {
          next = step(state, codePoint);
          if (work > budget) return { status: 'inconclusive', reason: 'the grammar is too expensive to check on this input' };
        }
        if (next === null) return { status: 'mismatch', mismatch: describeFailure(automaton, input, index, state.states, state.accepting) };
        state = next;
        index += width;
      }
      if (state.accepting) return { status: 'match' };
      return { status: 'mismatch', mismatch: describeFailure(automaton, input, length, state.states, false) };
    },
  };
}

function describeFailure(automaton: GrammarAutomaton, input: string, failedAt: number, states: readonly number[], couldEnd: boolean): GrammarMismatch {
  const endOfInput = failedAt === input.length;
  let characterStates = states.filter((state) => automaton.sets[state] !== null);
  if (endOfInput) {
    // At the end, an open `[^\n]*` loop is always "expected" and says nothing; the tokens that close it do.
    const closing = characterStates.filter((state) => !(automaton.sets[state]?.negated ?? false));
    if (closing.length > 0) characterStates = closing;
  }
  // `%ignore` text may stand anywhere, so naming it as an expectation says nothing.
  const meaningful = characterStates.filter((state) => automaton.labels[state]?.token !== IGNORED_TOKEN);
  if (meaningful.length > 0) characterStates = meaningful;
  const expected: string[] = [];
  const rules = new Set<string | null>();
  const offsets = new Set<number>();
  for (const state of characterStates) {
    const label = automaton.labels[state] ?? null;
    const token = label?.token ?? '(a character)';
    if (!expected.includes(token)) expected.push(token);
    rules.add(label?.rule ?? null);
    offsets.add(label?.offset ?? -1);
  }
  if (couldEnd) expected.push('the end of the input');

  // Every expectation is the same character of a literal (`*** Add File: ` / `*** Update File: ` …
  // after `*** `): point at the literal's start, so the message shows the whole line that broke it.
  let offset = failedAt;
  const [onlyOffset] = offsets;
  if (!couldEnd && offsets.size === 1 && onlyOffset !== undefined && onlyOffset > 0) offset = failedAt - onlyOffset;

  const lineStart = input.lastIndexOf('\n', offset - 1) + 1;
  let line = 1;
  for (let index = input.indexOf('\n'); index !== -1 && index < offset; index = input.indexOf('\n', index + 1)) line += 1;
  const column = countCodePoints(input, lineStart, offset) + 1;
  const lineEnd = input.indexOf('\n', offset);
  const rest = input.slice(offset, lineEnd === -1 ? input.length : lineEnd);
  const found = rest.length > MAX_FOUND_LENGTH ? `${Array.from(rest.slice(0, MAX_FOUND_LENGTH + 1)).slice(0, MAX_FOUND_LENGTH).join('')}…` : rest;
  const [onlyRule] = rules;
  return {
    offset,
    line,
    column,
    expected,
    rule: rules.size === 1 && onlyRule !== undefined ? onlyRule : null,
    found,
    endOfInput,
    completion: endOfInput ? findShortestCompletion(automaton, states) : null,
  };
}

function countCodePoints(text: string, start: number, end: number): number {
  let count = 0;
  for (let index = start; index < end; index += 1) {
    const code = text.charCodeAt(index);
    // A low surrogate after a high one is the second half of one character.
    if (!(code >= 0xdc00 && code <= 0xdfff && index > start && isHighSurrogate(text.charCodeAt(index - 1)))) count += 1;
  }
  return count;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Breadth-first over the automaton (empty moves cost nothing, characters one): the shortest way to an accepting state. */
function findShortestCompletion(automaton: GrammarAutomaton, from: readonly number[]): string | null {
  const distance = new Map<number, number>();
  const previous = new Map<number, { state: number; character: string }>();
  // Layer by layer: `current` holds the states reachable with `length` characters and grows while
  // empty moves are followed; character moves fill the next layer.
  let current: number[] = [];
  for (const state of from) {
    distance.set(state, 0);
    current.push(state);
  }
  for (let length = 0; length <= MAX_COMPLETION_LENGTH; length += 1) {
    const nextLayer: number[] = [];
    for (let head = 0; head < current.length; head += 1) {
      const state = current[head] as number;
      if (state === automaton.accept) return readPath(previous, state);
      for (const next of automaton.empties[state] as readonly number[]) {
        if (!distance.has(next)) {
          distance.set(next, length);
          previous.set(next, { state, character: '' });
          current.push(next);
        }
      }
      const set = automaton.sets[state];
      if (!set) continue;
      const target = automaton.targets[state] as number;
      if (distance.has(target)) continue;
      const single = !set.negated && set.classes.length === 0 ? set.ranges[0] : undefined;
      const codePoint = single !== undefined && single[0] === single[1] ? single[0] : findCharacterSetSample(set);
      if (codePoint === null) continue;
      distance.set(target, length + 1);
      previous.set(target, { state, character: String.fromCodePoint(codePoint) });
      nextLayer.push(target);
    }
    current = nextLayer;
  }
  return null;
}

function readPath(previous: Map<number, { state: number; character: string }>, end: number): string {
  const characters: string[] = [];
  let state = end;
  for (let step = previous.get(state); step !== undefined; step = previous.get(state)) {
    characters.push(step.character);
    state = step.state;
  }
  return characters.reverse().join('');
}

export function describeGrammarMismatch(mismatch: GrammarMismatch): string {
  const shown = mismatch.expected.slice(0, MAX_EXPECTED_SHOWN);
  const more = mismatch.expected.length > shown.length ? ' …' : '';
  const list = shown.length <= 1 ? (shown[0] ?? 'nothing') : `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1] as string}`;
  const rule = mismatch.rule !== null ? ` (in ${mismatch.rule})` : '';
  let found: string;
  if (!mismatch.endOfInput) found = mismatch.found === '' ? 'a line break' : JSON.stringify(mismatch.found);
  else if (mismatch.found === '') found = 'the end of the input';
  else found = `${JSON.stringify(mismatch.found)} and then the end of the input`;
  const completion = mismatch.completion !== null && mismatch.completion !== '' ? `; the shortest valid ending adds ${JSON.stringify(mismatch.completion)}` : '';
  return `line ${mismatch.line}, column ${mismatch.column}: expected ${list}${more}${rule}, found ${found}${completion}`;
}
