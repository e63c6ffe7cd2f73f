import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseJson } from '../../../../src/core/parse-json.ts';
import { labelRoundTrip } from '../../../../src/core/traffic/round-trip-label.ts';
import { fixturePath } from '../../../support/fixtures.ts';

/*
 * What a round trip is for Codex, from its `x-codex-turn-metadata` header: the values below are the
 * headers the real Codex 0.171 sent (the recorded example, and the parent and children of a
 * multi-agent v1 and v2 session, trimmed to the fields that decide).
 */

function readRecordedHeader(): string {
  const parsed = parseJson(readFileSync(fixturePath('captures', 'headers_example_v0.171.json'), 'utf8'));
  assert.ok(parsed.success);
  return z.looseObject({ headers: z.looseObject({ 'x-codex-turn-metadata': z.string() }) }).parse(parsed.value).headers['x-codex-turn-metadata'];
}

const header = (fields: Record<string, unknown>): string => JSON.stringify({ session_id: 's', thread_id: '01a2338b-610e-75d2-b321-0b46392db7f0', ...fields });

describe('labelRoundTrip', () => {
  it("labels the recorded header of a user's turn", () => {
    assert.deepStrictEqual(labelRoundTrip(readRecordedHeader()), { kind: 'turn', agentName: '/root', text: 'turn' });
  });

  it('labels a compaction, also when a sub-agent compacts', () => {
    const compaction = { request_kind: 'compaction', compaction: { trigger: 'auto', reason: 'context_limit', implementation: 'responses' } };
    assert.deepStrictEqual(labelRoundTrip(header({ ...compaction, agent_name: '/root', thread_source: 'user' })), { kind: 'compaction', agentName: '/root', text: 'compaction' });
    assert.deepStrictEqual(labelRoundTrip(header({ ...compaction, agent_name: '/root/calc', thread_source: 'subagent' })), {
      kind: 'compaction',
      agentName: '/root/calc',
      text: 'sub-agent /root/calc compaction',
    });
  });

  it("names a multi-agent v2 child by its task path, and a v1 child (which Codex names '/root') by its thread", () => {
    assert.deepStrictEqual(labelRoundTrip(header({ request_kind: 'turn', agent_name: '/root/calc', thread_source: 'subagent' })), {
      kind: 'subagent',
      agentName: '/root/calc',
      text: 'sub-agent /root/calc',
    });
    assert.deepStrictEqual(labelRoundTrip(header({ request_kind: 'turn', agent_name: '/root', thread_source: 'subagent', subagent_kind: 'thread_spawn' })), {
      kind: 'subagent',
      agentName: '/root',
      text: 'sub-agent /root, thread …392db7f0',
    });
  });

  it('takes the first of repeated headers', () => {
    assert.equal(labelRoundTrip([header({ request_kind: 'compaction' }), header({ request_kind: 'turn' })]).kind, 'compaction');
  });

  it('is unlabelled, never an error, when the header is missing, empty, not JSON, not an object or says nothing', () => {
    const unlabelled = { kind: 'unlabelled', agentName: null, text: 'unlabelled' };
    for (const value of [undefined, '', '  ', '{not json', '[1,2]', '"turn"', '{}', '{"request_kind": 7}']) assert.deepStrictEqual(labelRoundTrip(value), unlabelled, String(value));
    assert.deepStrictEqual(labelRoundTrip('{"agent_name":"/root"}'), { ...unlabelled, agentName: '/root' });
  });

  it('passes a request kind it does not know through as the text', () => {
    assert.deepStrictEqual(labelRoundTrip(header({ request_kind: 'memory_consolidation', agent_name: '/root' })), { kind: 'turn', agentName: '/root', text: 'memory_consolidation' });
  });
});
