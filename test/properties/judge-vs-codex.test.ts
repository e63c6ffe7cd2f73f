import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { judgeAsCodex } from '../../src/core/apply-patch/apply-patch-verdict.ts';
import { applyPatchWithCodex, type CodexApplyResult } from '../support/codex-apply-patch.ts';

/*
 * The judge against the real Codex 0.171 parser on random patches whose markers, file headers and the
 * blank line between hunks carry whitespace that JavaScript and Rust trim differently (BOM, NEL) beside
 * ordinary spaces, tabs and CR. The judge must agree with Codex's parser on every one: Codex parsed the
 * patch unless it answered "Invalid patch…" (an empty line inside a hunk is parsed as context that the
 * file lacks, which is Codex's to report when it applies, as for any context).
 *
 * Seeded and bounded (each run starts the Codex binary once): FUZZ_SEED and FUZZ_RUNS override.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed_0048);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

const FILES = { 'a.txt': 'hello\nx\n' };
const SPACING = fc.constantFrom('', ' ', '\t', '\r', '\u0085', '\uFEFF', '\u00A0', '\u3000', '\n');
const padding = fc.array(SPACING, { maxLength: 2 }).map((parts) => parts.join(''));
/** After the updated file's path: a BOM there is kept in the path, so the file is not found (Codex's to report, not its parser's). */
const pathPadding = fc.array(fc.constantFrom('', ' ', '\t', '\r', '\u0085', '\u3000'), { maxLength: 2 }).map((parts) => parts.join(''));

const patchText = fc
  .record({ before: padding, beginLeft: padding, beginRight: padding, headerLeft: padding, headerRight: pathPadding, between: padding, addLeft: padding, endLeft: padding, endRight: padding, after: padding })
  .map(
    (pad) =>
      `${pad.before}${pad.beginLeft}*** Begin Patch${pad.beginRight}\n` +
      `${pad.headerLeft}*** Update File: a.txt${pad.headerRight}\n@@\n-hello\n+world\n${pad.between}\n@@\n-x\n+y\n` +
      `${pad.addLeft}*** Add File: b.txt\n+new\n` +
      `${pad.endLeft}*** End Patch${pad.endRight}${pad.after}`,
  );

function parsedByCodex(result: CodexApplyResult): boolean {
  return result.applied || !result.output.startsWith('Invalid patch');
}

describe('the judge agrees with the real Codex parser on whitespace it trims', () => {
  it('gives the verdict Codex gives, on random BOM, NEL and space placements', () => {
    fc.assert(
      fc.property(patchText, (text) => {
        const codex = applyPatchWithCodex(text, FILES);
        assert.equal(judgeAsCodex(text).accepted, parsedByCodex(codex), `${JSON.stringify(text)}: Codex said ${codex.output}`);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('agrees on the two characters the trims disagree on', () => {
    const patch = '*** Begin Patch\n*** Add File: b.txt\n+new\n*** End Patch\n';
    for (const text of [`\uFEFF${patch}`, `\u0085${patch}\u0085`, patch.replace('*** End Patch', '*** End Patch\u0085'), patch.replace('*** End Patch', '*** End Patch\uFEFF')]) {
      assert.equal(judgeAsCodex(text).accepted, parsedByCodex(applyPatchWithCodex(text, FILES)), JSON.stringify(text));
    }
  });
});
