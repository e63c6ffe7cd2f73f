import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mapChatFinishReason } from '../../../src/core/map-chat-finish-reason.ts';

describe('mapChatFinishReason', () => {
  const rows: Array<[string | null | undefined, ReturnType<typeof mapChatFinishReason>]> = [
    ['stop', { status: 'completed', incompleteReason: null, unusual: false }],
    ['tool_calls', { status: 'completed', incompleteReason: null, unusual: false }],
    ['function_call', { status: 'completed', incompleteReason: null, unusual: false }],
    ['length', { status: 'incomplete', incompleteReason: 'max_output_tokens', unusual: false }],
    ['content_filter', { status: 'incomplete', incompleteReason: 'content_filter', unusual: false }],
    ['repetition', { status: 'completed', incompleteReason: null, unusual: true }],
    ['abort', { status: 'failed', incompleteReason: null, unusual: false }],
    ['error', { status: 'failed', incompleteReason: null, unusual: false }],
    [null, { status: 'failed', incompleteReason: null, unusual: false }],
    [undefined, { status: 'failed', incompleteReason: null, unusual: false }],
    ['', { status: 'failed', incompleteReason: null, unusual: false }],
    ['eos_token', { status: 'completed', incompleteReason: null, unusual: true }],
  ];
  for (const [reason, expected] of rows) {
    it(`maps ${JSON.stringify(reason) ?? 'undefined'}`, () => assert.deepEqual(mapChatFinishReason(reason), expected));
  }
});
