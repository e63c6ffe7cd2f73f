import type { PatternNode } from './pattern-node.ts';
import { parseGrammarRegexp, readRegexpFlags } from './parse-grammar-regexp.ts';

/*
 * Reads the Lark grammar text Codex declares on a custom tool (`format.definition`) into a tree.
 * The subset: rule and terminal definitions (with `?`/`!` modifiers and `.priority`, both ignored
 * for matching), `|` across lines, `( )`, `[ ]`, `?`, `*`, `+`, `~ n[..m]`, aliases `-> name`,
 * `"literals"` (with the `i` flag), `"a".."z"` ranges, `/regexps/flags`, `//` and `#` comments,
 * `%import common.NAME [-> ALIAS]`, `%import common (A, B)` and `%ignore`. Templates, `%declare`,
 * `%override`, `%extend` and imports from other modules throw.
 */

export type GrammarExpression =
  | { kind: 'literal'; text: string; ignoreCase: boolean }
  | { kind: 'range'; low: number; high: number; source: string }
  | { kind: 'regexp'; pattern: PatternNode; source: string }
  | { kind: 'symbol'; name: string }
  | { kind: 'sequence'; items: GrammarExpression[] }
  | { kind: 'choice'; options: GrammarExpression[] }
  | { kind: 'repeat'; item: GrammarExpression; min: number; max: number };

export interface LarkGrammar {
  /** Rule (lower-case) and terminal (upper-case) definitions by name. */
  definitions: Map<string, GrammarExpression>;
  /** Local name → name in Lark's `common` library. */
  imports: Map<string, string>;
  /** `%ignore` expressions: allowed between any two tokens of a rule. */
  ignored: GrammarExpression[];
}

/** Lark's naming rule: terminals are upper-case (`_`-prefixed names included), rules lower-case. */
export function isTerminalName(name: string): boolean {
  return /^_*[A-Z]/.test(name);
}

type Token =
  | { type: 'name'; value: string; line: number }
  | { type: 'string'; value: string; ignoreCase: boolean; line: number }
  | { type: 'regexp'; value: string; flags: string; line: number }
  | { type: 'number'; value: number; line: number }
  | { type: 'directive'; value: string; line: number }
  | { type: 'operator'; value: string; line: number }
  | { type: 'newline'; line: number }
  | { type: 'end'; line: number };

const OPERATORS = ['->', '..', ':', '|', '(', ')', '[', ']', '?', '*', '+', '~', '.', ',', '{', '}', '!'];
const STRING_ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', a: '\x07', b: '\b', '\\': '\\', '"': '"', "'": "'" };

function tokenizeLarkGrammar(text: string): Token[] {
  const tokens: Token[] = [];
  let position = 0;
  let line = 1;
  const fail = (message: string): Error => new Error(`${message} on line ${line} of the grammar`);
  while (position < text.length) {
    const character = text[position] as string;
    if (character === '\n') {
      if (tokens[tokens.length - 1]?.type !== 'newline') tokens.push({ type: 'newline', line });
      line += 1;
      position += 1;
      continue;
    }
    if (character === ' ' || character === '\t' || character === '\r' || character === '\f') {
      position += 1;
      continue;
    }
    // `//` starts a comment; a regexp cannot start with a slash, so `/` + anything else is a regexp.
    if ((character === '/' && text[position + 1] === '/') || character === '#') {
      while (position < text.length && text[position] !== '\n') position += 1;
      continue;
    }
    if (character === '"') {
      let value = '';
      position += 1;
      for (;;) {
        const next = text[position];
        if (next === undefined || next === '\n') throw fail('unterminated string');
        position += 1;
        if (next === '"') break;
        if (next !== '\\') {
          value += next;
          continue;
        }
        const escape = readStringEscape(text, position);
        if (escape === null) throw fail('bad escape in string');
        value += escape.value;
        position = escape.end;
      }
      let ignoreCase = false;
      if (text[position] === 'i' && !/[A-Za-z0-9_]/.test(text[position + 1] ?? '')) {
        ignoreCase = true;
        position += 1;
      }
      tokens.push({ type: 'string', value, ignoreCase, line });
      continue;
    }
    if (character === '/') {
      let end = position + 1;
      while (end < text.length && text[end] !== '/') {
        if (text[end] === '\n') throw fail('unterminated regexp');
        end += text[end] === '\\' ? 2 : 1;
      }
      if (end >= text.length) throw fail('unterminated regexp');
      const value = text.slice(position + 1, end);
      position = end + 1;
      const flagsStart = position;
      while (/[imslux]/.test(text[position] ?? '')) position += 1;
      tokens.push({ type: 'regexp', value, flags: text.slice(flagsStart, position), line });
      continue;
    }
    if (character === '%') {
      const match = /^%[a-z]+/.exec(text.slice(position, position + 20));
      if (match === null) throw fail("bad directive after '%'");
      tokens.push({ type: 'directive', value: match[0].slice(1), line });
      position += match[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(position, position + 200));
    if (name !== null) {
      tokens.push({ type: 'name', value: name[0], line });
      position += name[0].length;
      continue;
    }
    const number = /^-?\d+/.exec(text.slice(position, position + 20));
    if (number !== null && (character !== '-' || text[position + 1] !== '>')) {
      tokens.push({ type: 'number', value: Number(number[0]), line });
      position += number[0].length;
      continue;
    }
    const operator = OPERATORS.find((candidate) => text.startsWith(candidate, position));
    if (operator === undefined) throw fail(`unexpected character ${JSON.stringify(character)}`);
    tokens.push({ type: 'operator', value: operator, line });
    position += operator.length;
  }
  tokens.push({ type: 'end', line });
  return tokens;
}

/** Python string escapes, as Lark evaluates literals; an unknown escape keeps its backslash (Python does too). */
function readStringEscape(text: string, position: number): { value: string; end: number } | null {
  const letter = text[position];
  if (letter === undefined || letter === '\n') return null;
  const simple = STRING_ESCAPES[letter];
  if (simple !== undefined) return { value: simple, end: position + 1 };
  const hexLength = letter === 'x' ? 2 : letter === 'u' ? 4 : letter === 'U' ? 8 : 0;
  if (hexLength > 0) {
    const digits = text.slice(position + 1, position + 1 + hexLength);
    if (!new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(digits)) return null;
    const codePoint = Number.parseInt(digits, 16);
    if (codePoint > 0x10ffff) return null;
    return { value: String.fromCodePoint(codePoint), end: position + 1 + hexLength };
  }
  const octal = /^[0-7]{1,3}/.exec(text.slice(position, position + 3));
  if (octal !== null) return { value: String.fromCodePoint(Number.parseInt(octal[0], 8)), end: position + octal[0].length };
  return { value: `\\${letter}`, end: position + 1 };
}

export function parseLarkGrammar(text: string): LarkGrammar {
  return new LarkGrammarParser(tokenizeLarkGrammar(text)).parse();
}

class LarkGrammarParser {
  private position = 0;
  private readonly grammar: LarkGrammar = { definitions: new Map(), imports: new Map(), ignored: [] };
  /** Inside `( )` or `[ ]` line breaks mean nothing; at the top they end a definition unless `|` follows. */
  private nesting = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): LarkGrammar {
    for (;;) {
      this.skipNewlines();
      const token = this.peek();
      if (token.type === 'end') return this.grammar;
      if (token.type === 'directive') this.parseDirective(token.value);
      else this.parseDefinition();
      const after = this.peek();
      if (after.type !== 'newline' && after.type !== 'end') throw this.error(`unexpected ${describeToken(after)}`);
    }
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.position + offset, this.tokens.length - 1)] as Token;
  }

  private next(): Token {
    const token = this.peek();
    this.position += 1;
    return token;
  }

  private error(message: string, token: Token = this.peek()): Error {
    return new Error(`${message} on line ${token.line} of the grammar`);
  }

  private isOperator(value: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.type === 'operator' && token.value === value;
  }

  private expectOperator(value: string): void {
    if (!this.isOperator(value)) throw this.error(`expected '${value}', found ${describeToken(this.peek())}`);
    this.position += 1;
  }

  private expectName(): string {
    const token = this.next();
    if (token.type !== 'name') throw this.error(`expected a name, found ${describeToken(token)}`, token);
    return token.value;
  }

  private skipNewlines(): void {
    while (this.peek().type === 'newline') this.position += 1;
  }

  private parseDirective(directive: string): void {
    this.position += 1;
    switch (directive) {
      case 'import':
        this.parseImport();
        return;
      case 'ignore':
        this.grammar.ignored.push(this.parseExpansions());
        return;
      default:
        throw this.error(`the %${directive} directive is not supported`);
    }
  }

  private parseImport(): void {
    const path = [this.expectName()];
    while (this.isOperator('.')) {
      this.position += 1;
      path.push(this.expectName());
    }
    let module: string;
    let names: Array<{ name: string; alias: string }>;
    if (this.isOperator('(')) {
      this.position += 1;
      module = path.join('.');
      names = [{ name: this.expectName(), alias: '' }];
      while (this.isOperator(',')) {
        this.position += 1;
        names.push({ name: this.expectName(), alias: '' });
      }
      this.expectOperator(')');
    } else {
      if (path.length < 2) throw this.error('%import needs a module and a name (e.g. %import common.LF)');
      module = path.slice(0, -1).join('.');
      names = [{ name: path[path.length - 1] as string, alias: '' }];
      if (this.isOperator('->')) {
        this.position += 1;
        (names[0] as { alias: string }).alias = this.expectName();
      }
    }
    if (module !== 'common') throw this.error(`only Lark's 'common' library can be imported, not '${module}'`);
    for (const { name, alias } of names) {
      const localName = alias || name;
      if (this.grammar.imports.has(localName) || this.grammar.definitions.has(localName)) throw this.error(`'${localName}' is defined twice`);
      this.grammar.imports.set(localName, name);
    }
  }

  private parseDefinition(): void {
    while (this.isOperator('?') || this.isOperator('!')) this.position += 1;
    const name = this.expectName();
    if (this.isOperator('.')) {
      this.position += 1;
      if (this.next().type !== 'number') throw this.error(`expected a priority number after '${name}.'`);
    }
    if (this.isOperator('{')) throw this.error(`templates ('${name}{…}') are not supported`);
    this.expectOperator(':');
    if (this.grammar.definitions.has(name) || this.grammar.imports.has(name)) throw this.error(`'${name}' is defined twice`);
    this.grammar.definitions.set(name, this.parseExpansions());
  }

  private parseExpansions(): GrammarExpression {
    const options = [this.parseAlias()];
    for (;;) {
      if (this.nesting === 0 && this.peek().type === 'newline') {
        // A definition continues on the next line only when that line starts with `|`.
        let offset = 0;
        while (this.peek(offset).type === 'newline') offset += 1;
        if (!this.isOperator('|', offset)) break;
        this.position += offset;
      }
      if (!this.isOperator('|')) break;
      this.position += 1;
      options.push(this.parseAlias());
    }
    return options.length === 1 ? (options[0] as GrammarExpression) : { kind: 'choice', options };
  }

  private parseAlias(): GrammarExpression {
    const expansion = this.parseExpansion();
    // `-> name` only renames the tree node; the language is the same.
    if (this.isOperator('->')) {
      this.position += 1;
      this.expectName();
    }
    return expansion;
  }

  private parseExpansion(): GrammarExpression {
    const items: GrammarExpression[] = [];
    for (;;) {
      if (this.nesting > 0) this.skipNewlines();
      if (!this.startsAtom()) break;
      items.push(this.parseItem());
    }
    return items.length === 1 ? (items[0] as GrammarExpression) : { kind: 'sequence', items };
  }

  private startsAtom(): boolean {
    const token = this.peek();
    if (token.type === 'string' || token.type === 'regexp') return true;
    // `name:` on the same line would be a new definition without a line break: not Lark.
    if (token.type === 'name') return !this.isOperator(':', 1);
    return this.isOperator('(') || this.isOperator('[');
  }

  private parseItem(): GrammarExpression {
    const atom = this.parseAtom();
    if (this.isOperator('?')) {
      this.position += 1;
      return { kind: 'repeat', item: atom, min: 0, max: 1 };
    }
    if (this.isOperator('*')) {
      this.position += 1;
      return { kind: 'repeat', item: atom, min: 0, max: Infinity };
    }
    if (this.isOperator('+')) {
      this.position += 1;
      return { kind: 'repeat', item: atom, min: 1, max: Infinity };
    }
    if (this.isOperator('~')) {
      this.position += 1;
      const min = this.expectCount();
      let max = min;
      if (this.isOperator('..')) {
        this.position += 1;
        max = this.expectCount();
      }
      if (max < min) throw this.error('repetition range with max below min');
      return { kind: 'repeat', item: atom, min, max };
    }
    return atom;
  }

  private expectCount(): number {
    const token = this.next();
    if (token.type !== 'number' || token.value < 0) throw this.error(`expected a repetition count, found ${describeToken(token)}`, token);
    return token.value;
  }

  private parseAtom(): GrammarExpression {
    const token = this.next();
    switch (token.type) {
      case 'string':
        if (this.isOperator('..')) return this.parseRange(token);
        return { kind: 'literal', text: token.value, ignoreCase: token.ignoreCase };
      case 'regexp': {
        const pattern = parseGrammarRegexp(token.value, readRegexpFlags(token.flags));
        return { kind: 'regexp', pattern, source: `/${token.value}/${token.flags}` };
      }
      case 'name':
        if (this.isOperator('{')) throw this.error(`templates ('${token.value}{…}') are not supported`);
        return { kind: 'symbol', name: token.value };
      case 'operator': {
        const closing = token.value === '(' ? ')' : ']';
        this.nesting += 1;
        const inner = this.parseExpansions();
        this.skipNewlines();
        this.nesting -= 1;
        this.expectOperator(closing);
        return token.value === '(' ? inner : { kind: 'repeat', item: inner, min: 0, max: 1 };
      }
      default:
        throw this.error(`unexpected ${describeToken(token)}`, token);
    }
  }

  private parseRange(low: Extract<Token, { type: 'string' }>): GrammarExpression {
    this.position += 1;
    const high = this.next();
    if (high.type !== 'string') throw this.error(`expected a string after '..', found ${describeToken(high)}`, high);
    const lowCodePoint = low.value.codePointAt(0);
    const highCodePoint = high.value.codePointAt(0);
    if (
      lowCodePoint === undefined ||
      highCodePoint === undefined ||
      String.fromCodePoint(lowCodePoint) !== low.value ||
      String.fromCodePoint(highCodePoint) !== high.value ||
      highCodePoint < lowCodePoint
    ) {
      throw this.error('a range needs two single characters in order');
    }
    return { kind: 'range', low: lowCodePoint, high: highCodePoint, source: `${JSON.stringify(low.value)}..${JSON.stringify(high.value)}` };
  }
}

function describeToken(token: Token): string {
  switch (token.type) {
    case 'name':
      return `'${token.value}'`;
    case 'string':
      return JSON.stringify(token.value);
    case 'regexp':
      return `/${token.value}/`;
    case 'number':
      return String(token.value);
    case 'directive':
      return `%${token.value}`;
    case 'operator':
      return `'${token.value}'`;
    case 'newline':
      return 'a line break';
    case 'end':
      return 'the end of the grammar';
    default: {
      const unreachable: never = token;
      return unreachable;
    }
  }
}
