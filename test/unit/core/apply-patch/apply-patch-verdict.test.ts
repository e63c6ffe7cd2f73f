import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { judgeApplyPatchInput, judgeAsCodex, rustTrim } from '../../../../src/core/apply-patch/apply-patch-verdict.ts';

/* The judge restates Codex 0.171's parser; test/integration/codex/patch-corpus-codex.test.ts checks it against the binary. */

const body = '*** Update File: a.txt\n@@\n a\n-hello\n+world\n';
const patch = `*** Begin Patch\n${body}*** End Patch\n`;

describe('judgeAsCodex: what Codex applies as written (no alarm)', () => {
  it('accepts CRLF, padded markers, blank lines around the patch, a bare heredoc and an empty context line', () => {
    for (const text of [
      patch.replaceAll('\n', '\r\n'),
      `*** Begin Patch  \n${body}*** End Patch   \n`,
      `\n\n${patch}\n\n`,
      `<<'EOF'\n${patch}EOF\n`,
      `<<EOF\n${patch}EOF`,
      `*** Begin Patch\n*** Update File: a.txt\n@@\n a\n\n-hello\n+world\n*** End Patch`,
      `*** Begin Patch\n  *** Update File: a.txt\n@@\n-hello\n+world\n*** End Patch\n`,
    ]) {
      assert.deepEqual(judgeAsCodex(text), { accepted: true }, JSON.stringify(text));
      assert.deepEqual(judgeApplyPatchInput(text, false), { status: 'accepted_as_written' });
    }
    assert.deepEqual(judgeApplyPatchInput(patch, true), { status: 'valid' });
  });
});

describe('judgeAsCodex: what Codex rejects, naming the line', () => {
  const rejects = (text: string) => {
    const judgement = judgeAsCodex(text);
    assert.equal(judgement.accepted, false, JSON.stringify(text));
    return judgement.accepted ? null : [judgement.line, judgement.reason];
  };

  it('names the boundary line', () => {
    assert.deepEqual(rejects(`apply_patch <<'EOF'\n${patch}EOF\n`), [1, "the first line must be '*** Begin Patch'"]);
    assert.deepEqual(rejects(`*** Begin Patch ***\n${body}*** End Patch`), [1, "the first line must be '*** Begin Patch'"]);
    assert.deepEqual(rejects(`*** Begin Patch\n${body}`), [6, "the last line must be '*** End Patch'"]);
    assert.deepEqual(rejects(`\n*** begin patch\n${body}*** End Patch`), [2, "the first line must be '*** Begin Patch'"]);
  });

  it('flags grammar-valid text Codex cannot apply: unified-diff headers and an update with no hunk', () => {
    assert.match(String(rejects('*** Begin Patch\n*** Update File: a.txt\n@@ -41,7 +41,7 @@\n-a\n+b\n*** End Patch')?.[1]), /unified-diff range header/);
    assert.deepEqual(rejects('*** Begin Patch\n*** Update File: a.txt\n@@ -41,7 +41,7 @@\n-a\n+b\n*** End Patch')?.[0], 3);
    assert.match(String(rejects('*** Begin Patch\n*** Update File: a.txt\n--- a/a.txt\n+++ b/a.txt\n@@\n-a\n+b\n*** End Patch')?.[1]), /unified-diff file headers/);
    assert.deepEqual(rejects('*** Begin Patch\n*** Update File: a.txt\n*** End Patch'), [2, "the update of 'a.txt' has no hunk"]);
    assert.match(String(rejects('*** Begin Patch\n*** End Patch')?.[1]), /No files were modified/);
  });

  it('rejects unknown headers, unprefixed hunk lines and a second hunk without @@', () => {
    assert.deepEqual(rejects('*** Begin Patch\n*** Modify File: a\n*** End Patch')?.[0], 2);
    assert.match(String(rejects('*** Begin Patch\n*** Update File: a\n@@\nplain\n*** End Patch')?.[1]), /does not start with/);
    assert.match(String(rejects('*** Begin Patch\n*** Update File: a\n@@\n-a\n+b\nplain\n*** End Patch')?.[1]), /expected a '@@' line/);
  });
});

describe('judgeAsCodex: trims as Rust does, not as JavaScript does', () => {
  // Rust's `str::trim` strips Unicode White_Space: U+0085 (NEL) yes, U+FEFF (BOM) no.
  it('rejects a leading byte-order mark, which Codex keeps in the first line', () => {
    assert.deepEqual(judgeAsCodex(`\uFEFF${patch}`), { accepted: false, reason: "the first line must be '*** Begin Patch'", line: 1 });
    assert.equal(judgeAsCodex(patch.replace('*** End Patch', '*** End Patch\uFEFF')).accepted, false);
    assert.equal(judgeAsCodex(patch.replace('*** Update File: a.txt', '\uFEFF*** Update File: a.txt')).accepted, false);
  });

  it('accepts a NEL around the text, a marker or a file header, which Codex trims', () => {
    for (const text of [
      `\u0085${patch}\u0085`,
      patch.replace('*** End Patch', '*** End Patch\u0085'),
      patch.replace('*** Begin Patch', '\u0085*** Begin Patch'),
      patch.replace('*** Update File: a.txt', '*** Update File: a.txt\u0085'),
    ]) {
      assert.deepEqual(judgeAsCodex(text), { accepted: true }, JSON.stringify(text));
    }
  });

  it('refuses a line of white space between hunks, which Codex does not trim there', () => {
    for (const blank of ['\t', ' \t', '\u00A0', '\u0085']) {
      const text = `*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+world\n${blank}\n@@\n-x\n+y\n*** End Patch`;
      assert.equal(judgeAsCodex(text).accepted, blank === ' \t', JSON.stringify(blank));
    }
  });

  it('counts lines in the text as given when a NEL-only line leads', () => {
    assert.equal(rustTrim('\u0085\t x \u3000'), 'x');
    assert.equal(rustTrim('\uFEFFx\uFEFF'), '\uFEFFx\uFEFF');
    assert.deepEqual(judgeAsCodex(`\u0085\n*** Begin Patch ***\n${body}*** End Patch`), { accepted: false, reason: "the first line must be '*** Begin Patch'", line: 2 });
  });
});
