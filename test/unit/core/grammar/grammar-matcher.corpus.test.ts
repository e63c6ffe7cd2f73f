import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { compileGrammar, type ToolGrammar } from '../../../../src/core/grammar/compile-grammar.ts';
import { describeGrammarMismatch, type GrammarMatcher, type GrammarMismatch } from '../../../../src/core/grammar/grammar-matcher.ts';
import { isPlainObject, parseJson } from '../../../../src/core/parse-json.ts';
import { FIXTURES_DIRECTORY } from '../../../support/fixtures.ts';

/*
 * The real grammars Codex 0.154–0.171 declares (read from the reference pack's captures) against a
 * corpus of valid and invalid payloads, real-world malformations included (models and peer bridges
 * produce them; Codex's own checks are the referee). Each invalid case pins where matching stops and
 * what was expected there.
 */

const REFERENCE = FIXTURES_DIRECTORY;
const CAPTURES = path.join(REFERENCE, 'captures');

function readJson(file: string): unknown {
  const parsed = parseJson(readFileSync(file, 'utf8'));
  assert.ok(parsed.success, `${file} parses`);
  return parsed.value;
}

/** Every custom tool grammar in a capture, wherever it sits (top-level tools, namespaces, the additional_tools carrier). */
function collectCustomGrammars(value: unknown, found: Map<string, ToolGrammar[]>): void {
  if (Array.isArray(value)) {
    for (const element of value) collectCustomGrammars(element, found);
    return;
  }
  if (!isPlainObject(value)) return;
  const format = value.format;
  if (value.type === 'custom' && typeof value.name === 'string' && isPlainObject(format) && typeof format.definition === 'string') {
    const grammar = { syntax: String(format.syntax), definition: format.definition };
    const list = found.get(value.name) ?? [];
    if (!list.some((known) => known.definition === grammar.definition)) list.push(grammar);
    found.set(value.name, list);
  }
  for (const child of Object.values(value)) collectCustomGrammars(child, found);
}

const capturedGrammars = new Map<string, ToolGrammar[]>();
for (const file of readdirSync(CAPTURES).filter((name) => name.endsWith('.json'))) collectCustomGrammars(readJson(path.join(CAPTURES, file)), capturedGrammars);

function onlyGrammar(tool: string): ToolGrammar {
  const grammars = capturedGrammars.get(tool) ?? [];
  assert.equal(grammars.length, 1, `one ${tool} grammar across all captures`);
  return grammars[0] as ToolGrammar;
}

function compile(grammar: ToolGrammar): GrammarMatcher {
  const result = compileGrammar(grammar);
  assert.ok(result.success, result.success ? '' : result.reason);
  return result.matcher;
}

/** The replayed `input` of the first custom_tool_call in a capture. */
function readReplayedInput(file: string): string {
  const body = readJson(path.join(CAPTURES, file));
  assert.ok(isPlainObject(body) && Array.isArray(body.input));
  const call = body.input.find((item) => isPlainObject(item) && item.type === 'custom_tool_call');
  assert.ok(isPlainObject(call) && typeof call.input === 'string');
  return call.input;
}

const patchGrammar = onlyGrammar('apply_patch');
const execGrammar = onlyGrammar('exec');
const patchMatcher = compile(patchGrammar);
const execMatcher = compile(execGrammar);

const trickyInput = readFileSync(path.join(REFERENCE, 'backend-examples', 'tricky-input.txt'), 'utf8');

interface ExpectedMismatch {
  line: number;
  column: number;
  /** Tokens that must be among the expectations. */
  expects: string[];
  endOfInput?: boolean;
}

interface CorpusCase {
  name: string;
  tool: 'apply_patch' | 'exec';
  input: string;
  /** `match`, or where and how it must stop matching. */
  verdict: 'match' | ExpectedMismatch;
}

const HUNK_HEADERS = ['"*** Add File: "', '"*** Delete File: "', '"*** Update File: "'];
const update = (body: string) => `*** Begin Patch\n*** Update File: src/app.py\n${body}*** End Patch\n`;

const CORPUS: CorpusCase[] = [
  // ---------- apply_patch: valid ----------
  { name: 'replayed freeform call (captures b_…req2)', tool: 'apply_patch', input: readReplayedInput('b_freeform_apply_patch_gpt-5.5_v0.171.req2.json'), verdict: 'match' },
  { name: 'tricky input: TAB, quotes, backslash, é, —, emoji, <>&', tool: 'apply_patch', input: trickyInput, verdict: 'match' },
  { name: 'tricky input without the final newline (XML parsers strip it)', tool: 'apply_patch', input: trickyInput.slice(0, -1), verdict: 'match' },
  { name: 'update with a context header and two chunks', tool: 'apply_patch', input: update('@@ def greet():\n-    a = 1\n+    a = 2\n@@ def main():\n     greet()\n+    print("done")\n'), verdict: 'match' },
  { name: 'update with a bare @@', tool: 'apply_patch', input: update('@@\n-x\n+y\n'), verdict: 'match' },
  { name: 'update that starts with change lines, no @@', tool: 'apply_patch', input: update(' import os\n+import sys\n'), verdict: 'match' },
  { name: 'update with Move to', tool: 'apply_patch', input: '*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@\n-x\n+y\n*** End Patch', verdict: 'match' },
  { name: 'rename only (Move to, no change)', tool: 'apply_patch', input: '*** Begin Patch\n*** Update File: a.py\n*** Move to: lib/b.py\n*** End Patch\n', verdict: 'match' },
  { name: 'update ending with *** End of File', tool: 'apply_patch', input: update('@@\n-last line\n+new last line\n*** End of File\n'), verdict: 'match' },
  { name: 'delete only', tool: 'apply_patch', input: '*** Begin Patch\n*** Delete File: old/file.txt\n*** End Patch\n', verdict: 'match' },
  { name: 'add file with an empty added line', tool: 'apply_patch', input: '*** Begin Patch\n*** Add File: a.md\n+# Title\n+\n+text\n*** End Patch\n', verdict: 'match' },
  { name: 'empty context line written as a single space', tool: 'apply_patch', input: update('@@\n def f():\n \n-    pass\n+    return 1\n'), verdict: 'match' },
  { name: 'an added line that itself reads *** End Patch', tool: 'apply_patch', input: '*** Begin Patch\n*** Add File: doc.txt\n+*** End Patch\n*** End Patch\n', verdict: 'match' },
  { name: 'non-ASCII file name', tool: 'apply_patch', input: '*** Begin Patch\n*** Add File: docs/überblick — 概要.md\n+hallo\n*** End Patch', verdict: 'match' },
  {
    name: 'all hunk kinds in one patch',
    tool: 'apply_patch',
    input: '*** Begin Patch\n*** Add File: a.txt\n+a\n*** Delete File: b.txt\n*** Update File: c.txt\n@@ section\n-old\n+new\n*** Update File: d.txt\n*** Move to: e.txt\n@@\n+x\n*** End of File\n*** End Patch\n',
    verdict: 'match',
  },
  // The grammar allows an update header with no change; Codex's parser is stricter here ("Update file hunk … is empty").
  { name: 'update header without changes (grammar allows it)', tool: 'apply_patch', input: '*** Begin Patch\n*** Update File: a.py\n*** End Patch', verdict: 'match' },

  // ---------- apply_patch: real-world malformations ----------
  { name: 'garbage input (captures d_replay_invalid_patch)', tool: 'apply_patch', input: readReplayedInput('d_replay_invalid_patch_v0.171.json'), verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'] } },
  { name: '*** Begin Patch *** (opencodex#372)', tool: 'apply_patch', input: '*** Begin Patch ***\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch ***', verdict: { line: 1, column: 16, expects: ['LF'] } },
  { name: 'JSON {"input": …} inside the string (copilot-api#242)', tool: 'apply_patch', input: JSON.stringify({ input: trickyInput }), verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'] } },
  { name: 'JSON {"patch": …} inside the string (DeepSeek)', tool: 'apply_patch', input: JSON.stringify({ patch: trickyInput }), verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'] } },
  { name: 'JSON {"command": ["apply_patch", …]} (gemma-4, codex#35361)', tool: 'apply_patch', input: JSON.stringify({ command: ['apply_patch', trickyInput] }), verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'] } },
  { name: 'patch as a JSON string literal', tool: 'apply_patch', input: JSON.stringify(trickyInput), verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'] } },
  { name: 'Markdown fence around the patch', tool: 'apply_patch', input: `\`\`\`diff\n${trickyInput}\`\`\``, verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'] } },
  { name: 'shell heredoc (apply_patch <<\'EOF\')', tool: 'apply_patch', input: `apply_patch <<'EOF'\n${trickyInput}EOF\n`, verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'] } },
  {
    name: 'value cut at an embedded </parameter> (Qwen XML parsers)',
    tool: 'apply_patch',
    input: '*** Begin Patch\n*** Update File: tools.xml\n@@\n-  <parameter=a>old',
    verdict: { line: 4, column: 20, expects: ['LF'], endOfInput: true },
  },
  { name: 'missing *** End Patch after a final newline', tool: 'apply_patch', input: '*** Begin Patch\n*** Add File: a\n+x\n', verdict: { line: 4, column: 1, expects: ['"*** End Patch"', '"+"'], endOfInput: true } },
  { name: '*** End Patch cut short', tool: 'apply_patch', input: '*** Begin Patch\n*** Add File: a\n+x\n*** End Pat', verdict: { line: 4, column: 1, expects: ['"*** End Patch"'], endOfInput: true } },
  { name: 'only *** Begin Patch', tool: 'apply_patch', input: '*** Begin Patch\n', verdict: { line: 2, column: 1, expects: HUNK_HEADERS, endOfInput: true } },
  { name: 'empty input', tool: 'apply_patch', input: '', verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'], endOfInput: true } },
  { name: 'unknown hunk header *** Modify File:', tool: 'apply_patch', input: '*** Begin Patch\n*** Modify File: a\n+x\n*** End Patch', verdict: { line: 2, column: 1, expects: HUNK_HEADERS } },
  { name: 'no hunk at all', tool: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n', verdict: { line: 2, column: 1, expects: HUNK_HEADERS } },
  // Codex's parser reads an empty line as empty context; the grammar wants " ".
  { name: 'empty line inside an update hunk', tool: 'apply_patch', input: update('@@\n-x\n\n+y\n'), verdict: { line: 5, column: 1, expects: ['" "', '"+"', '"-"'] } },
  { name: 'context line without its leading space', tool: 'apply_patch', input: update('@@\ndef f():\n+    pass\n'), verdict: { line: 4, column: 1, expects: ['" "', '"@@"'] } },
  { name: 'added line without + in an Add File hunk', tool: 'apply_patch', input: '*** Begin Patch\n*** Add File: a.txt\n+one\ntwo\n*** End Patch\n', verdict: { line: 4, column: 1, expects: ['"+"', '"*** End Patch"'] } },
  { name: 'model chatter after *** End Patch', tool: 'apply_patch', input: '*** Begin Patch\n*** Delete File: a\n*** End Patch\nDone!', verdict: { line: 4, column: 1, expects: ['the end of the input'] } },
  { name: 'leading blank line', tool: 'apply_patch', input: `\n${trickyInput}`, verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'] } },
  { name: 'indented *** Begin Patch', tool: 'apply_patch', input: `  ${trickyInput}`, verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'] } },
  { name: 'lower-case markers', tool: 'apply_patch', input: '*** begin patch\n*** Add File: a\n+x\n*** end patch\n', verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'] } },
  { name: 'unified diff instead of the patch format', tool: 'apply_patch', input: '--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x\n+y\n', verdict: { line: 1, column: 1, expects: ['"*** Begin Patch"'] } },
  { name: 'empty file name', tool: 'apply_patch', input: '*** Begin Patch\n*** Delete File: \n*** End Patch\n', verdict: { line: 2, column: 18, expects: ['/(.+)/'] } },
  { name: '"@@ " with nothing after it', tool: 'apply_patch', input: update('@@ \n-x\n'), verdict: { line: 3, column: 4, expects: ['/(.+)/'] } },
  { name: 'CRLF line ends (Codex strips them; the grammar does not)', tool: 'apply_patch', input: '*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n', verdict: { line: 1, column: 16, expects: ['LF'] } },
  { name: '*** End of File inside an Add File hunk', tool: 'apply_patch', input: '*** Begin Patch\n*** Add File: a\n+x\n*** End of File\n*** End Patch\n', verdict: { line: 4, column: 1, expects: ['"*** End Patch"'] } },
  { name: 'Move to before Update File', tool: 'apply_patch', input: '*** Begin Patch\n*** Move to: b\n*** Update File: a\n*** End Patch\n', verdict: { line: 2, column: 1, expects: HUNK_HEADERS } },

  // ---------- exec (code mode) ----------
  { name: 'replayed exec call (captures c_…req2)', tool: 'exec', input: readReplayedInput('c_enable_code_mode_qwen3-coder_v0.171.req2.json'), verdict: 'match' },
  { name: 'pragma line then code', tool: 'exec', input: '// @exec: {"yield_time_ms": 10000, "max_output_tokens": 1000}\ntext("hi");', verdict: 'match' },
  { name: 'pragma line with CRLF', tool: 'exec', input: '  // @exec: {}\r\ntext(1)', verdict: 'match' },
  // The grammar cannot see JavaScript errors: Codex's V8 reports those.
  { name: 'syntax error (captures d_replay_code_mode_syntax_error)', tool: 'exec', input: readReplayedInput('d_replay_code_mode_syntax_error_v0.171.json'), verdict: 'match' },
  { name: 'a single newline', tool: 'exec', input: '\n', verdict: 'match' },
  { name: 'empty program', tool: 'exec', input: '', verdict: { line: 1, column: 1, expects: ['PRAGMA_LINE', 'SOURCE'], endOfInput: true } },
];

function assertVerdict(corpusCase: CorpusCase, matcher: GrammarMatcher): void {
  const result = matcher.match(corpusCase.input);
  const verdict = corpusCase.verdict;
  if (verdict === 'match') {
    assert.equal(result.status, 'match', result.status === 'mismatch' ? describeGrammarMismatch(result.mismatch) : result.status);
    return;
  }
  assert.equal(result.status, 'mismatch');
  const mismatch = (result as { mismatch: GrammarMismatch }).mismatch;
  assert.deepEqual([mismatch.line, mismatch.column], [verdict.line, verdict.column], describeGrammarMismatch(mismatch));
  for (const token of verdict.expects) assert.ok(mismatch.expected.includes(token), `${token} expected in ${JSON.stringify(mismatch.expected)}`);
  assert.equal(mismatch.endOfInput, verdict.endOfInput ?? false);
}

describe('grammars captured from Codex', () => {
  it('finds one apply_patch grammar (0.154 = 0.171) and one exec grammar, both compilable', () => {
    assert.deepEqual([...capturedGrammars.keys()].sort(), ['apply_patch', 'exec']);
    assert.equal(patchGrammar.syntax, 'lark');
    assert.match(patchGrammar.definition, /%import common\.LF/);
    assert.match(execGrammar.definition, /PRAGMA_LINE/);
  });
});

describe('grammar corpus: real grammars against valid and invalid payloads', () => {
  it('has at least 40 cases, both verdicts for both tools', () => {
    assert.ok(CORPUS.length >= 40, `${CORPUS.length} cases`);
    for (const tool of ['apply_patch', 'exec'] as const) {
      assert.ok(CORPUS.some((corpusCase) => corpusCase.tool === tool && corpusCase.verdict === 'match'));
      assert.ok(CORPUS.some((corpusCase) => corpusCase.tool === tool && corpusCase.verdict !== 'match'));
    }
  });

  for (const corpusCase of CORPUS) {
    it(`${corpusCase.tool}: ${corpusCase.name}`, () => assertVerdict(corpusCase, corpusCase.tool === 'exec' ? execMatcher : patchMatcher));
  }
});

describe('mismatch messages', () => {
  const describeMismatchOf = (input: string) => {
    const result = patchMatcher.match(input);
    assert.equal(result.status, 'mismatch');
    return describeGrammarMismatch((result as { mismatch: GrammarMismatch }).mismatch);
  };

  it('names the line, the column, the expected tokens and what was found', () => {
    assert.equal(describeMismatchOf('this is not a patch'), 'line 1, column 1: expected "*** Begin Patch" (in begin_patch), found "this is not a patch"');
    assert.equal(describeMismatchOf('*** Begin Patch ***\n*** Delete File: a\n*** End Patch'), 'line 1, column 16: expected LF (in begin_patch), found " ***"');
  });

  it('points at the start of a broken literal, not at the character where it broke', () => {
    assert.equal(
      describeMismatchOf('*** Begin Patch\n*** Modify File: a\n*** End Patch'),
      'line 2, column 1: expected "*** Add File: ", "*** Delete File: " or "*** Update File: ", found "*** Modify File: a"',
    );
  });

  it('gives the shortest valid ending when the input stops too early', () => {
    assert.equal(
      describeMismatchOf('*** Begin Patch\n*** Add File: a\n+x\n*** End Pat'),
      'line 4, column 1: expected "*** End Patch" (in end_patch), found "*** End Pat" and then the end of the input; the shortest valid ending adds "ch"',
    );
    assert.match(describeMismatchOf('*** Begin Patch\n*** Update File: a.xml\n@@\n+<parameter=x>'), /found the end of the input; the shortest valid ending adds "\\n\*\*\* End Patch"$/);
  });

  it('counts columns in characters, not UTF-16 units', () => {
    const result = patchMatcher.match('*** Begin Patch\n*** Add File: 👋👋\n+x\nbad\n*** End Patch');
    assert.equal(result.status, 'mismatch');
    assert.deepEqual([(result as { mismatch: GrammarMismatch }).mismatch.line, (result as { mismatch: GrammarMismatch }).mismatch.column], [4, 1]);
    const emoji = compile({ syntax: 'lark', definition: 'start: "👋"+ "!"\n' }).match('👋👋?');
    assert.equal(emoji.status === 'mismatch' && emoji.mismatch.column, 3);
  });

  it('shortens what was found on long lines', () => {
    const result = patchMatcher.match(`*** Begin Patch\n${'x'.repeat(500)}`);
    assert.equal(result.status === 'mismatch' && result.mismatch.found, `${'x'.repeat(60)}…`);
  });
});

describe('large and hostile inputs (guarded by a timeout, measured in the bench notes)', () => {
  function createLargePatch(targetLength: number): string {
    const lines = ['*** Begin Patch'];
    let length = 0;
    for (let index = 0; length < targetLength; index += 1) {
      if (index % 200 === 0) lines.push(`*** Update File: src/module_${index}.ts`, `@@ export function handler${index}() {`);
      const marker = index % 3 === 0 ? '+' : index % 3 === 1 ? '-' : ' ';
      const line = `${marker}    const value${index} = compute("é — 👋", ${index}); // keep the line long enough`;
      lines.push(line);
      length += line.length + 1;
    }
    lines.push('*** End Patch', '');
    return lines.join('\n');
  }

  it('matches a 5 MB patch and locates an error at its very end', { timeout: 5_000 }, () => {
    const patch = createLargePatch(5 * 1024 * 1024);
    assert.ok(patch.length > 5 * 1024 * 1024);
    assert.equal(patchMatcher.match(patch).status, 'match');
    const cut = patchMatcher.match(patch.slice(0, -16));
    assert.equal(cut.status, 'mismatch');
    assert.equal(cut.status === 'mismatch' && cut.mismatch.endOfInput, true);
    assert.equal(cut.status === 'mismatch' && cut.mismatch.completion, '\n*** End Patch');
  });

  it('stays linear on inputs that make backtracking regex engines explode', { timeout: 5_000 }, () => {
    // One 5-million-character added line that never ends: `(.*)` followed by LF, never found.
    const longLine = patchMatcher.match(`*** Begin Patch\n*** Add File: a\n+${'+'.repeat(5_000_000)}`);
    assert.equal(longLine.status === 'mismatch' && longLine.mismatch.line, 3);
    // 200,000 hunks, each a prefix of a valid continuation, and no end.
    const manyHunks = patchMatcher.match(`*** Begin Patch\n${'*** Update File: a\n@@\n'.repeat(200_000)}`);
    assert.equal(manyHunks.status === 'mismatch' && manyHunks.mismatch.endOfInput, true);
    // Near-miss markers over and over: every line shares a long prefix with several tokens.
    const nearMisses = patchMatcher.match(`*** Begin Patch\n*** Add File: a\n${'+*** End Patc\n'.repeat(300_000)}*** End Patc`);
    assert.equal(nearMisses.status === 'mismatch' && nearMisses.mismatch.line, 300_003);
    // exec's SOURCE accepts anything: 5 MB of code is one pass.
    assert.equal(execMatcher.match(`// @exec: {}\n${'text("x");\n'.repeat(500_000)}`).status, 'match');
  });

  it('checks a patch made of tens of thousands of distinct characters (every one a new DFA transition)', { timeout: 5_000 }, () => {
    const characters: string[] = [];
    for (let codePoint = 0x4e00; codePoint <= 0x9fff; codePoint += 1) characters.push(String.fromCodePoint(codePoint));
    for (let codePoint = 0x1f300; codePoint <= 0x1faff; codePoint += 1) characters.push(String.fromCodePoint(codePoint));
    const lines: string[] = [];
    for (let start = 0; start < characters.length; start += 64) lines.push(`+${characters.slice(start, start + 64).join('')}`);
    const patch = `*** Begin Patch\n*** Add File: 字典.txt\n${lines.join('\n')}\n*** Update File: b\n@@ ${characters.slice(0, 500).join('')}\n ${characters.slice(500, 1000).join('')}\n*** End Patch\n`;
    assert.equal(patchMatcher.match(patch).status, 'match');
  });

  it('stays linear on a classic catastrophic pattern written as a grammar', { timeout: 5_000 }, () => {
    // (a+)+b on "aaaa…a": exponential for a backtracking engine, one pass here.
    const matcher = compile({ syntax: 'lark', definition: 'start: ("a"+)+ "b"\n' });
    const result = matcher.match('a'.repeat(1_000_000));
    assert.equal(result.status === 'mismatch' && result.mismatch.endOfInput, true);
    const regex = compile({ syntax: 'regex', definition: '(x+x+)+y' });
    assert.equal(regex.match('x'.repeat(100_000)).status, 'mismatch');
  });
});
