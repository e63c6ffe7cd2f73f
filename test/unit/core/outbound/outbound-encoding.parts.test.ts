import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { resolveBridgeOptions } from '../../../../src/core/bridge-options.ts';
import type { ChatRequest } from '../../../../src/core/chat/chat-completions-api.ts';
import { joinChatRequestParts, splitChatRequest } from '../../../../src/core/outbound/outbound-encoding.ts';
import { convertResponsesRequestToChatRequest } from '../../../../src/core/lower/convert-responses-request-to-chat-request.ts';
import { createWarningLedger } from '../../../../src/core/warnings.ts';
import { fixturePath } from '../../../support/fixtures.ts';

/*
 * A bridge that keeps the parts of each lowered request for its panel sends their joined text
 * upstream: the join must give exactly JSON.stringify(request), byte for byte, or the backend would
 * see a different request than the one the panel shows.
 */

function loweredCaptures(): Array<{ name: string; request: ChatRequest }> {
  const directory = fixturePath('captures');
  const lowered: Array<{ name: string; request: ChatRequest }> = [];
  for (const name of readdirSync(directory).filter((file) => file.endsWith('.json'))) {
    const parsed = JSON.parse(readFileSync(`${directory}/${name}`, 'utf8')) as unknown;
    const bodies = Array.isArray(parsed) ? parsed : [parsed];
    bodies.forEach((body, index) => {
      try {
        lowered.push({ name: `${name}#${index}`, request: convertResponsesRequestToChatRequest(body, resolveBridgeOptions(), createWarningLedger()).chatRequest });
      } catch {
        // A capture the bridge refuses (a remote compaction request) has no lowered form.
      }
    });
  }
  return lowered;
}

describe('joinChatRequestParts', () => {
  it('gives exactly JSON.stringify of every lowered capture', () => {
    const captures = loweredCaptures();
    assert.ok(captures.length >= 15, `${captures.length} captures lowered`);
    for (const { name, request } of captures) assert.equal(joinChatRequestParts(splitChatRequest(request)), JSON.stringify(request), name);
  });

  it('keeps the placeholders\' look-alikes where they are: in the model name, in message text, in later fields, without tools', () => {
    const tricky: ChatRequest = {
      model: 'm "messages":[] "tools":[] \\"',
      messages: [
        { role: 'user', content: '"messages":[] and "tools":[] in text, \u2014 and 👋' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"tools":[]}' } }] },
      ],
      tools: [{ type: 'function', function: { name: 'f', description: '"tools":[]', parameters: { type: 'object', properties: { tools: { type: 'array', default: [] } } } } }],
      stream: true,
      stream_options: { include_usage: true },
      response_format: { type: 'json_schema', json_schema: { name: 's', schema: { tools: [], messages: [] } } },
    } as unknown as ChatRequest;
    assert.equal(joinChatRequestParts(splitChatRequest(tricky)), JSON.stringify(tricky));
    const { tools: _tools, ...withoutTools } = tricky;
    assert.equal(joinChatRequestParts(splitChatRequest(withoutTools as ChatRequest)), JSON.stringify(withoutTools));
    const empty = { ...tricky, messages: [] } as ChatRequest;
    assert.equal(joinChatRequestParts(splitChatRequest(empty)), JSON.stringify(empty));
  });

  it('refuses a head that is not one of its own', () => {
    assert.throws(() => joinChatRequestParts({ head: '{"model":"m"}', messages: [], tools: null }), /no messages placeholder/);
    assert.throws(() => joinChatRequestParts({ head: '{"model":"m","messages":[]}', messages: [], tools: '[]' }), /no tools placeholder/);
  });
});
