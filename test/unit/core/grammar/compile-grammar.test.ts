import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileGrammar, type ToolGrammar } from '../../../../src/core/grammar/compile-grammar.ts';
import { describeGrammarMismatch, type GrammarMatcher } from '../../../../src/core/grammar/grammar-matcher.ts';

/*
 * The Lark subset the matcher compiles, and the grammars it refuses (reported, never thrown).
 * Verdicts are whole-input matches.
 */

function compileLark(definition: string): GrammarMatcher {
  const result = compileGrammar({ syntax: 'lark', definition });
  assert.ok(result.success, result.success ? '' : result.reason);
  return result.matcher;
}

function verdicts(matcher: GrammarMatcher, inputs: readonly string[]): Record<string, string> {
  return Object.fromEntries(inputs.map((input) => [input, matcher.match(input).status]));
}

function refusal(grammar: ToolGrammar): string {
  const result = compileGrammar(grammar);
  assert.equal(result.success, false, `${JSON.stringify(grammar.definition)} should not compile`);
  return result.success ? '' : result.reason;
}

describe('compileGrammar: the Lark subset', () => {
  it('inlines rules and terminals, with string literals and regexps', () => {
    const matcher = compileLark('start: greeting NAME\ngreeting: "hello" " "\nNAME: /[a-z]+/\n');
    assert.deepEqual(verdicts(matcher, ['hello bob', 'hello ', 'hello Bob', 'hellobob']), {
      'hello bob': 'match',
      'hello ': 'mismatch',
      'hello Bob': 'mismatch',
      hellobob: 'mismatch',
    });
  });

  it('reads ?, *, +, |, grouping, [optional] and ~ repetition', () => {
    const matcher = compileLark('start: "a"? ("b" | "c")* "d"+ ["e"] "f" ~ 2 "g" ~ 1..2\n');
    assert.deepEqual(verdicts(matcher, ['dffg', 'abcbdddeffgg', 'dfg', 'dffggg', 'adffg', 'bdeeffg']), {
      dffg: 'match',
      abcbdddeffgg: 'match',
      dfg: 'mismatch',
      dffggg: 'mismatch',
      adffg: 'match',
      bdeeffg: 'mismatch',
    });
  });

  it('ignores aliases, rule modifiers and priorities, and skips // and # comments', () => {
    const matcher = compileLark(
      [
        '// a comment line',
        '?start.2: item+ -> items   // trailing comment',
        '!item: "x" -> ex',
        '     | "y"',
        '     | _NUMBER # hash comment',
        '_NUMBER.5: "0".."9"+',
        '',
      ].join('\n'),
    );
    assert.deepEqual(verdicts(matcher, ['xy12x', 'x', '', 'xz']), { xy12x: 'match', x: 'match', '': 'mismatch', xz: 'mismatch' });
  });

  it('reads multi-line alternatives and parenthesised line breaks', () => {
    const matcher = compileLark('start: "a"\n     | "b"\n     | ("c"\n        | "d")\n');
    assert.deepEqual(verdicts(matcher, ['a', 'b', 'c', 'd', 'e']), { a: 'match', b: 'match', c: 'match', d: 'match', e: 'mismatch' });
  });

  it('imports terminals from Lark\'s common library, by name, in a list, or under an alias', () => {
    const matcher = compileLark('start: CNAME "=" NUMBER EOL\n%import common (CNAME, NUMBER)\n%import common.LF -> EOL\n');
    assert.deepEqual(verdicts(matcher, ['x_1=2.5e3\n', 'x=7\n', '1x=7\n', 'x=\n']), { 'x_1=2.5e3\n': 'match', 'x=7\n': 'match', '1x=7\n': 'mismatch', 'x=\n': 'mismatch' });
    const strings = compileLark('start: ESCAPED_STRING\n%import common.ESCAPED_STRING\n');
    assert.deepEqual(verdicts(strings, ['"a\\"b"', '"a"b"', '"\\\\"']), { '"a\\"b"': 'match', '"a"b"': 'mismatch', '"\\\\"': 'match' });
  });

  it('allows %ignore text between tokens but not inside them', () => {
    const matcher = compileLark('start: WORD ("," WORD)*\n%import common.WORD\n%import common.WS\n%ignore WS\n');
    assert.deepEqual(verdicts(matcher, ['a, b ,c', ' a ', 'a b', 'a,,b']), { 'a, b ,c': 'match', ' a ': 'match', 'a b': 'mismatch', 'a,,b': 'mismatch' });
    const result = matcher.match('a,,b');
    assert.equal(result.status === 'mismatch' && describeGrammarMismatch(result.mismatch), 'line 1, column 3: expected WORD (in start), found ",b"');
  });

  it('reads string escapes, the i flag on literals, ranges and regexp flags', () => {
    const matcher = compileLark('start: "Tab\\t"i "a".."c" /x.y/s /[é-ë]+/i\n');
    assert.deepEqual(verdicts(matcher, ['TAB\tbx\nyé', 'tab\tcx-yËÉ', 'tab\tdx-yé', 'tab\tbx\nyf']), {
      'TAB\tbx\nyé': 'match',
      'tab\tcx-yËÉ': 'match',
      'tab\tdx-yé': 'mismatch',
      'tab\tbx\nyf': 'mismatch',
    });
  });

  it('follows Python semantics where JavaScript differs: `.` takes \\r and U+2028, \\s takes U+001C, \\d takes other digits', () => {
    const matcher = compileLark('start: /a.b/ /\\s/ /\\d+/\n');
    assert.deepEqual(verdicts(matcher, ['a\rb\u001c12', 'a\u2028b 3', 'a\nb 1', 'ab\u0661\u0662', 'a-b \u0661']), {
      'a\rb\u001c12': 'match',
      'a\u2028b 3': 'match',
      'a\nb 1': 'mismatch',
      'ab\u0661\u0662': 'mismatch',
      'a-b \u0661': 'match',
    });
  });

  it('reads regexp groups, classes, escapes, counted repetition, lazy quantifiers and inline flags', () => {
    const matcher = compileLark('start: /(?P<word>[a-c]{2,3})(?:-\\x41|\\u00e9)?[^\\]\\\\x]*?(?i:Q)(?#comment)\\.\\//\n');
    assert.deepEqual(verdicts(matcher, ['ab-Azzq./', 'abcéq./', 'a-Aq./', 'ab]q./', 'abxq./', 'abQ./']), {
      'ab-Azzq./': 'match',
      'abcéq./': 'match',
      'a-Aq./': 'mismatch',
      'ab]q./': 'mismatch',
      'abxq./': 'mismatch',
      'abQ./': 'match',
    });
  });

  it('compiles regex-syntax grammars (format.syntax "regex") as a whole-input pattern', () => {
    const result = compileGrammar({ syntax: 'regex', definition: '(?i)hello \\d{2,3}' });
    assert.ok(result.success);
    assert.deepEqual(verdicts(result.matcher, ['HELLO 12', 'hello 1234', 'hello 1']), { 'HELLO 12': 'match', 'hello 1234': 'mismatch', 'hello 1': 'mismatch' });
    const mismatch = result.matcher.match('hello 1');
    assert.equal(mismatch.status === 'mismatch' && describeGrammarMismatch(mismatch.mismatch), 'line 1, column 8: expected \\d, found the end of the input; the shortest valid ending adds "0"');
  });

  it('agrees with a backtracking RegExp on a regular pattern both engines read alike (property)', () => {
    const pattern = '(a|bc)*c?(ab|b)+';
    const reference = new RegExp(`^(?:${pattern})$`);
    const result = compileGrammar({ syntax: 'regex', definition: pattern });
    assert.ok(result.success);
    const matcher = result.matcher;
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 12 }), (input) => {
        assert.equal(matcher.match(input).status === 'match', reference.test(input), JSON.stringify(input));
      }),
      { numRuns: 500 },
    );
  });
});

describe('compileGrammar: grammars it cannot compile are reported, never thrown', () => {
  it('refuses recursion: only regular grammars inline', () => {
    assert.match(refusal({ syntax: 'lark', definition: 'start: list\nlist: "a" list | "a"\n' }), /'list' refers to itself/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: "(" start ")" | "x"\n' }), /'start' refers to itself/);
  });

  it('refuses what a regular matcher cannot express', () => {
    assert.match(refusal({ syntax: 'lark', definition: 'start: A\nA: /(?=a)a/\n' }), /lookarounds/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: A\nA: /(a)\\1/\n' }), /back-references/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: A\nA: /^a$/\n' }), /anchor '\^'/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: A\nA: /a\\b/\n' }), /anchor '\\b'/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: A\nA: /a++/\n' }), /possessive/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: A\nA: /a{1,5000}/\n' }), /repetition counts above 1000/);
  });

  it('refuses Lark features outside the subset', () => {
    assert.match(refusal({ syntax: 'lark', definition: 'start: pair{"a"}\n' }), /templates/);
    assert.match(refusal({ syntax: 'lark', definition: '%declare INDENT\nstart: "a"\n' }), /%declare directive is not supported/);
    assert.match(refusal({ syntax: 'lark', definition: '%import .other.X\nstart: "a"\n' }), /expected a name/);
    assert.match(refusal({ syntax: 'lark', definition: '%import python.NAME\nstart: NAME\n' }), /only Lark's 'common' library/);
  });

  it('refuses broken grammars with the line that broke', () => {
    assert.match(refusal({ syntax: 'lark', definition: 'item: "a"\n' }), /no 'start' rule/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: B\n' }), /'B' is used but not defined/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: "a"\nstart: "b"\n' }), /'start' is defined twice on line 2/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: "a\n' }), /unterminated string on line 1/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: /a(/\n' }), /missing '\)'/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: A\nA: item\nitem: "a"\n' }), /terminal A refers to rule 'item'/);
    assert.match(refusal({ syntax: 'lark', definition: 'start: "a" ) "b"\n' }), /unexpected '\)' on line 1/);
  });

  it('refuses unknown grammar syntaxes and oversized expansions', () => {
    assert.match(refusal({ syntax: 'ebnf', definition: 'start ::= "a"' }), /grammar syntax 'ebnf' is not supported/);
    // Every level doubles the inlined size: 2^20 copies of "a".
    const levels = Array.from({ length: 20 }, (_, index) => `r${index}: r${index + 1} r${index + 1}`).join('\n');
    assert.match(refusal({ syntax: 'lark', definition: `start: r0\n${levels}\nr20: "a"\n` }), /more than 200000 automaton states/);
  });
});
