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
