import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { judgeAsCodex } from '../../../../src/core/apply-patch/apply-patch-verdict.ts';
import { isRepairReported, readPatchCorpus, runCorpusCase, type CorpusCase, type CorpusRun } from '../../../support/patch-corpus.ts';

/*
 * Every corpus case through the stream translator, as a mock engine streams it, at the default setting
 * and with grammar repair: what is delivered, which warnings fire, and whether the streamed deltas and
 * the done item agree. The real Codex binary's verdict on the same deliveries is the integration tier
 * (test/integration/codex/patch-corpus-codex.test.ts).
 */

const corpus = readPatchCorpus();
const kinds = (run: CorpusRun): string[] => run.warnings.map((warning) => warning.kind);

function assertOutcome(corpusCase: CorpusCase, run: CorpusRun, grammarRepair: boolean): void {
  const label = `${corpusCase.id} (grammar repair ${grammarRepair ? 'on' : 'off'})`;
  const rescued = corpusCase.class === 'safe' || (corpusCase.class === 'risky' && grammarRepair);
  switch (corpusCase.class) {
    case 'as_written':
      assert.ok(run.delivered !== null, label);
      assert.deepEqual(kinds(run).filter((kind) => kind.startsWith('grammar_')), [], `${label}: no alarm on text Codex applies`);
      break;
    case 'safe':
    case 'risky':
      assert.ok(run.delivered !== null, label);
      if (rescued) {
        assert.ok(isRepairReported(run), `${label}: the repair is named`);
        assert.ok(run.warnings.every((warning) => warning.raw !== undefined), `${label}: the original is kept`);
        assert.equal(judgeAsCodex(run.delivered).accepted, true, label);
      } else {
        assert.deepEqual(kinds(run), ['grammar_mismatch'], label);
      }
      break;
    case 'never':
      assert.ok(!isRepairReported(run), `${label}: never repaired`);
      if (run.delivered !== null) assert.equal(judgeAsCodex(run.delivered).accepted, false, label);
      // An exec body left as written reaches Codex as JavaScript, whose own error tells the model; the
      // exec grammar accepts any text, so there is nothing to warn about.
      if (corpusCase.tool === 'exec') assert.equal(run.delivered, (JSON.parse(corpusCase.arguments) as { input: string }).input, `${label}: left as written`);
      else assert.ok(run.warnings.length > 0, `${label}: a refusal or a warning says why`);
      break;
    default: {
      const unknown: never = corpusCase.class;
      assert.fail(`unknown class ${String(unknown)}`);
    }
  }
}

describe('patch corpus through the bridge', () => {
  it('holds public cases of every class, each with its source', () => {
    assert.ok(corpus.length >= 20);
    for (const corpusCase of corpus) assert.match(corpusCase.source, /^https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/(issues|pull)\/\d+$/, corpusCase.id);
    for (const corpusClass of ['safe', 'risky', 'never', 'as_written']) assert.ok(corpus.some((corpusCase) => corpusCase.class === corpusClass), corpusClass);
  });

  for (const grammarRepair of [false, true]) {
    it(`delivers every case as its class says, grammar repair ${grammarRepair ? 'on' : 'off'}`, () => {
      for (const corpusCase of corpus) assertOutcome(corpusCase, runCorpusCase(corpusCase, grammarRepair), grammarRepair);
    });
  }

  it('streams deltas that the delivered input starts with when the arguments were only read leniently', () => {
    for (const id of ['raw-newlines-in-json', 'invalid-escape-regex']) {
      const corpusCase = corpus.find((candidate) => candidate.id === id);
      assert.ok(corpusCase !== undefined, id);
      const run = runCorpusCase(corpusCase, false);
      assert.equal(run.delivered, run.streamed, id);
      assert.ok(!kinds(run).includes('input_delta_mismatch'), id);
    }
  });
});
