import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatUnifiedDiff } from '../../../../src/core/codex-config/unified-diff.ts';

describe('formatUnifiedDiff', () => {
  it('prints hunks with context, new files and missing final newlines', () => {
    assert.equal(formatUnifiedDiff('f', null, 'a\nb\n'), '--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+a\n+b\n');
    const old = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', ''].join('\n');
    assert.equal(
      formatUnifiedDiff('f', old, old.replace('5\n', 'five\n')),
      '--- f\n+++ f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n',
    );
    assert.equal(formatUnifiedDiff('f', 'a', 'a\n'), '--- f\n+++ f\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+a\n');
    assert.equal(formatUnifiedDiff('f', 'same\n', 'same\n'), '');
  });
});
