import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { judgeAsCodex } from '../../../src/core/apply-patch/apply-patch-verdict.ts';
import { applyPatchWithCodex } from '../../support/codex-apply-patch.ts';
import { isRepairReported, readPatchCorpus, runCorpusCase } from '../../support/patch-corpus.ts';

/*
 * What the bridge delivers for every corpus case, applied by the real Codex 0.171 binary from
 * node_modules: a rescued or as-written case changes exactly the intended files, and nothing else ever
 * changes a file. The TypeScript judge agrees with Codex on every delivery. The tally is printed so the
 * figures in the notes can be re-measured.
 */

const corpus = readPatchCorpus();

describe('patch corpus judged by the real Codex binary', () => {
  for (const grammarRepair of [false, true]) {
    it(`applies exactly the intended change or nothing, grammar repair ${grammarRepair ? 'on' : 'off'}`, () => {
      const tally = { cases: corpus.length, rescued: 0, appliedAsIntended: 0, wronglyRepaired: 0, falseWarnings: 0, refused: 0 };
      const appliedByClass: Record<string, string> = {};
      for (const corpusClass of new Set(corpus.map((corpusCase) => corpusCase.class))) {
        const members = corpus.filter((corpusCase) => corpusCase.class === corpusClass);
        appliedByClass[corpusClass] = `0/${members.length}`;
      }
      const countApplied = (corpusClass: string): void => {
        const [applied, total] = (appliedByClass[corpusClass] ?? '0/0').split('/');
        appliedByClass[corpusClass] = `${Number(applied) + 1}/${total}`;
      };
      for (const corpusCase of corpus) {
        const run = runCorpusCase(corpusCase, grammarRepair);
        const repaired = isRepairReported(run);
        if (repaired) tally.rescued += 1;
        if (run.delivered === null) {
          tally.refused += 1;
          assert.equal(corpusCase.expected_files, null, `${corpusCase.id}: refused although it has an intended change`);
          continue;
        }
        const result = applyPatchWithCodex(run.delivered, corpusCase.files);
        assert.equal(judgeAsCodex(run.delivered).accepted, result.applied, `${corpusCase.id}: the judge and Codex disagree (${result.output})`);
        const warned = run.warnings.some((warning) => warning.kind === 'grammar_mismatch');
        if (result.applied) {
          if (warned) tally.falseWarnings += 1;
          if (corpusCase.expected_files !== null && JSON.stringify(result.files) === JSON.stringify(corpusCase.expected_files)) {
            tally.appliedAsIntended += 1;
            countApplied(corpusCase.class);
          } else if (repaired) {
            tally.wronglyRepaired += 1;
          }
          assert.deepEqual(result.files, corpusCase.expected_files, `${corpusCase.id}: Codex applied something other than the intended change`);
        } else {
          assert.deepEqual(result.files, corpusCase.files, `${corpusCase.id}: a rejected patch changed files`);
          assert.ok(corpusCase.class === 'never' || (corpusCase.class === 'risky' && !grammarRepair), `${corpusCase.id}: Codex rejected a ${corpusCase.class} case (${result.output})`);
        }
      }
      process.stdout.write(`# patch corpus, grammar repair ${grammarRepair ? 'on' : 'off'}: ${JSON.stringify(tally)}; applied as intended by class ${JSON.stringify(appliedByClass)}\n`);
      assert.equal(tally.wronglyRepaired, 0);
      assert.equal(tally.falseWarnings, 0);
    });
  }
});
