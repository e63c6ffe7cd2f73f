import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mapChatUsageToResponsesUsage } from '../../../../src/core/lift/map-chat-usage.ts';

const zeros = {
  input_tokens: 0,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 0,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 0,
};

describe('mapChatUsageToResponsesUsage', () => {
  it('maps vLLM usage with null details to integers', () => {
    assert.deepEqual(
      mapChatUsageToResponsesUsage({ prompt_tokens: 31, total_tokens: 34, completion_tokens: 3, prompt_tokens_details: null }),
      { input_tokens: 31, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 34 },
    );
  });

  it('gives zeros without usage', () => {
    assert.deepEqual(mapChatUsageToResponsesUsage(undefined), zeros);
    assert.deepEqual(mapChatUsageToResponsesUsage(null), zeros);
    assert.deepEqual(mapChatUsageToResponsesUsage({}), zeros);
  });

  it('sums the total when absent', () => {
    assert.equal(mapChatUsageToResponsesUsage({ prompt_tokens: 905, completion_tokens: 188 }).total_tokens, 1093);
    assert.equal(mapChatUsageToResponsesUsage({ prompt_tokens: 905, completion_tokens: 188, total_tokens: null }).total_tokens, 1093);
  });

  it('reads the detail counts in table order', () => {
    const both = mapChatUsageToResponsesUsage({
      prompt_tokens: 10,
      completion_tokens: 5,
      prompt_tokens_details: { cached_tokens: 4 },
      cached_input_tokens: 3,
      cache_read_input_tokens: 2,
      completion_tokens_details: { reasoning_tokens: 2 },
      reasoning_tokens: 1,
    });
    assert.deepEqual([both.input_tokens_details.cached_tokens, both.output_tokens_details.reasoning_tokens], [4, 2]);
    const fallbacks = mapChatUsageToResponsesUsage({
      prompt_tokens_details: { cached_tokens: null },
      cached_input_tokens: null,
      cache_read_input_tokens: 2,
      completion_tokens_details: null,
      reasoning_tokens: 7,
    });
    assert.deepEqual([fallbacks.input_tokens_details.cached_tokens, fallbacks.output_tokens_details.reasoning_tokens], [2, 7]);
    assert.equal(mapChatUsageToResponsesUsage({ cached_input_tokens: 3 }).input_tokens_details.cached_tokens, 3);
  });

  it('maps SGLang usage with top-level reasoning tokens', () => {
    assert.deepEqual(
      mapChatUsageToResponsesUsage({ prompt_tokens: 905, total_tokens: 1093, completion_tokens: 188, prompt_tokens_details: null, reasoning_tokens: 0 }),
      { input_tokens: 905, input_tokens_details: { cached_tokens: 0 }, output_tokens: 188, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1093 },
    );
  });

  it('rounds fractions and clamps negative and non-finite values to 0', () => {
    assert.deepEqual(
      mapChatUsageToResponsesUsage({ prompt_tokens: 2.6, completion_tokens: -3, total_tokens: Number.NaN, reasoning_tokens: Number.POSITIVE_INFINITY }),
      { input_tokens: 3, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 },
    );
  });
});
