import type { CharacterClassName, CharacterSet } from './character-set.ts';
import type { ToolGrammar } from './compile-grammar.ts';
import { LARK_COMMON_TERMINALS } from './lark-common-terminals.ts';
import { parseLarkGrammar, type GrammarExpression, type LarkGrammar } from './parse-lark-grammar.ts';
import { parseGrammarRegexp } from './parse-grammar-regexp.ts';
import { MAX_REPEAT_COUNT, type PatternNode } from './pattern-node.ts';

/*
 * A custom tool's grammar as one anchored regular expression, for the JSON-Schema `pattern` of the
 * lowered function's string parameter, which an engine's tool-call grammar can then enforce while
 * the model writes. Two forms, because engines disagree on what the pattern is matched against:
 *
 * - `escaped-text`: the JSON-escaped text between the quotes (llama.cpp's JSON-argument templates,
 *   vLLM's and SGLang's JSON tool parsers on xgrammar). A newline in the value is the two characters
 *   `\n` here, a quote is `\"`. A value form sent to such an engine lets it write raw newlines: invalid
 *   JSON.
 * - `value`: the decoded string (llguidance; xgrammar's XML parameter style for Qwen3-Coder).
 *
 * Only the constructs every engine reads alike are written: `( )` groups (no `(?:`), `|`, `* + ?`,
 * `{m,n}`, `[...]` classes whose awkward members are `\xHH`/`\uHHHH` escapes, and `^…$`. No `\s \d
 * \w`, no lookaround, no inline flags: llama.cpp turns those silently into "any string". A pattern
 * that cannot be written that way is refused, never approximated, so an enforced pattern never
 * rejects input the grammar accepts in its canonical JSON escaping (control characters other than
 * tab, CR, LF, backspace and form feed are left out of the escaped form: they would need `\u00XX`).
 */

export type PatternForm = 'escaped-text' | 'value';

export const PATTERN_FORMS: readonly PatternForm[] = ['escaped-text', 'value'];

/** The chat template prints the pattern into the prompt; a longer one costs tokens on every turn. */
export const MAX_ENGINE_PATTERN_LENGTH = 2_000;

/**
 * The most copies nested counted repeats may multiply to. An engine writes `x{0,n}` out as n copies of
 * `x` (llama.cpp's schema-to-grammar converter does), so the counts along one nesting multiply:
 * `(a{0,1000}){0,1000}` is a million copies and froze llama-server for two minutes of CPU. A whole
 * nesting may expand as far as one repeat may.
 */
export const MAX_NESTED_REPEAT_COPIES = MAX_REPEAT_COUNT;

export type GrammarPatternResult = { success: true; pattern: string } | { success: false; reason: string };

export function compileGrammarToPattern(grammar: ToolGrammar, form: PatternForm): GrammarPatternResult {
  try {
    const body = grammarBody(grammar, form);
    const pattern = `^${body}$`;
    const problem = checkEnginePattern(pattern);
    return problem === null ? { success: true, pattern } : { success: false, reason: problem };
  } catch (error) {
    return { success: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

function grammarBody(grammar: ToolGrammar, form: PatternForm): string {
  const writer = new PatternWriter(form);
  switch (grammar.syntax) {
    case 'lark':
      return new LarkInliner(parseLarkGrammar(grammar.definition), writer).start();
    case 'regex':
      return writer.node(parseGrammarRegexp(grammar.definition, { ignoreCase: false, dotAll: false, verbose: false }));
    default:
      throw new Error(`grammar syntax '${grammar.syntax}' cannot be written as a pattern`);
  }
}

/**
 * What an engine must be able to read before a pattern is sent: anchored at both ends, none of the
 * constructs llama.cpp silently widens to "any string", no `{m,n}` with m > n (which exhausts its
 * memory), within the length cap, a valid ECMAScript regex (JSON Schema's dialect), and no repetition
 * that costs an engine more than the text it matches (findCostlyRepetition).
 * Returns the first problem, or null.
 */
export function checkEnginePattern(pattern: string): string | null {
  if (pattern.length > MAX_ENGINE_PATTERN_LENGTH) return `the pattern is ${pattern.length} characters, over the ${MAX_ENGINE_PATTERN_LENGTH} cap`;
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) return 'the pattern is not anchored with ^ and $';
  let inClass = false;
  for (let index = 0; index < pattern.length; index += 1) {
    const character = pattern[index];
    if (pattern.startsWith(EVERY_CHARACTER, index)) {
      index += EVERY_CHARACTER.length - 1;
      continue;
    }
    if (character === '\\') {
      const next = pattern[index + 1] ?? '';
      if ('sdwSDWbBpP'.includes(next)) return `the pattern uses \\${next}, which engines read differently or not at all`;
      if (/[1-9k]/.test(next)) return 'the pattern uses a back-reference';
      index += 1;
      continue;
    }
    if (inClass) {
      if (character === ']') inClass = false;
      continue;
    }
    if (character === '[') inClass = true;
    else if (character === '(' && pattern[index + 1] === '?') return 'the pattern uses a (? group: lookaround, inline flags or a non-capturing group';
    else if ((character === '^' && index > 0) || (character === '$' && index < pattern.length - 1)) return 'the pattern has an anchor inside it';
    else if (character === '{') {
      const range = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(index));
      if (range === null) return `the pattern has a '{' that is not a repeat count at ${index}`;
      if (range[2] !== undefined && range[2] !== '' && Number(range[2]) < Number(range[1])) return `the pattern has a reversed range ${range[0]}`;
    }
  }
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    return `the pattern is not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`;
  }
  return findCostlyRepetition(pattern.slice(1, -1));
}

/** What a part of a pattern costs an engine: whether it can match nothing, and the copies its counted repeats multiply to. */
interface RepetitionCost {
  matchesNothing: boolean;
  copies: number;
}

class CostlyRepetition extends Error {}

/**
 * The first repetition an engine cannot afford in a valid pattern body (checked by checkEnginePattern
 * first), or null: nested counted repeats multiplying past MAX_NESTED_REPEAT_COPIES, and any repeat
 * of more than one of something that can match nothing (`(a*)*`, `(a?){1000}`, `(|a)+`), which an
 * engine's grammar follows along every way of splitting the text among the repeats.
 */
function findCostlyRepetition(body: string): string | null {
  const scanner = new RepetitionScanner(body);
  try {
    scanner.alternatives();
    return null;
  } catch (error) {
    if (error instanceof CostlyRepetition) return error.message;
    throw error;
  }
}

/** Reads the pattern dialect PatternWriter writes (and any valid ECMAScript pattern without `(?`), one atom and its quantifier at a time. */
class RepetitionScanner {
  private index = 0;

  constructor(private readonly text: string) {}

  alternatives(): RepetitionCost {
    const cost = this.sequence();
    while (this.text[this.index] === '|') {
      this.index += 1;
      const option = this.sequence();
      cost.matchesNothing ||= option.matchesNothing;
      cost.copies = Math.max(cost.copies, option.copies);
    }
    return cost;
  }

  private sequence(): RepetitionCost {
    const cost: RepetitionCost = { matchesNothing: true, copies: 1 };
    while (this.index < this.text.length && this.text[this.index] !== '|' && this.text[this.index] !== ')') {
      const start = this.index;
      const term = this.quantified(this.atom(), start);
      cost.matchesNothing &&= term.matchesNothing;
      cost.copies = Math.max(cost.copies, term.copies);
    }
    return cost;
  }

  /** A group, a class, an escape or one character. An escape's hex digits are read as characters of their own: each matches something, as the escape does. */
  private atom(): RepetitionCost {
    const character = this.text[this.index];
    if (character === '(') {
      this.index += 1;
      const inner = this.alternatives();
      this.index += 1;
      return inner;
    }
    if (character === '[') {
      this.index += this.text[this.index + 1] === '^' ? 2 : 1;
      while (this.index < this.text.length && this.text[this.index] !== ']') this.index += this.text[this.index] === '\\' ? 2 : 1;
    } else if (character === '\\') {
      this.index += 1;
    }
    this.index += 1;
    return { matchesNothing: false, copies: 1 };
  }

  private quantified(item: RepetitionCost, start: number): RepetitionCost {
    const bounds = this.readQuantifier();
    if (bounds === null) return item;
    const source = this.text.slice(start, this.index);
    const shown = source.length > 80 ? `${source.slice(0, 77)}…` : source;
    const copies = item.copies * (bounds.max === Infinity ? Math.max(bounds.min, 1) : bounds.max);
    if (copies > MAX_NESTED_REPEAT_COPIES) {
      throw new CostlyRepetition(`the pattern nests counted repeats that multiply to ${copies} copies (over the ${MAX_NESTED_REPEAT_COPIES} cap): ${shown}`);
    }
    if (bounds.max > 1 && item.matchesNothing) {
      throw new CostlyRepetition(`the pattern repeats something that can match nothing, which an engine may try every way of splitting: ${shown}`);
    }
    return { matchesNothing: item.matchesNothing || bounds.min === 0, copies };
  }

  private readQuantifier(): { min: number; max: number } | null {
    const character = this.text[this.index];
    let bounds: { min: number; max: number } | null = null;
    if (character === '*') bounds = { min: 0, max: Infinity };
    else if (character === '+') bounds = { min: 1, max: Infinity };
    else if (character === '?') bounds = { min: 0, max: 1 };
    if (bounds !== null) {
      this.index += 1;
    } else {
      const range = /^\{(\d+)(?:(,)(\d*))?\}/.exec(this.text.slice(this.index, this.index + 24));
      if (range === null) return null;
      this.index += range[0].length;
      const min = Number(range[1]);
      bounds = { min, max: range[2] === undefined ? min : range[3] === '' ? Infinity : Number(range[3]) };
    }
    // A lazy quantifier matches the same texts.
    if (this.text[this.index] === '?') this.index += 1;
    return bounds;
  }
}

/** Backslash escapes JSON writes for characters that need one (what `JSON.stringify` emits). */
const JSON_ESCAPE_LETTERS: ReadonlyMap<number, string> = new Map([
  [0x22, '"'],
  [0x5c, '\\\\'],
  [0x08, 'b'],
  [0x0c, 'f'],
  [0x0a, 'n'],
  [0x0d, 'r'],
  [0x09, 't'],
]);

const SAFE_OUTSIDE_CLASS = /^[A-Za-z0-9 !"#%&',/:;<=>@_`~-]$/u;
const SAFE_INSIDE_CLASS = /^[A-Za-z0-9 !"#%&',:;<=>@_`~*+?.(){}|$/]$/u;
const REGEX_METACHARACTERS = '*+?()[]{}|';

/** Beyond the BMP the character itself: `\\u{…}` needs the `u` flag, which not every engine reads. */
function hexEscape(codePoint: number): string {
  if (codePoint > 0xffff) return String.fromCodePoint(codePoint);
  return codePoint <= 0xff ? `\\x${codePoint.toString(16).padStart(2, '0')}` : `\\u${codePoint.toString(16).padStart(4, '0')}`;
}

/** One literal character of the regex text itself (not yet JSON-escaped). */
function literalCharacter(codePoint: number): string {
  const text = String.fromCodePoint(codePoint);
  if (SAFE_OUTSIDE_CLASS.test(text)) return text;
  if (REGEX_METACHARACTERS.includes(text)) return `\\${text}`;
  if (text === '\\') return '\\\\';
  return hexEscape(codePoint);
}

function classMember(codePoint: number): string {
  const text = String.fromCodePoint(codePoint);
  return SAFE_INSIDE_CLASS.test(text) ? text : hexEscape(codePoint);
}

function classRanges(ranges: ReadonlyArray<readonly [number, number]>): string {
  return ranges.map(([low, high]) => (low === high ? classMember(low) : high === low + 1 ? classMember(low) + classMember(high) : `${classMember(low)}-${classMember(high)}`)).join('');
}

const COMPLEMENTS: ReadonlyArray<readonly [CharacterClassName, CharacterClassName]> = [
  ['space', 'not_space'],
  ['digit', 'not_digit'],
  ['word', 'not_word'],
];

/** `[\s\S]` and friends: the whole alphabet, which needs no shorthand class. */
function coversEverything(set: CharacterSet): boolean {
  return !set.negated && COMPLEMENTS.some(([one, other]) => set.classes.includes(one) && set.classes.includes(other));
}

/** Sorted, merged, within [0, 0x10FFFF]. */
function normalise(ranges: ReadonlyArray<readonly [number, number]>): Array<[number, number]> {
  const sorted = [...ranges].map(([low, high]) => [low, high] as [number, number]).sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const range of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && range[0] <= last[1] + 1) last[1] = Math.max(last[1], range[1]);
    else merged.push(range);
  }
  return merged;
}

function complement(ranges: Array<[number, number]>): Array<[number, number]> {
  const result: Array<[number, number]> = [];
  let next = 0;
  for (const [low, high] of ranges) {
    if (low > next) result.push([next, low - 1]);
    next = high + 1;
  }
  if (next <= 0x10ffff) result.push([next, 0x10ffff]);
  return result;
}

function subtract(ranges: Array<[number, number]>, removed: Array<[number, number]>): Array<[number, number]> {
  return complement(normalise([...complement(ranges), ...removed]));
}

function caseFolded(set: CharacterSet): Array<[number, number]> {
  if (!set.ignoreCase) return normalise(set.ranges);
  const ranges: Array<[number, number]> = [...set.ranges.map(([low, high]) => [low, high] as [number, number])];
  for (const [low, high] of set.ranges) {
    if (high - low > 256) throw new Error(`a case-insensitive range of ${high - low + 1} characters cannot be written as a pattern`);
    for (let codePoint = low; codePoint <= high; codePoint += 1) {
      const text = String.fromCodePoint(codePoint);
      for (const variant of [text.toLowerCase(), text.toUpperCase()]) {
        const variantCodePoint = variant.codePointAt(0);
        if (variantCodePoint !== undefined && String.fromCodePoint(variantCodePoint) === variant) ranges.push([variantCodePoint, variantCodePoint]);
      }
    }
  }
  return normalise(ranges);
}

/** The code points a set holds, as ranges; null for "every character". */
function setRanges(set: CharacterSet): Array<[number, number]> {
  if (coversEverything(set)) return [[0, 0x10ffff]];
  if (set.classes.length > 0) throw new Error(`'${set.source}' uses a \\d, \\w or \\s class, which engines read differently; it cannot be sent as a pattern`);
  const ranges = caseFolded(set);
  return set.negated ? complement(ranges) : ranges;
}

const EVERY_CHARACTER = '[\\s\\S]';

const CONTROL_AND_JSON_SPECIAL: Array<[number, number]> = [
  [0x00, 0x1f],
  [0x22, 0x22],
  [0x5c, 0x5c],
];

class PatternWriter {
  constructor(private readonly form: PatternForm) {}

  /** A character set as one atom. */
  characters(ranges: Array<[number, number]>): string {
    if (this.form === 'value') return this.valueAtom(ranges);
    const raw = subtract(ranges, CONTROL_AND_JSON_SPECIAL);
    const escapes = [...JSON_ESCAPE_LETTERS].filter(([codePoint]) => ranges.some(([low, high]) => codePoint >= low && codePoint <= high)).map(([, letter]) => letter);
    const alternatives: string[] = [];
    if (raw.length > 0) alternatives.push(this.valueAtom(raw));
    // `\\` in the regex is one backslash in the matched JSON text.
    if (escapes.length === 1) alternatives.push(`\\\\${escapes[0]}`);
    else if (escapes.length > 1) alternatives.push(`\\\\[${escapes.join('')}]`);
    if (alternatives.length === 0) throw new Error('a character set holds only control characters, which the escaped form does not write');
    return alternatives.length === 1 ? (alternatives[0] as string) : `(${alternatives.join('|')})`;
  }

  private valueAtom(ranges: Array<[number, number]>): string {
    // Every character: the one shorthand pair allowed, read alike by every engine that takes the value form.
    if (ranges.length === 1 && ranges[0]![0] === 0 && ranges[0]![1] === 0x10ffff) return EVERY_CHARACTER;
    const only = ranges.length === 1 && ranges[0]![0] === ranges[0]![1] ? ranges[0]![0] : null;
    if (only !== null) return literalCharacter(only);
    const negated = complement(ranges);
    // Whichever of `[…]` and `[^…]` is shorter; `[^]` would mean nothing to some engines.
    if (negated.length > 0 && classRanges(negated).length < classRanges(ranges).length) return `[^${classRanges(negated)}]`;
    return `[${classRanges(ranges)}]`;
  }

  literal(text: string, ignoreCase: boolean): string {
    return Array.from(text)
      .map((character) => {
        const codePoint = character.codePointAt(0) as number;
        return this.characters(ignoreCase ? caseFolded({ ranges: [[codePoint, codePoint]], classes: [], negated: false, ignoreCase: true, source: character }) : [[codePoint, codePoint]]);
      })
      .join('');
  }

  sequence(items: string[]): string {
    return items.join('');
  }

  choice(options: string[]): string {
    const unique = [...new Set(options)];
    return unique.length === 1 ? (unique[0] as string) : `(${unique.join('|')})`;
  }

  repeat(item: string, min: number, max: number): string {
    if (max < min) throw new Error(`a reversed repeat {${min},${max}}`);
    const atom = this.isAtom(item) ? item : `(${item})`;
    if (min === 0 && max === 1) return `${atom}?`;
    if (min === 0 && max === Infinity) return `${atom}*`;
    if (min === 1 && max === Infinity) return `${atom}+`;
    if (max === Infinity) return `${atom}{${min},}`;
    return min === max ? `${atom}{${min}}` : `${atom}{${min},${max}}`;
  }

  node(pattern: PatternNode): string {
    switch (pattern.kind) {
      case 'characters':
        return this.characters(setRanges(pattern.set));
      case 'sequence':
        return this.sequence(pattern.items.map((item) => this.node(item)));
      case 'choice':
        return this.choice(pattern.options.map((option) => this.node(option)));
      case 'repeat':
        return this.repeat(this.node(pattern.item), pattern.min, pattern.max);
      default: {
        const unreachable: never = pattern;
        return unreachable;
      }
    }
  }

  /** One character, one escape, one class or one whole group: a quantifier can follow it directly. */
  private isAtom(text: string): boolean {
    if (/^(\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|\\[^\\xu]|\\\\|[^\\[(]|\[(\\.|[^\]\\])*\])$/u.test(text)) return true;
    if (!text.startsWith('(') || !text.endsWith(')')) return false;
    let depth = 0;
    let inClass = false;
    for (let index = 0; index < text.length; index += 1) {
      const character = text[index];
      if (character === '\\') {
        index += 1;
        continue;
      }
      if (inClass) {
        if (character === ']') inClass = false;
        continue;
      }
      if (character === '[') inClass = true;
      else if (character === '(') depth += 1;
      else if (character === ')') {
        depth -= 1;
        if (depth === 0 && index < text.length - 1) return false;
      }
    }
    return true;
  }
}

/** Inlines every rule of a grammar without recursion into one pattern. */
class LarkInliner {
  private common: LarkGrammar | null = null;

  constructor(
    private readonly grammar: LarkGrammar,
    private readonly writer: PatternWriter,
  ) {}

  start(): string {
    if (this.grammar.ignored.length > 0) throw new Error('a grammar with %ignore cannot be written as a pattern');
    return this.symbol('start', 'grammar', []);
  }

  private expression(expression: GrammarExpression, scope: 'grammar' | 'common', expanding: readonly string[]): string {
    const writer = this.writer;
    switch (expression.kind) {
      case 'literal':
        return writer.literal(expression.text, expression.ignoreCase);
      case 'range':
        return writer.characters([[expression.low, expression.high]]);
      case 'regexp':
        return writer.node(expression.pattern);
      case 'symbol':
        return this.symbol(expression.name, scope, expanding);
      case 'sequence':
        return writer.sequence(expression.items.map((item) => this.expression(item, scope, expanding)));
      case 'choice':
        return writer.choice(expression.options.map((option) => this.expression(option, scope, expanding)));
      case 'repeat':
        return writer.repeat(this.expression(expression.item, scope, expanding), expression.min, expression.max);
      default: {
        const unreachable: never = expression;
        return unreachable;
      }
    }
  }

  private symbol(name: string, scope: 'grammar' | 'common', expanding: readonly string[]): string {
    let resolvedScope = scope;
    let resolvedName = name;
    let definition = scope === 'grammar' ? this.grammar.definitions.get(name) : this.commonGrammar().definitions.get(name);
    if (definition === undefined && scope === 'grammar') {
      const imported = this.grammar.imports.get(name);
      if (imported !== undefined) {
        resolvedScope = 'common';
        resolvedName = imported;
        definition = this.commonGrammar().definitions.get(imported);
      }
    }
    if (definition === undefined) throw new Error(`'${name}' is used but not defined`);
    const key = `${resolvedScope}:${resolvedName}`;
    if (expanding.includes(key)) throw new Error(`'${name}' refers to itself; only grammars without recursion can be written as a pattern`);
    return this.expression(definition, resolvedScope, [...expanding, key]);
  }

  private commonGrammar(): LarkGrammar {
    this.common ??= parseLarkGrammar(LARK_COMMON_TERMINALS);
    return this.common;
  }
}
