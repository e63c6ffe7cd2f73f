import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkGrammarInput, type CheckGrammarInputOptions } from '../../../../src/core/grammar/check-grammar-input.ts';
import type { ToolGrammar } from '../../../../src/core/grammar/compile-grammar.ts';
import { createGrammarCache } from '../../../../src/core/grammar/grammar-cache.ts';
import { renderGrammarExample } from '../../../../src/core/grammar/render-grammar-example.ts';
import { isPlainObject, parseJson } from '../../../../src/core/parse-json.ts';
import { FIXTURES_DIRECTORY } from '../../../support/fixtures.ts';

/*
 * The lift-time check as the lifters call it: warnings, opt-in repair, the per-cache "reported
 * once" rule for grammars that cannot be compiled, the cache bound, and the description examples.
 */

const REFERENCE = FIXTURES_DIRECTORY;

function readCapturedGrammar(file: string, tool: string): ToolGrammar {
  const parsed = parseJson(readFileSync(path.join(REFERENCE, 'captures', file), 'utf8'));
  assert.ok(parsed.success && isPlainObject(parsed.value) && Array.isArray(parsed.value.tools));
  const declared = parsed.value.tools.find((candidate) => isPlainObject(candidate) && candidate.name === tool);
  assert.ok(isPlainObject(declared) && isPlainObject(declared.format));
  return { syntax: String(declared.format.syntax), definition: String(declared.format.definition) };
}

const patchGrammar = readCapturedGrammar('b_freeform_apply_patch_gpt-5.5_v0.171.req1.json', 'apply_patch');
const execGrammar = readCapturedGrammar('c_enable_code_mode_only_qwen3-coder_v0.171.req1.json', 'exec');
const patch = '*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\n';
const uncompilable: ToolGrammar = { syntax: 'lark', definition: 'start: "(" start ")" | "x"\n' };

function check(fields: Partial<CheckGrammarInputOptions> & Pick<CheckGrammarInputOptions, 'input'>) {
  return checkGrammarInput({ tool: 'apply_patch', callId: 'call_1', grammar: patchGrammar, cache: createGrammarCache(), repair: false, ...fields });
}

describe('checkGrammarInput', () => {
  it('passes a matching input through without warnings', () => {
    assert.deepEqual(check({ input: patch }), { input: patch, warnings: [], repaired: false });
  });

  it('warns with the line Codex rejects and delivers the input unchanged when only a risky repair would fix it', () => {
    const input = patch.replace('*** End Patch\n', '');
    assert.deepEqual(check({ input }), {
      input,
      repaired: false,
      warnings: [
        {
          kind: 'grammar_mismatch',
          tool: 'apply_patch',
          callId: 'call_1',
          detail: `Codex will reject this apply_patch input: line ${input.split('\n').length - 1}: the last line must be '*** End Patch'; grammar repair (off) would fix it: appended the missing "*** End Patch" line`,
          raw: input,
        },
      ],
    });
  });

  it('rescues a JSON-wrapped patch whatever the repair setting, with a grammar_repaired warning showing before and after', () => {
    const input = JSON.stringify({ input: patch });
    for (const repair of [false, true]) {
      const result = check({ input, repair });
      assert.equal(result.input, patch);
      assert.equal(result.repaired, true);
      assert.deepEqual(result.warnings, [
        {
          kind: 'grammar_repaired',
          tool: 'apply_patch',
          callId: 'call_1',
          detail: `Codex would reject this apply_patch input (line 1: the first line must be '*** Begin Patch'); delivered it repaired: took the patch out of the JSON object it was wrapped in. Before: ${JSON.stringify(input)}. After: ${JSON.stringify(patch)}`,
          raw: input,
        },
      ]);
    }
  });

  it('shortens long before/after excerpts to their ends', () => {
    const body = Array.from({ length: 400 }, (_, index) => `+line ${index}`).join('\n');
    const longPatch = `*** Begin Patch\n*** Add File: big.txt\n${body}\n`;
    const result = check({ input: longPatch, repair: true });
    assert.equal(result.input, `${longPatch}*** End Patch`);
    const detail = result.warnings[0]?.detail ?? '';
    assert.match(detail, /appended the missing "\*\*\* End Patch" line\. Before: "\*\*\* Begin Patch\\n.*" … ".*line 399\\n" \(\d+ characters\)\. After: .* … ".*line 399\\n\*\*\* End Patch" \(\d+ characters\)$/);
  });

  it('leaves an unrepairable input alone, even with repair on', () => {
    const result = check({ input: 'this is not a patch', repair: true });
    assert.deepEqual([result.input, result.repaired, result.warnings.map((warning) => warning.kind)], ['this is not a patch', false, ['grammar_mismatch']]);
  });

  it('does not touch exec inputs the grammar accepts, and warns on an empty one', () => {
    const exec = (input: string) => check({ tool: 'exec', grammar: execGrammar, input, repair: true });
    assert.deepEqual(exec('```js\ntext(1)\n```'), { input: '```js\ntext(1)\n```', warnings: [], repaired: false });
    assert.deepEqual(exec('').warnings.map((warning) => [warning.kind, warning.detail]), [
      ['grammar_mismatch', 'input does not match the exec grammar at line 1, column 1: expected PRAGMA_LINE or SOURCE, found the end of the input; the shortest valid ending adds "a"'],
    ]);
  });

  it('reports a grammar it cannot compile once per cache, then stays quiet', () => {
    const cache = createGrammarCache();
    const first = check({ tool: 'nested', grammar: uncompilable, input: '((x))', cache });
    assert.deepEqual(first.warnings, [
      {
        kind: 'grammar_uncompilable',
        tool: 'nested',
        callId: null,
        detail:
          "the lark grammar of custom tool 'nested' cannot be checked ('start' refers to itself (directly or through other rules); only grammars without recursion can be checked); its inputs are delivered unchecked",
        raw: uncompilable.definition,
      },
    ]);
    assert.deepEqual(check({ tool: 'nested', grammar: uncompilable, input: '((x))', cache }), { input: '((x))', warnings: [], repaired: false });
    // Another cache (another process) reports it again.
    assert.equal(check({ tool: 'nested', grammar: uncompilable, input: 'x' }).warnings.length, 1);
  });

  it('says when a check was skipped because the grammar is too expensive for the input', { timeout: 10_000 }, () => {
    // Subset construction on [ab]*a[ab]{200} needs sets of hundreds of states on irregular input.
    const expensive: ToolGrammar = { syntax: 'regex', definition: '[ab]*a[ab]{200}' };
    let seed = 7;
    let input = '';
    for (let index = 0; index < 20_000; index += 1) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      input += seed % 7 < 3 ? 'a' : 'b';
    }
    const result = check({ tool: 'expensive', grammar: expensive, input });
    assert.deepEqual(result.warnings.map((warning) => [warning.kind, warning.detail]), [
      ['grammar_check_skipped', 'the expensive input was not checked against its grammar: the grammar is too expensive to check on this input'],
    ]);
  });
});

describe('createGrammarCache', () => {
  it('compiles each grammar text once and returns the same matcher', () => {
    const cache = createGrammarCache();
    const first = cache.resolve(patchGrammar);
    const second = cache.resolve({ ...patchGrammar });
    assert.ok(first.compiled && second.compiled);
    assert.equal(first.matcher, second.matcher);
  });

  it('keeps at most maxEntries grammars, evicting the least recently used', () => {
    const cache = createGrammarCache({ maxEntries: 2 });
    const grammar = (text: string): ToolGrammar => ({ syntax: 'lark', definition: `start: "${text}"\n` });
    const a = cache.resolve(grammar('a'));
    cache.resolve(grammar('b'));
    cache.resolve(grammar('a'));
    cache.resolve(grammar('c'));
    const aAgain = cache.resolve(grammar('a'));
    assert.ok(a.compiled && aAgain.compiled);
    assert.equal(a.matcher, aAgain.matcher, '"a" was used recently, so "b" was evicted');
    // An evicted uncompilable grammar is compiled, and reported, again: the bound wins over memory.
    const small = createGrammarCache({ maxEntries: 1 });
    assert.deepEqual([small.resolve(uncompilable), small.resolve(uncompilable)].map((resolved) => !resolved.compiled && resolved.firstReport), [true, false]);
    small.resolve(grammar('a'));
    assert.equal(!small.resolve(uncompilable).compiled && (small.resolve(uncompilable) as { firstReport: boolean }).firstReport, false);
  });
});

describe('renderGrammarExample', () => {
  it('renders a compact apply_patch example that matches the captured grammar', () => {
    const example = renderGrammarExample('apply_patch', patchGrammar);
    assert.ok(example !== null);
    assert.match(example, /^\*\*\* Begin Patch\n\*\*\* Update File: .*\n@@ .*\n-.*\n\+.*\n\*\*\* Add File: .*\n\+.*\n\*\*\* Delete File: .*\n\*\*\* End Patch\n$/);
    const cache = createGrammarCache();
    const resolved = cache.resolve(patchGrammar);
    assert.ok(resolved.compiled);
    assert.equal(resolved.matcher.match(example).status, 'match');
  });

  it('renders an exec example with the pragma line that matches the captured grammar', () => {
    const example = renderGrammarExample('exec', execGrammar, createGrammarCache());
    assert.ok(example !== null);
    assert.match(example, /^\/\/ @exec: \{"yield_time_ms": 10000\}\n.*tools\.exec_command/);
  });

  it('finds the patch example by grammar text, whatever the tool is called', () => {
    assert.equal(renderGrammarExample('edit_files', patchGrammar), renderGrammarExample('apply_patch', patchGrammar));
  });

  it('returns null for unknown grammars, uncompilable ones, and grammars the example no longer matches', () => {
    assert.equal(renderGrammarExample('sql', { syntax: 'lark', definition: 'start: "SELECT" /.+/\n' }), null);
    assert.equal(renderGrammarExample('apply_patch', { syntax: 'lark', definition: 'start: "*** Begin Patch" start\n' }), null);
    const stricter = { syntax: 'lark', definition: patchGrammar.definition.replace('hunk: add_hunk | delete_hunk | update_hunk', 'hunk: add_hunk') };
    assert.notEqual(stricter.definition, patchGrammar.definition);
    assert.equal(renderGrammarExample('apply_patch', stricter), null);
  });
});
