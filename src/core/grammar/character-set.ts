/*
 * One character position of a grammar: which code points may stand there. Membership is tested
 * per code point instead of being expanded into range tables, because the matcher's lazy DFA only
 * ever asks about characters that actually occur in an input (see grammar-matcher.ts).
 */

/** Python's `\d`, `\w`, `\s` and their complements; Lark hands regexps to Python's `re` (Unicode str patterns). */
export type CharacterClassName = 'digit' | 'not_digit' | 'word' | 'not_word' | 'space' | 'not_space';

export interface CharacterSet {
  /** Inclusive code point ranges. */
  readonly ranges: ReadonlyArray<readonly [number, number]>;
  readonly classes: readonly CharacterClassName[];
  /** `[^…]`: the set is everything the ranges and classes do not cover. */
  readonly negated: boolean;
  /** The `i` flag: a code point belongs when its lower- or upper-case form does. */
  readonly ignoreCase: boolean;
  /** How the grammar wrote it (`"a"`, `[^\n]`, `\d`, `.`), for mismatch messages. */
  readonly source: string;
}

const DIGIT = /^\p{Nd}$/u;
// Python's str.isalnum() is letters plus every numeric category, hence \p{N} rather than \p{Nd}.
const WORD = /^[\p{L}\p{N}_]$/u;

/** Python's str.isspace(), which `\s` follows; JavaScript's `\s` differs (it has U+FEFF, lacks U+001C–U+001F and U+0085). */
function isPythonSpace(codePoint: number): boolean {
  if (codePoint <= 0x20) return codePoint === 0x20 || (codePoint >= 0x09 && codePoint <= 0x0d) || (codePoint >= 0x1c && codePoint <= 0x1f);
  return (
    codePoint === 0x85 ||
    codePoint === 0xa0 ||
    codePoint === 0x1680 ||
    (codePoint >= 0x2000 && codePoint <= 0x200a) ||
    codePoint === 0x2028 ||
    codePoint === 0x2029 ||
    codePoint === 0x202f ||
    codePoint === 0x205f ||
    codePoint === 0x3000
  );
}

function isInClass(name: CharacterClassName, codePoint: number): boolean {
  switch (name) {
    case 'digit':
      return DIGIT.test(String.fromCodePoint(codePoint));
    case 'not_digit':
      return !DIGIT.test(String.fromCodePoint(codePoint));
    case 'word':
      return WORD.test(String.fromCodePoint(codePoint));
    case 'not_word':
      return !WORD.test(String.fromCodePoint(codePoint));
    case 'space':
      return isPythonSpace(codePoint);
    case 'not_space':
      return !isPythonSpace(codePoint);
    default: {
      const unreachable: never = name;
      return unreachable;
    }
  }
}

function isInBase(set: CharacterSet, codePoint: number): boolean {
  for (const [low, high] of set.ranges) if (codePoint >= low && codePoint <= high) return true;
  for (const name of set.classes) if (isInClass(name, codePoint)) return true;
  return false;
}

/** Simple case variants only: a mapping that changes the length (ß → SS) is no variant of one character. */
function caseVariants(codePoint: number): number[] {
  const text = String.fromCodePoint(codePoint);
  const variants = [codePoint];
  for (const changed of [text.toLowerCase(), text.toUpperCase()]) {
    const changedCodePoint = changed.codePointAt(0);
    if (changedCodePoint !== undefined && String.fromCodePoint(changedCodePoint) === changed && !variants.includes(changedCodePoint)) {
      variants.push(changedCodePoint);
    }
  }
  return variants;
}

export function characterSetHas(set: CharacterSet, codePoint: number): boolean {
  const inBase = set.ignoreCase ? caseVariants(codePoint).some((variant) => isInBase(set, variant)) : isInBase(set, codePoint);
  return set.negated ? !inBase : inBase;
}

export function createSingleCharacterSet(codePoint: number, ignoreCase: boolean, source: string): CharacterSet {
  return { ranges: [[codePoint, codePoint]], classes: [], negated: false, ignoreCase, source };
}

/** Python's `.`: anything but a line feed (JavaScript's `.` also stops at `\r`, U+2028, U+2029), or anything with the `s` flag. */
export function createAnyCharacterSet(dotAll: boolean): CharacterSet {
  return dotAll
    ? { ranges: [], classes: [], negated: true, ignoreCase: false, source: '.' }
    : { ranges: [[0x0a, 0x0a]], classes: [], negated: true, ignoreCase: false, source: '.' };
}

/** A printable sample member, for messages and completions; null when none is found quickly. */
export function findCharacterSetSample(set: CharacterSet): number | null {
  const candidates: number[] = [];
  for (const [low] of set.ranges) candidates.push(low);
  // Letters, digits, space, then the rest of printable ASCII: a short, readable pick for negated sets.
  for (let codePoint = 0x61; codePoint <= 0x7a; codePoint += 1) candidates.push(codePoint);
  for (let codePoint = 0x30; codePoint <= 0x39; codePoint += 1) candidates.push(codePoint);
  candidates.push(0x20, 0x0a);
  for (let codePoint = 0x21; codePoint <= 0x7e; codePoint += 1) candidates.push(codePoint);
  for (const codePoint of candidates) if (characterSetHas(set, codePoint)) return codePoint;
  return null;
}
