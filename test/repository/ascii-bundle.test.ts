import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runInNewContext, Script } from 'node:vm';
import { build } from 'esbuild';
import { escapeNonAscii } from '../../scripts/ascii-bundle.mjs';
import { REPOSITORY_ROOT } from '../support/repository-files.ts';

const NON_ASCII = /[\u0080-\uffff]/;

describe('ASCII bundles (scripts/ascii-bundle.mjs)', () => {
  it('escapes every character outside ASCII into one that means the same in strings, templates, regular expressions, identifiers and comments', () => {
    const source = [
      '// a comment — with “quotes”, ünï and 😀',
      'const café = "naïve — 日本 😀";',
      'const template = `≤ ${café.length} …`;',
      'const plain = /[äö]+—/.test("xäö—");',
      'const astral = /^😀+$/u.test("😀😀");',
      'const property = /^\\p{L}$/u.test("ß");',
      '/* ¥ */ ({ café, template, plain, astral, property, length: café.length })',
    ].join('\n');
    const escaped = escapeNonAscii(source);
    assert.ok(!NON_ASCII.test(escaped), escaped);
    // As JSON: an object from another context has another Object prototype.
    const run = (code: string): unknown => JSON.parse(JSON.stringify(runInNewContext(code)));
    assert.deepEqual(run(escaped), run(source));
    assert.deepEqual(run(escaped), { café: 'naïve — 日本 😀', template: '≤ 13 …', plain: true, astral: true, property: true, length: 13 });
    assert.equal(escapeNonAscii('plain ASCII\n'), 'plain ASCII\n');
  });

  it('turns the CLI bundle, as scripts/build.mjs makes it, into ASCII that still compiles', async () => {
    const result = await build({ entryPoints: [join(REPOSITORY_ROOT, 'src/cli/main.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', write: false, logLevel: 'error' });
    const text = result.outputFiles[0]?.text ?? '';
    // What esbuild leaves outside ASCII (comments of ours and of dependencies): the reason for the step.
    assert.ok(NON_ASCII.test(text), 'esbuild output has non-ASCII characters again: the step may be unneeded');
    const escaped = escapeNonAscii(text);
    assert.ok(!NON_ASCII.test(escaped));
    assert.doesNotThrow(() => new Script(escaped, { filename: 'cli.js' }));
  });
});
