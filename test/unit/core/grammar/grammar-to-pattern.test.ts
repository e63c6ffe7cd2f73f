import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { compileGrammar, type ToolGrammar } from '../../../../src/core/grammar/compile-grammar.ts';
import { checkEnginePattern, compileGrammarToPattern, MAX_ENGINE_PATTERN_LENGTH, MAX_NESTED_REPEAT_COPIES, PATTERN_FORMS, type PatternForm } from '../../../../src/core/grammar/grammar-to-pattern.ts';
import { isPlainObject, parseJson } from '../../../../src/core/parse-json.ts';
import { fixturePath } from '../../../support/fixtures.ts';

/*
 * Codex's grammars as engine patterns: every payload the grammar matcher accepts must match the
 * pattern (JSON-escaped for the escaped-text form, as is for the value form) and every payload it
 * rejects must not. The matcher is the referee; the pattern must agree with it in both directions.
 */

function readJson(file: string): Record<string, unknown> {
  const parsed = parseJson(readFileSync(file, 'utf8'));
  assert.ok(parsed.success && isPlainObject(parsed.value), file);
  return parsed.value;
}

function grammarOf(capture: string, tool: string): ToolGrammar {
  const tools = readJson(fixturePath('captures', capture)).tools;
  assert.ok(Array.isArray(tools));
  const found = tools.find((entry) => isPlainObject(entry) && entry.name === tool);
  assert.ok(isPlainObject(found) && isPlainObject(found.format) && typeof found.format.definition === 'string');
  return { syntax: String(found.format.syntax), definition: found.format.definition };
}

/** Every custom_tool_call input the SSE fixtures carry: payloads Codex actually received. */
function ssePatches(): string[] {
  const found = new Set<string>();
  for (const file of readdirSync(fixturePath('sse')).filter((name) => name.endsWith('.json'))) {
    const text = readFileSync(fixturePath('sse', file), 'utf8');
    for (const match of text.matchAll(/"input":("\*\*\* Begin Patch(?:[^"\\]|\\.)*")/g)) found.add(JSON.parse(match[1] as string) as string);
  }
  return [...found];
}

function replayedInput(capture: string): string {
  const input = readJson(fixturePath('captures', capture)).input;
  assert.ok(Array.isArray(input));
  const call = input.find((item) => isPlainObject(item) && item.type === 'custom_tool_call');
  assert.ok(isPlainObject(call) && typeof call.input === 'string');
  return call.input;
}

function subject(value: string, form: PatternForm): string {
  return form === 'escaped-text' ? JSON.stringify(value).slice(1, -1) : value;
}

function patternFor(grammar: ToolGrammar, form: PatternForm): RegExp {
  const result = compileGrammarToPattern(grammar, form);
  assert.ok(result.success, result.success ? '' : result.reason);
  assert.equal(checkEnginePattern(result.pattern), null);
  return new RegExp(result.pattern, 'u');
}

const patchGrammar = grammarOf('b_freeform_apply_patch_gpt-5.5_v0.171.req1.json', 'apply_patch');
const execGrammar = grammarOf('c_enable_code_mode_qwen3-coder_v0.171.req1.json', 'exec');
const tricky = readFileSync(fixturePath('backend-examples', 'tricky-input.txt'), 'utf8');
/** The escaped form leaves out control characters JSON can only write as `\u00XX` (tab, CR and the like stay). */
const hasUnusualControl = (line: string): boolean => Array.from(line).some((character) => character < ' ' && !'\t\r\b\f'.includes(character));
const update = (body: string): string => `*** Begin Patch\n*** Update File: src/app.py\n${body}*** End Patch\n`;

const VALID_PATCHES = [
  ...ssePatches(),
  '*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch',
  '*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n',
  update('@@ def main():\n-    print("a\\tb")\n+    print(\'c\', "\\\\")\n \tindented\n*** End of File\n'),
  '*** Begin Patch\n*** Update File: a.ts\n*** Move to: b/ü 👋.ts\n@@\n-x\n+y\r\n*** End Patch',
  `*** Begin Patch\n*** Add File: tricky.txt\n${tricky.split('\n').filter((line) => !hasUnusualControl(line)).map((line) => `+${line}\n`).join('')}*** End Patch\n`,
];

const INVALID_PATCHES = [
  replayedInput('d_replay_invalid_patch_v0.171.json'),
  '',
  '*** Begin Patch\n*** End Patch',
  '*** Begin Patch\n*** Add File: a\n*** End Patch',
  '*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch',
  '*** Begin Patch\n*** Update File: a\n@@\n+x\n*** End Patch\n\n',
  '*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nextra',
  '*** Begin Patch\n*** Frobnicate File: a\n*** End Patch',
  ' *** Begin Patch\n*** Delete File: a\n*** End Patch',
];

describe('grammar to engine pattern', () => {
  const referee = compileGrammar(patchGrammar);
  assert.ok(referee.success);

  for (const form of ['escaped-text', 'value'] as const) {
    it(`apply_patch, ${form} form: accepts every valid patch and rejects every invalid one, as the grammar does`, () => {
      const pattern = patternFor(patchGrammar, form);
      for (const patch of VALID_PATCHES) {
        assert.equal(referee.matcher.match(patch).status === 'match', true, `the grammar accepts ${JSON.stringify(patch.slice(0, 80))}`);
        assert.ok(pattern.test(subject(patch, form)), `${form} pattern accepts ${JSON.stringify(patch.slice(0, 120))}`);
      }
      for (const patch of INVALID_PATCHES) {
        assert.equal(referee.matcher.match(patch).status === 'match', false, `the grammar rejects ${JSON.stringify(patch.slice(0, 80))}`);
        assert.equal(pattern.test(subject(patch, form)), false, `${form} pattern rejects ${JSON.stringify(patch.slice(0, 120))}`);
      }
    });

    it(`exec (code mode), ${form} form: compiles and agrees with the grammar`, () => {
      const pattern = patternFor(execGrammar, form);
      const exec = compileGrammar(execGrammar);
      assert.ok(exec.success);
      for (const source of ['// @exec: {"yield_time_ms": 10}\nconsole.log("hi\\n")', 'text("x")\r\nmore', '  \t// @exec:\n\t"quoted"']) {
        assert.equal(exec.matcher.match(source).status === 'match', true);
        assert.ok(pattern.test(subject(source, form)), JSON.stringify(source));
      }
      assert.equal(pattern.test(''), false);
    });
  }

  it('the escaped form never lets a raw newline or quote through, and a value-form text is not a valid escaped text', () => {
    const pattern = patternFor(patchGrammar, 'escaped-text');
    assert.equal(pattern.test('*** Begin Patch\n*** Delete File: a\n*** End Patch'), false);
    assert.equal(pattern.test('*** Begin Patch\\n*** Delete File: a"b\\n*** End Patch'), false);
    assert.equal(pattern.test('*** Begin Patch\\n*** Delete File: a\\"b\\n*** End Patch'), true);
    // A lone backslash is no JSON escape; `\u000a` would smuggle a newline into a file name.
    assert.equal(pattern.test('*** Begin Patch\\n*** Delete File: a\\qb\\n*** End Patch'), false);
    assert.equal(pattern.test('*** Begin Patch\\n*** Delete File: a\\nb\\n*** End Patch'), false);
  });

  it('is compact: one pattern, a few hundred characters, only constructs llama.cpp reads', () => {
    const result = compileGrammarToPattern(patchGrammar, 'escaped-text');
    assert.ok(result.success);
    assert.ok(result.pattern.length < 800, `${result.pattern.length} characters`);
    assert.doesNotMatch(result.pattern, /\(\?|\\[sdwSDW]/);
  });

  it('refuses grammars it cannot write exactly, with the reason', () => {
    const recursive = compileGrammarToPattern({ syntax: 'lark', definition: 'start: "(" start ")" | "x"\n' }, 'value');
    assert.deepEqual(recursive, { success: false, reason: "'start' refers to itself; only grammars without recursion can be written as a pattern" });
    const shorthand = compileGrammarToPattern({ syntax: 'lark', definition: 'start: /\\d+/\n' }, 'escaped-text');
    assert.equal(shorthand.success, false);
    assert.match(shorthand.success ? '' : shorthand.reason, /\\d, \\w or \\s/);
    const ignored = compileGrammarToPattern({ syntax: 'lark', definition: 'start: "a" "b"\n%ignore " "\n' }, 'value');
    assert.equal(ignored.success, false);
    const long = compileGrammarToPattern({ syntax: 'lark', definition: `start: "${'x'.repeat(MAX_ENGINE_PATTERN_LENGTH)}"\n` }, 'value');
    assert.match(long.success ? '' : long.reason, /over the 2000 cap/);
    assert.equal(compileGrammarToPattern({ syntax: 'other', definition: 'x' }, 'value').success, false);
  });

  it('checks a pattern before it is sent: anchors, shorthand classes, lookaround, reversed ranges, validity', () => {
    assert.equal(checkEnginePattern('^a{2,3}(b|c)[^\\x0a]$'), null);
    assert.match(checkEnginePattern('a+$') ?? '', /not anchored/);
    assert.match(checkEnginePattern('^a+') ?? '', /not anchored/);
    assert.match(checkEnginePattern('^a\\$') ?? '', /not anchored/);
    assert.match(checkEnginePattern('^\\s+$') ?? '', /\\s/);
    assert.match(checkEnginePattern('^(?=a)a$') ?? '', /\(\? group/);
    assert.match(checkEnginePattern('^(?i)a$') ?? '', /\(\? group/);
    assert.match(checkEnginePattern('^a{5,2}$') ?? '', /reversed range \{5,2\}/);
    assert.match(checkEnginePattern('^a(b$') ?? '', /not a valid regular expression/);
    assert.match(checkEnginePattern('^a|^b$') ?? '', /anchor inside/);
    assert.match(checkEnginePattern(`^${'a'.repeat(MAX_ENGINE_PATTERN_LENGTH)}$`) ?? '', /cap/);
  });
});

/*
 * An engine writes a counted repeat out as that many copies of its item, and follows every way a
 * repeat of something that can match nothing may split the text: patterns like these froze
 * llama-server for minutes. They are refused before they are sent.
 */
describe('compileGrammarToPattern: repetition an engine cannot afford', () => {
  function refusal(definition: string, syntax = 'regex'): string {
    for (const form of PATTERN_FORMS) {
      const result = compileGrammarToPattern({ syntax, definition }, form);
      assert.equal(result.success, false, `${definition} (${form}) was accepted: ${result.success ? result.pattern : ''}`);
    }
    const result = compileGrammarToPattern({ syntax, definition }, 'value');
    return result.success ? '' : result.reason;
  }

  it('refuses nested counted repeats whose counts multiply past the cap', () => {
    assert.equal(refusal('(a{0,1000}){0,1000}'), `the pattern nests counted repeats that multiply to 1000000 copies (over the ${MAX_NESTED_REPEAT_COPIES} cap): (a{0,1000}){0,1000}`);
    assert.match(refusal('((a?){1000}){1000}'), /repeats something that can match nothing|multiply to 1000000 copies/);
    assert.match(refusal('(x(ab{0,10}){0,20}y){0,10}'), /multiply to 2000 copies \(over the 1000 cap\): \(x\(ab\{0,10\}\)\{0,20\}y\)\{0,10\}$/);
    assert.match(refusal('start: ("a"~0..1000)~0..1000\n', 'lark'), /multiply to 1000000 copies/);
  });

  it('refuses repeating what can match nothing: (a*)*, (a?)*, (|a)+, (a?){1000}', () => {
    assert.equal(refusal('(a*)*'), 'the pattern repeats something that can match nothing, which an engine may try every way of splitting: (a*)*');
    assert.match(refusal('(a?)*'), /can match nothing.*: \(a\?\)\*$/);
    assert.match(refusal('(|a)+'), /can match nothing/);
    assert.match(refusal('(a*|b)+'), /can match nothing/);
    assert.match(refusal('(a?b?){2,}'), /can match nothing/);
    assert.match(refusal('(a?){1000}'), /can match nothing/);
    assert.match(refusal('start: ("a"*)*\n', 'lark'), /can match nothing/);
  });

  it('checks a pattern given as text the same way', () => {
    assert.match(checkEnginePattern('^(a{0,1000}){0,1000}$') ?? '', /multiply to 1000000 copies/);
    assert.match(checkEnginePattern('^((a?){1000}){1000}$') ?? '', /can match nothing|multiply/);
    assert.match(checkEnginePattern('^(a*)*$') ?? '', /can match nothing/);
    assert.match(checkEnginePattern('^([a\\)]*)*$') ?? '', /can match nothing/);
  });

  it('still accepts bounded repetition and the real grammars', () => {
    for (const pattern of ['^a{0,1000}$', '^(ab{2,5}){0,200}$', '^(a+b?)*$', '^([a-z]+ )*end$', '^x(y|z)?$', '^(a?)?$', '^(a?b)*$', '^[(*]*$', '^\\(+$', `^(a{0,${MAX_NESTED_REPEAT_COPIES}})$`]) {
      assert.equal(checkEnginePattern(pattern), null, pattern);
    }
    for (const form of PATTERN_FORMS) {
      for (const grammar of [patchGrammar, execGrammar]) {
        const result = compileGrammarToPattern(grammar, form);
        assert.ok(result.success, result.success ? '' : result.reason);
      }
    }
  });
});
