import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findSafePatchRescue, removeApplyPatchHeredoc } from '../../../../src/core/apply-patch/rescue-apply-patch.ts';

const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+world\n*** End Patch\n';

describe('findSafePatchRescue', () => {
  it('unwraps each safe wrapper, naming it', () => {
    assert.deepEqual(findSafePatchRescue(JSON.stringify({ patch })), { input: patch, kinds: ['json_wrapper'] });
    assert.deepEqual(findSafePatchRescue(JSON.stringify({ command: ['apply_patch', patch] })), { input: patch, kinds: ['json_wrapper'] });
    assert.deepEqual(findSafePatchRescue(`\`\`\`diff\n${patch}\`\`\``), { input: patch, kinds: ['code_fence'] });
    assert.deepEqual(findSafePatchRescue(`apply_patch <<'EOF'\n${patch}EOF\n`), { input: patch, kinds: ['shell_heredoc'] });
    assert.deepEqual(findSafePatchRescue(`\`\`\`json\n${JSON.stringify({ input: patch })}\n\`\`\``), { input: patch, kinds: ['code_fence', 'json_wrapper'] });
    assert.deepEqual(findSafePatchRescue(patch.replace('*** Begin Patch', '*** Begin Patch ***')), { input: patch, kinds: ['patch_markers'] });
    assert.deepEqual(findSafePatchRescue(patch.replace('*** Begin Patch\n', '')), { input: patch, kinds: ['begin_patch'] });
  });

  it('never touches what Codex accepts, and leaves risky cases alone', () => {
    assert.equal(findSafePatchRescue(patch), null);
    assert.equal(findSafePatchRescue(`<<'EOF'\n${patch}EOF`), null, 'Codex unwraps a bare heredoc itself');
    assert.equal(findSafePatchRescue(patch.replace('*** End Patch\n', '')), null, 'a missing end may be a cut');
    assert.equal(findSafePatchRescue(`cd src && apply_patch <<'EOF'\n${patch}EOF`), null, 'cd changes which file is edited');
    assert.equal(findSafePatchRescue(`cat <<EOF | apply_patch\n${patch}EOF`), null);
    assert.equal(findSafePatchRescue(JSON.stringify({ command: ['apply_patch', patch, '--extra'] })), null);
    assert.equal(findSafePatchRescue('*** Begin Patch\n*** Update File: a\n@@ -1,2 +1,2 @@\n-a\n+b\n*** End Patch'), null);
  });

  it('reads only a heredoc that is apply_patch alone', () => {
    assert.equal(removeApplyPatchHeredoc(`applypatch <<PATCH\n${patch}PATCH`), patch);
    assert.equal(removeApplyPatchHeredoc(`echo hi; apply_patch <<'EOF'\n${patch}EOF`), null);
  });
});

describe('findSafePatchRescue: never drops what changes the patch', () => {
  it('leaves a JSON wrapper with a directory, a second patch or a duplicated key as written', () => {
    assert.equal(findSafePatchRescue(JSON.stringify({ input: patch, workdir: 'dir' })), null);
    assert.equal(findSafePatchRescue(JSON.stringify({ command: ['apply_patch', patch], workdir: 'dir' })), null);
    assert.equal(findSafePatchRescue(JSON.stringify({ patch, cwd: 'dir' })), null);
    assert.equal(findSafePatchRescue(JSON.stringify({ input: patch, backup: patch })), null);
    assert.equal(findSafePatchRescue(`{"input": ${JSON.stringify(patch)}, "input": ${JSON.stringify(patch)}}`), null);
  });
});

describe('findSafePatchRescue: a Python dict literal', () => {
  const python = (text: string) => findSafePatchRescue(text);
  it('reads single-quoted strings with Python escapes', () => {
    const literal = `{'input': '*** Begin Patch\\n*** Update File: a.txt\\n@@\\n-hello\\n+world\\n*** End Patch\\n'}`;
    assert.deepEqual(python(literal), { input: patch, kinds: ['python_literal'] });
    const quoted = `{'input': "*** Begin Patch\\n*** Add File: b.txt\\n+it's \\"x\\" \\\\ \\x41\\u00e9\\U0001F600\\t\\n*** End Patch", }`;
    assert.deepEqual(python(quoted), { input: "*** Begin Patch\n*** Add File: b.txt\n+it's \"x\" \\ A\u00e9\u{1F600}\t\n*** End Patch", kinds: ['python_literal'] });
    assert.deepEqual(python(`{'patch': '${patch.replaceAll('\n', '\\n')}', 'explanation': 'why'}`), { input: patch, kinds: ['python_literal'] });
  });

  it('refuses anything with more than one reading or another meaning', () => {
    const body = patch.replaceAll('\n', '\\n');
    for (const literal of [
      `{'input': '${body}', 'workdir': 'src'}`,
      `{'input': '${body}', 'input': '${body}'}`,
      `{'input': '${body}' '${body}'}`,
      `{'input': r'${body}'}`,
      `{'input': '''${patch}'''}`,
      `{'input': '${body}\\d'}`,
      `{'input': '${body}\\\n'}`,
      `{'input': '${patch}'}`,
      `{'input': '${body}', 'n': 1}`,
      `{'input': '${body}'} trailing`,
      `{'input': '${body}'`,
    ]) {
      assert.equal(python(literal), null, literal);
    }
  });
});
