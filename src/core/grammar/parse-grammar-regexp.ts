import { createAnyCharacterSet, createSingleCharacterSet, type CharacterClassName, type CharacterSet } from './character-set.ts';
import { MAX_REPEAT_COUNT, type PatternNode } from './pattern-node.ts';

/*
 * Lark passes `/regexp/` terminals to Python's `re`, and OpenAI's `regex` grammar syntax is Rust's
 * `regex` crate; both share the subset read here. The result is a tree for the automaton builder,
 * never a JavaScript RegExp: a backtracking engine could take exponential time on a 5 MB patch,
 * and JavaScript's `.` and `\s` differ from Python's. Anything that is not regular (anchors,
 * lookarounds, back-references) or not understood throws, and the caller reports the grammar as
 * one it cannot check.
 */

export interface RegexpFlags {
  ignoreCase: boolean;
  dotAll: boolean;
  /** `x`: whitespace and `#` comments outside classes are ignored. */
  verbose: boolean;
}

/** Lark writes flags after the closing slash: `/…/i`. `m`, `u` and `l` do not change what the subset accepts. */
export function readRegexpFlags(flags: string): RegexpFlags {
  const result: RegexpFlags = { ignoreCase: false, dotAll: false, verbose: false };
  for (const flag of flags) {
    if (flag === 'i') result.ignoreCase = true;
    else if (flag === 's') result.dotAll = true;
    else if (flag === 'x') result.verbose = true;
    else if (flag !== 'm' && flag !== 'u' && flag !== 'l') throw new Error(`unsupported regexp flag '${flag}'`);
  }
  return result;
}

const CLASS_ESCAPES: Readonly<Record<string, CharacterClassName>> = {
  d: 'digit',
  D: 'not_digit',
  w: 'word',
  W: 'not_word',
  s: 'space',
  S: 'not_space',
};

const CONTROL_ESCAPES: Readonly<Record<string, number>> = { n: 0x0a, t: 0x09, r: 0x0d, f: 0x0c, v: 0x0b, a: 0x07 };

const HEX = /^[0-9a-fA-F]+$/;

export function parseGrammarRegexp(source: string, flags: RegexpFlags): PatternNode {
  return new RegexpParser(source, flags).parse();
}

class RegexpParser {
  private readonly characters: string[];
  private position = 0;

  constructor(
    private readonly source: string,
    private readonly initialFlags: RegexpFlags,
  ) {
    this.characters = Array.from(source);
  }

  parse(): PatternNode {
    const node = this.parseAlternation({ ...this.initialFlags });
    if (this.position < this.characters.length) throw this.error(`unbalanced ')'`);
    return node;
  }

  private error(message: string): Error {
    return new Error(`${message} at position ${this.position} of regexp /${this.source}/`);
  }

  private peek(offset = 0): string | undefined {
    return this.characters[this.position + offset];
  }

  private parseAlternation(flags: RegexpFlags): PatternNode {
    const options = [this.parseSequence(flags)];
    while (this.peek() === '|') {
      this.position += 1;
      options.push(this.parseSequence(flags));
    }
    return options.length === 1 ? (options[0] as PatternNode) : { kind: 'choice', options };
  }

  private parseSequence(flags: RegexpFlags): PatternNode {
    const items: PatternNode[] = [];
    for (;;) {
      this.skipVerboseWhitespace(flags);
      const next = this.peek();
      if (next === undefined || next === '|' || next === ')') break;
      // `(?i)` changes the flags for the rest of the enclosing group, so it is read here.
      if (this.readInlineFlags(flags)) continue;
      const atom = this.parseAtom(flags);
      items.push(this.parseQuantifiers(atom, flags));
    }
    return items.length === 1 ? (items[0] as PatternNode) : { kind: 'sequence', items };
  }

  private skipVerboseWhitespace(flags: RegexpFlags): void {
    if (!flags.verbose) return;
    for (;;) {
      const next = this.peek();
      if (next === ' ' || next === '\t' || next === '\n' || next === '\r' || next === '\f' || next === '\v') {
        this.position += 1;
      } else if (next === '#') {
        while (this.peek() !== undefined && this.peek() !== '\n') this.position += 1;
      } else {
        return;
      }
    }
  }

  /** `(?i)`, `(?s-i)` …: a flag group without a body. */
  private readInlineFlags(flags: RegexpFlags): boolean {
    if (this.peek() !== '(' || this.peek(1) !== '?') return false;
    let index = 2;
    while (/^[a-zA-Z-]$/.test(this.peek(index) ?? '')) index += 1;
    if (index === 2 || this.peek(index) !== ')') return false;
    const letters = this.characters.slice(this.position + 2, this.position + index).join('');
    this.position += index + 1;
    this.applyFlagLetters(letters, flags);
    return true;
  }

  private applyFlagLetters(letters: string, flags: RegexpFlags): void {
    let enable = true;
    for (const letter of letters) {
      if (letter === '-') enable = false;
      else if (letter === 'i') flags.ignoreCase = enable;
      else if (letter === 's') flags.dotAll = enable;
      else if (letter === 'x') flags.verbose = enable;
      else if (letter !== 'm' && letter !== 'u' && letter !== 'U') throw this.error(`unsupported inline flag '${letter}'`);
    }
  }

  private parseQuantifiers(atom: PatternNode, flags: RegexpFlags): PatternNode {
    this.skipVerboseWhitespace(flags);
    const bounds = this.readQuantifier();
    if (bounds === null) return atom;
    // A lazy quantifier (`*?`) accepts the same language; a possessive one (`*+`) does not.
    if (this.peek() === '?') this.position += 1;
    else if (this.peek() === '+') throw this.error('possessive quantifiers are not supported');
    this.skipVerboseWhitespace(flags);
    if (this.readQuantifier() !== null) throw this.error('multiple repeat');
    return { kind: 'repeat', item: atom, min: bounds.min, max: bounds.max };
  }

  private readQuantifier(): { min: number; max: number } | null {
    const next = this.peek();
    if (next === '*') {
      this.position += 1;
      return { min: 0, max: Infinity };
    }
    if (next === '+') {
      this.position += 1;
      return { min: 1, max: Infinity };
    }
    if (next === '?') {
      this.position += 1;
      return { min: 0, max: 1 };
    }
    if (next !== '{') return null;
    // `{` that does not form `{n}`, `{n,}`, `{,m}` or `{n,m}` is a literal brace in Python.
    const rest = this.characters.slice(this.position, this.position + 24).join('');
    const match = /^\{(\d*)(,?)(\d*)\}/.exec(rest);
    if (match === null || (match[1] === '' && match[2] === '') || (match[1] === '' && match[3] === '' && match[2] === ',')) return null;
    this.position += match[0].length;
    const min = match[1] === '' ? 0 : Number(match[1]);
    const max = match[2] === '' ? min : match[3] === '' ? Infinity : Number(match[3]);
    if (max < min) throw this.error('min repeat greater than max repeat');
    if (min > MAX_REPEAT_COUNT || (max !== Infinity && max > MAX_REPEAT_COUNT)) {
      throw this.error(`repetition counts above ${MAX_REPEAT_COUNT} are not supported`);
    }
    return { min, max };
  }

  private parseAtom(flags: RegexpFlags): PatternNode {
    const start = this.position;
    const next = this.peek() as string;
    switch (next) {
      case '(':
        return this.parseGroup(flags);
      case '[':
        return { kind: 'characters', set: this.parseClass(flags) };
      case '.':
        this.position += 1;
        return { kind: 'characters', set: createAnyCharacterSet(flags.dotAll) };
      case '^':
      case '$':
        throw this.error(`anchor '${next}' is not supported`);
      case '*':
      case '+':
      case '?':
        throw this.error('nothing to repeat');
      case '\\':
        return this.parseEscape(flags, start);
      default:
        if (next === '{' && this.readQuantifier() !== null) throw this.error('nothing to repeat');
        this.position = start + 1;
        return { kind: 'characters', set: createSingleCharacterSet(next.codePointAt(0) as number, flags.ignoreCase, next) };
    }
  }

  private parseGroup(outerFlags: RegexpFlags): PatternNode {
    this.position += 1;
    const flags = { ...outerFlags };
    if (this.peek() === '?') {
      const kind = this.peek(1);
      if (kind === ':') {
        this.position += 2;
      } else if (kind === 'P' && this.peek(2) === '<') {
        this.skipGroupName(3);
      } else if (kind === '<' && this.peek(2) !== '=' && this.peek(2) !== '!') {
        this.skipGroupName(2);
      } else if (kind === '#') {
        while (this.peek() !== undefined && this.peek() !== ')') this.position += 1;
        this.position += 1;
        return { kind: 'sequence', items: [] };
      } else {
        let index = 1;
        while (/^[a-zA-Z-]$/.test(this.peek(index) ?? '')) index += 1;
        if (index === 1 || this.peek(index) !== ':') {
          throw this.error('lookarounds, back-references and conditional groups are not supported');
        }
        this.applyFlagLetters(this.characters.slice(this.position + 1, this.position + index).join(''), flags);
        this.position += index + 1;
      }
    }
    const body = this.parseAlternation(flags);
    if (this.peek() !== ')') throw this.error("missing ')'");
    this.position += 1;
    return body;
  }

  private skipGroupName(prefixLength: number): void {
    this.position += prefixLength;
    while (this.peek() !== undefined && this.peek() !== '>') this.position += 1;
    if (this.peek() !== '>') throw this.error('unterminated group name');
    this.position += 1;
  }

  private parseEscape(flags: RegexpFlags, start: number): PatternNode {
    this.position += 1;
    const letter = this.peek();
    if (letter === undefined) throw this.error('bad escape (end of pattern)');
    const className = CLASS_ESCAPES[letter];
    if (className !== undefined) {
      this.position += 1;
      return { kind: 'characters', set: { ranges: [], classes: [className], negated: false, ignoreCase: false, source: `\\${letter}` } };
    }
    if ('bBAZzG'.includes(letter)) throw this.error(`anchor '\\${letter}' is not supported`);
    const codePoint = this.readEscapedCodePoint(false);
    const source = this.characters.slice(start, this.position).join('');
    return { kind: 'characters', set: createSingleCharacterSet(codePoint, flags.ignoreCase, source) };
  }

  /** The character an escape stands for; the position is just after the backslash. */
  private readEscapedCodePoint(inClass: boolean): number {
    const letter = this.peek() as string;
    this.position += 1;
    const control = CONTROL_ESCAPES[letter];
    if (control !== undefined) return control;
    if (letter === 'b' && inClass) return 0x08;
    if (letter === 'x') {
      if (this.peek() === '{') return this.readBracedHex();
      return this.readHexDigits(2);
    }
    if (letter === 'u') return this.readHexDigits(4);
    if (letter === 'U') return this.readHexDigits(8);
    if (/^[0-7]$/.test(letter)) {
      // Python: `\0` and three-digit octal escapes are characters; `\1` … `\99` are back-references.
      let digits = letter;
      while (digits.length < 3 && /^[0-7]$/.test(this.peek() ?? '')) {
        digits += this.peek();
        this.position += 1;
      }
      if (letter === '0' || digits.length === 3) return Number.parseInt(digits, 8);
      throw this.error('back-references are not supported');
    }
    if (/^[0-9]$/.test(letter)) throw this.error('back-references are not supported');
    if (/^[a-zA-Z]$/.test(letter)) throw this.error(`bad escape '\\${letter}'`);
    return letter.codePointAt(0) as number;
  }

  private readHexDigits(count: number): number {
    const digits = this.characters.slice(this.position, this.position + count).join('');
    if (digits.length !== count || !HEX.test(digits)) throw this.error('bad hexadecimal escape');
    this.position += count;
    return this.checkCodePoint(Number.parseInt(digits, 16));
  }

  private readBracedHex(): number {
    const end = this.characters.indexOf('}', this.position);
    const digits = end < 0 ? '' : this.characters.slice(this.position + 1, end).join('');
    if (digits === '' || digits.length > 8 || !HEX.test(digits)) throw this.error('bad hexadecimal escape');
    this.position = end + 1;
    return this.checkCodePoint(Number.parseInt(digits, 16));
  }

  private checkCodePoint(codePoint: number): number {
    if (codePoint > 0x10ffff) throw this.error('escape beyond U+10FFFF');
    return codePoint;
  }

  private parseClass(flags: RegexpFlags): CharacterSet {
    const start = this.position;
    this.position += 1;
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.position += 1;
    }
    const ranges: Array<[number, number]> = [];
    const classes: CharacterClassName[] = [];
    let first = true;
    for (;;) {
      const next = this.peek();
      if (next === undefined) throw this.error('unterminated character class');
      if (next === ']' && !first) {
        this.position += 1;
        break;
      }
      first = false;
      const low = this.readClassMember(classes);
      if (low === null) continue;
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.position += 1;
        const high = this.readClassMember(classes);
        if (high === null) throw this.error('bad character range');
        if (high < low) throw this.error('bad character range');
        ranges.push([low, high]);
      } else {
        ranges.push([low, low]);
      }
    }
    const source = this.characters.slice(start, this.position).join('');
    return { ranges, classes, negated, ignoreCase: flags.ignoreCase, source };
  }

  /** One member: a code point, or null when it was a class escape such as `\d` (added to `classes`). */
  private readClassMember(classes: CharacterClassName[]): number | null {
    const next = this.peek() as string;
    this.position += 1;
    if (next !== '\\') return next.codePointAt(0) as number;
    const letter = this.peek();
    if (letter === undefined) throw this.error('bad escape (end of pattern)');
    const className = CLASS_ESCAPES[letter];
    if (className !== undefined) {
      this.position += 1;
      classes.push(className);
      return null;
    }
    return this.readEscapedCodePoint(true);
  }
}
