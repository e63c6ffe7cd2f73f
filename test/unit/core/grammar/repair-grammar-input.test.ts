import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { compileGrammar, type ToolGrammar } from '../../../../src/core/grammar/compile-grammar.ts';
import type { GrammarMatcher } from '../../../../src/core/grammar/grammar-matcher.ts';
import { findGrammarRepair, type GrammarRepair } from '../../../../src/core/grammar/repair-grammar-input.ts';
import { isPlainObject, parseJson } from '../../../../src/core/parse-json.ts';
import { FIXTURES_DIRECTORY } from '../../../support/fixtures.ts';

/*
 * Each repair on the shapes models really produce, always verified against the real
 * apply_patch grammar; combinations; and the cases that must stay unrepaired.
 */

const REFERENCE = FIXTURES_DIRECTORY;

function readCapturedGrammar(file: string, tool: string): ToolGrammar {
  const parsed = parseJson(readFileSync(path.join(REFERENCE, 'captures', file), 'utf8'));
  assert.ok(parsed.success && isPlainObject(parsed.value) && Array.isArray(parsed.value.tools));
  const declared = parsed.value.tools.find((candidate) => isPlainObject(candidate) && candidate.name === tool);
  assert.ok(isPlainObject(declared) && isPlainObject(declared.format));
  return { syntax: String(declared.format.syntax), definition: String(declared.format.definition) };
}

function compile(grammar: ToolGrammar): GrammarMatcher {
  const result = compileGrammar(grammar);
  assert.ok(result.success, result.success ? '' : result.reason);
  return result.matcher;
}

const patchMatcher = compile(readCapturedGrammar('b_freeform_apply_patch_gpt-5.5_v0.171.req1.json', 'apply_patch'));
const patch = readFileSync(path.join(REFERENCE, 'backend-examples', 'tricky-input.txt'), 'utf8');
const matchesPatch = (text: string): boolean => patchMatcher.match(text).status === 'match';

function repairPatch(input: string): GrammarRepair | null {
  assert.equal(matchesPatch(input), false, 'the corpus input itself must not match');
  const repair = findGrammarRepair(input, { matches: matchesPatch, patchEnvelope: true });
  if (repair !== null) assert.equal(matchesPatch(repair.input), true, 'a proposed repair always matches');
  return repair;
}

describe('findGrammarRepair: one wrapper', () => {
  it('removes a Markdown code fence (any info string, backticks or tildes)', () => {
    assert.deepEqual(repairPatch(`\`\`\`diff\n${patch}\`\`\``), { input: patch, kinds: ['code_fence'] });
    assert.deepEqual(repairPatch(`\`\`\`\n${patch}\`\`\`\n`), { input: patch, kinds: ['code_fence'] });
    assert.deepEqual(repairPatch(`~~~~patch\n${patch}~~~~`), { input: patch, kinds: ['code_fence'] });
  });

  it('takes the patch out of a shell heredoc (quoted or not, a command before it, a pipe after it)', () => {
    assert.deepEqual(repairPatch(`apply_patch <<'EOF'\n${patch}EOF\n`), { input: patch, kinds: ['shell_heredoc'] });
    assert.deepEqual(repairPatch(`<<"PATCH"\n${patch}PATCH`), { input: patch, kinds: ['shell_heredoc'] });
    assert.deepEqual(repairPatch(`cat <<EOF | apply_patch\n${patch}EOF`), { input: patch, kinds: ['shell_heredoc'] });
  });

  it('unwraps {"input": …}, {"patch": …} and {"command": ["apply_patch", …]} written inside the string', () => {
    assert.deepEqual(repairPatch(JSON.stringify({ input: patch })), { input: patch, kinds: ['json_wrapper'] });
    assert.deepEqual(repairPatch(`{\n  "patch": ${JSON.stringify(patch)}\n}\n`), { input: patch, kinds: ['json_wrapper'] });
    assert.deepEqual(repairPatch(JSON.stringify({ command: ['apply_patch', patch] })), { input: patch, kinds: ['json_wrapper'] });
  });

  it('decodes a patch written as a JSON string literal', () => {
    assert.deepEqual(repairPatch(JSON.stringify(patch)), { input: patch, kinds: ['json_string'] });
  });

  it('removes surrounding whitespace', () => {
    assert.deepEqual(repairPatch(`\n\n  ${patch}  \n`), { input: patch, kinds: ['surrounding_whitespace'] });
  });

  it('rewrites a decorated *** Begin Patch *** / *** End Patch *** line (opencodex#372)', () => {
    const decorated = patch.replace('*** Begin Patch', '*** Begin Patch ***').replace('*** End Patch', '*** End Patch ***');
    assert.deepEqual(repairPatch(decorated), { input: patch, kinds: ['patch_markers'] });
  });
});

describe('findGrammarRepair: endings', () => {
  it('appends a missing *** End Patch, with or without the final newline before it', () => {
    const withoutEnd = patch.replace('*** End Patch\n', '');
    assert.deepEqual(repairPatch(withoutEnd), { input: `${withoutEnd}*** End Patch`, kinds: ['end_patch'] });
    assert.deepEqual(repairPatch(withoutEnd.trimEnd()), { input: `${withoutEnd}*** End Patch`, kinds: ['end_patch'] });
  });

  it('adds a missing final newline where the grammar needs one', () => {
    const lines = compile({ syntax: 'lark', definition: 'start: LINE+\nLINE: /[^\\n]+\\n/\n' });
    const repair = findGrammarRepair('one\ntwo', { matches: (text) => lines.match(text).status === 'match', patchEnvelope: false });
    assert.deepEqual(repair, { input: 'one\ntwo\n', kinds: ['final_newline'] });
  });
});

describe('findGrammarRepair: combinations', () => {
  it('a fence around a JSON object', () => {
    assert.deepEqual(repairPatch(`\`\`\`json\n${JSON.stringify({ input: patch })}\n\`\`\``), { input: patch, kinds: ['code_fence', 'json_wrapper'] });
  });

  it('a heredoc whose patch lacks *** End Patch', () => {
    const withoutEnd = patch.replace('*** End Patch\n', '');
    assert.deepEqual(repairPatch(`apply_patch <<'EOF'\n${withoutEnd}EOF`), { input: `${withoutEnd}*** End Patch`, kinds: ['shell_heredoc', 'end_patch'] });
  });

  it('whitespace around a fence', () => {
    assert.deepEqual(repairPatch(`\n  \`\`\`\n${patch}\`\`\`  \n\n`), { input: patch, kinds: ['code_fence'] });
  });
});

describe('findGrammarRepair: what stays unrepaired', () => {
  it('proposes nothing when no repair makes the input match', () => {
    assert.equal(repairPatch('this is not a patch'), null);
    assert.equal(repairPatch('*** Begin Patch\n*** Modify File: a\n*** End Patch'), null);
    assert.equal(repairPatch(`\`\`\`diff\n--- a/x\n+++ b/x\n\`\`\``), null);
    // A JSON object without a patch key.
    assert.equal(repairPatch(JSON.stringify({ diff: patch })), null);
    // Two envelopes have no single reading.
    assert.equal(repairPatch(`Try this:\n${patch}or this:\n${patch}`), null);
  });

  it('drops the text around exactly one complete envelope (an unterminated fence, a heredoc without its delimiter, prose)', () => {
    assert.deepEqual(repairPatch(`\`\`\`diff\n${patch}`), { input: patch, kinds: ['surrounding_prose'] });
    assert.deepEqual(repairPatch(`apply_patch <<'EOF'\n${patch}`), { input: patch, kinds: ['surrounding_prose'] });
    assert.deepEqual(repairPatch(`Here is the patch:\n\n${patch}\nDone.`), { input: patch, kinds: ['surrounding_prose'] });
  });

  it('does not append *** End Patch when the grammar is not a patch grammar', () => {
    const repair = findGrammarRepair('*** Begin Patch\n*** Delete File: a\n', { matches: matchesPatch, patchEnvelope: false });
    assert.equal(repair, null);
  });

  it('never repairs an exec input that already matches (any non-empty text does)', () => {
    const exec = compile(readCapturedGrammar('c_enable_code_mode_only_qwen3-coder_v0.171.req1.json', 'exec'));
    assert.equal(exec.match('```js\ntext(1)\n```').status, 'match');
    assert.equal(exec.match(JSON.stringify({ input: 'text(1)' })).status, 'match');
    // An empty program stays empty: a newline would match SOURCE but repairs nothing.
    assert.equal(findGrammarRepair('', { matches: (text) => exec.match(text).status === 'match', patchEnvelope: false }), null);
  });
});

describe('findGrammarRepair: never strips a directory change', () => {
  const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+world\n*** End Patch\n';
  const matchesPatch = (text: string): boolean => text === patch;
  for (const opener of ["cd dir && apply_patch <<'EOF'", "env -C dir apply_patch <<'EOF'", 'apply_patch --workdir dir <<EOF', "cd dir; apply_patch <<'EOF'", "pushd dir && apply_patch <<'EOF'", "git -C dir apply <<'EOF'"]) {
    it(opener, () => {
      assert.equal(findGrammarRepair(`${opener}\n${patch}EOF\n`, { matches: matchesPatch, patchEnvelope: true }), null);
      assert.equal(findGrammarRepair(`Run this:\n${opener}\n${patch}EOF\n`, { matches: matchesPatch, patchEnvelope: true }), null);
    });
  }
  it('still strips a heredoc or prose that changes no directory', () => {
    assert.deepEqual(findGrammarRepair(`apply_patch <<'EOF'\n${patch}EOF\n`, { matches: matchesPatch, patchEnvelope: true })?.input, patch);
    assert.deepEqual(findGrammarRepair(`Here is the patch:\n${patch}Done.\n`, { matches: matchesPatch, patchEnvelope: true })?.input, patch);
  });
});
