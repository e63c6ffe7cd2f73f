import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildGrammarSelfTestRequest, decideGrammarEnforcement, judgeGrammarSelfTest, SELF_TEST_PATCH } from '../../../../src/core/doctor/grammar-self-test.ts';
import { findPatternViolation } from '../../../../src/core/grammar/check-grammar-input.ts';
import { createGrammarCache } from '../../../../src/core/grammar/grammar-cache.ts';

const answered = (argumentsText: string) => ({ outcome: 'answered' as const, toolCalls: [{ name: 'apply_patch', arguments: argumentsText }], text: '', finishReason: 'tool_calls' });

function selfTestPattern(form: 'escaped-text' | 'value'): RegExp {
  const request = buildGrammarSelfTestRequest('m', form) as { tools: Array<{ function: { parameters: { properties: { input: { pattern: string } } } } }> };
  return new RegExp(request.tools[0]!.function.parameters.properties.input.pattern, 'u');
}

describe('grammar self-test', () => {
  it('each form admits exactly the forced patch, written the way that form is matched', () => {
    assert.ok(selfTestPattern('escaped-text').test(JSON.stringify(SELF_TEST_PATCH).slice(1, -1)));
    assert.equal(selfTestPattern('escaped-text').test(SELF_TEST_PATCH), false);
    assert.ok(selfTestPattern('value').test(SELF_TEST_PATCH));
    assert.equal(selfTestPattern('value').test(JSON.stringify(SELF_TEST_PATCH).slice(1, -1)), false);
    // The model is asked for something else, so only an enforcing engine writes this patch.
    assert.doesNotMatch(JSON.stringify(buildGrammarSelfTestRequest('m', 'value').messages), /grammar-self-test/);
  });

  it('the request has the shape vLLM and SGLang constrain: a strict function, auto tool choice, the pattern on the string', () => {
    // vLLM (docs/features/tool_calling.md; envs.py VLLM_ENFORCE_STRICT_TOOL_CALLING, default on) constrains
    // `auto` only when a tool has `strict: true`; SGLang (docs/references/environment_variables.md,
    // SGLANG_TOOL_STRICT_LEVEL 0 by default) likewise builds its structural tag only for strict tools.
    const request = buildGrammarSelfTestRequest('m', 'escaped-text') as Record<string, unknown> & { tools: Array<{ type: string; function: Record<string, unknown> }> };
    assert.equal(request.tool_choice, 'auto');
    assert.equal(request.tools[0]!.type, 'function');
    assert.equal(request.tools[0]!.function.strict, true);
    assert.deepEqual(Object.keys(request.tools[0]!.function.parameters as object), ['type', 'properties', 'required', 'additionalProperties']);
  });

  it('passes only for the forced patch in a valid JSON call', () => {
    assert.deepEqual(judgeGrammarSelfTest(answered(JSON.stringify({ input: SELF_TEST_PATCH }))), { obeyed: true });
    assert.deepEqual(judgeGrammarSelfTest(answered(JSON.stringify({ input: `${SELF_TEST_PATCH}\n` }))), { obeyed: true });
    // llama.cpp given the value form: the raw newline makes the arguments invalid JSON.
    assert.deepEqual(judgeGrammarSelfTest(answered(`{"input": "${SELF_TEST_PATCH}"}`)), { obeyed: false, reason: 'the call under the pattern was not valid JSON' });
    assert.match(judgeGrammarSelfTest(answered(JSON.stringify({ input: '*** Begin Patch\n*** Add File: probe.txt\n+\n*** End Patch' }))).obeyed ? '' : 'ignored', /ignored/);
    assert.deepEqual(judgeGrammarSelfTest({ outcome: 'answered', toolCalls: [], text: 'hi', finishReason: 'stop' }), { obeyed: false, reason: 'answered without a tool call' });
    const refused = judgeGrammarSelfTest({ outcome: 'refused', status: 400, message: 'Invalid pattern' });
    assert.deepEqual(refused, { obeyed: false, reason: 'refused the pattern: HTTP 400 Invalid pattern' });
  });

  it('turns enforcement on in the first form obeyed, with strict, and says why either way', () => {
    assert.deepEqual(
      decideGrammarEnforcement([
        { form: 'escaped-text', verdict: { obeyed: false, reason: 'x' } },
        { form: 'value', verdict: { obeyed: true } },
      ]),
      { enforced: true, form: 'value', strict: true, reason: 'the engine self-test passed in the value form' },
    );
    assert.deepEqual(
      decideGrammarEnforcement([
        { form: 'escaped-text', verdict: { obeyed: false, reason: 'a' } },
        { form: 'value', verdict: { obeyed: false, reason: 'b' } },
      ]),
      { enforced: false, reason: 'the engine self-test found the pattern not enforced (escaped-text: a; value: b)' },
    );
  });

  it('a lifted call that misses an enforced grammar gets a warning of its own', () => {
    const grammar = { syntax: 'lark', definition: 'start: "*** Begin Patch" LF "*** End Patch"\n%import common.LF\n' };
    const check = (enforcedPattern: boolean, input: string) =>
      findPatternViolation({ enforcedPattern, tool: 'apply_patch', callId: 'c1', input, grammar, cache: createGrammarCache() }).map((warning) => [warning.kind, warning.tool, warning.callId]);
    assert.deepEqual(check(true, '*** Begin Patch\n*** Add File: a\n+x\n*** End Patch'), [['grammar_pattern_violated', 'apply_patch', 'c1']]);
    assert.deepEqual(check(false, '*** Begin Patch\n*** Add File: a\n+x\n*** End Patch'), []);
    assert.deepEqual(check(true, '*** Begin Patch\n*** End Patch'), []);
  });
});
