import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveBridgeOptions, type GrammarEnforcement } from '../../../src/core/bridge-options.ts';
import { GrammarEnforcementRegistry, isPatternRefusal } from '../../../src/server/grammar-enforcement.ts';

const PASSED: GrammarEnforcement = { enforced: true, form: 'escaped-text', strict: true, reason: 'the engine self-test passed in the escaped-text form' };

describe('grammar enforcement per backend and model', () => {
  it('off never enforces; a forced form enforces without asking the engine', () => {
    let asked = 0;
    const run = async (): Promise<GrammarEnforcement> => {
      asked += 1;
      return PASSED;
    };
    assert.equal(new GrammarEnforcementRegistry('off', run).decisionFor('m').enforced, false);
    const forced = new GrammarEnforcementRegistry('value', run).decisionFor('m');
    assert.deepEqual(forced, { enforced: true, form: 'value', strict: true, reason: 'the setting asks for the value form' });
    assert.equal(asked, 0);
  });

  it('auto: not enforced until the self-test for that model passed, then remembered; one test per model', async () => {
    const tested: string[] = [];
    const decided: string[] = [];
    const registry = new GrammarEnforcementRegistry(
      'auto',
      async (model) => {
        tested.push(model);
        return model === 'hermes' ? PASSED : { enforced: false, reason: 'ignored' };
      },
      (model, decision) => decided.push(`${model}:${decision.enforced}`),
    );
    assert.deepEqual(await registry.selfTest('hermes'), PASSED);
    assert.equal(registry.decisionFor('hermes'), PASSED);
    const first = registry.decisionFor('qwen');
    assert.equal(first.enforced, false);
    assert.match(first.reason, /has not finished yet/);
    registry.decisionFor('qwen');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(tested, ['hermes', 'qwen']);
    assert.deepEqual(registry.decisionFor('qwen'), { enforced: false, reason: 'ignored' });
    assert.deepEqual(decided, ['hermes:true', 'qwen:false']);
  });

  it('a refusal turns it off for that model for good; options objects are shared per decision', async () => {
    const registry = new GrammarEnforcementRegistry('auto', async () => PASSED);
    await registry.selfTest('m');
    const base = resolveBridgeOptions();
    const on = registry.optionsFor(base, 'm');
    assert.equal(on, registry.optionsFor(base, 'm'));
    assert.equal(on.grammarEnforcement, PASSED);
    registry.refuse('m', 'Invalid regex pattern in schema');
    const off = registry.optionsFor(base, 'm');
    assert.notEqual(off, on);
    assert.deepEqual(off.grammarEnforcement, { enforced: false, reason: 'the engine refused the pattern: Invalid regex pattern in schema' });
  });

  it('knows a refusal about the pattern or schema from any other error', () => {
    for (const message of ['Invalid pattern: ^a{5,2}$', 'Failed to build grammar: json_schema', 'xgrammar: unsupported regex', 'Cannot use custom grammar constraints with tools.']) assert.ok(isPatternRefusal(message), message);
    for (const message of ['model not found', 'the request exceeds the available context size']) assert.equal(isPatternRefusal(message), false, message);
  });
});
