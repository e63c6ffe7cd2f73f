import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { resolveBridgeOptions } from '../../../../src/core/bridge-options.ts';
import { convertResponsesRequestToChatRequest } from '../../../../src/core/lower/convert-responses-request-to-chat-request.ts';
import { parseJson } from '../../../../src/core/parse-json.ts';
import { labelRoundTrip } from '../../../../src/core/traffic/round-trip-label.ts';
import { createWarningLedger } from '../../../../src/core/warnings.ts';
import { fixturePath } from '../../../support/fixtures.ts';
import { validateChatRequestForVllm } from '../../../../mock-backend/vllm-chat-validator.ts';

/*
 * Local compaction as the real Codex 0.171 does it for a custom provider: a turn, then the
 * compaction request (the whole history, a final "CONTEXT CHECKPOINT COMPACTION" user message and
 * `tools: []`), then the next turn starting over from the summary. Recorded as three exchanges, each
 * with its `x-codex-turn-metadata` header and its body.
 */

const exchangeSchema = z.array(
  z.looseObject({
    'x-codex-turn-metadata': z.record(z.string(), z.unknown()),
    body: z.looseObject({ tools: z.array(z.unknown()), tool_choice: z.unknown(), parallel_tool_calls: z.boolean(), input: z.array(z.unknown()) }),
  }),
);

function readExchanges() {
  const parsed = parseJson(readFileSync(fixturePath('captures', 'f_local_compaction_custom_provider_v0.171.json'), 'utf8'));
  assert.ok(parsed.success, 'the compaction capture is not JSON');
  return exchangeSchema.parse(parsed.value);
}

const exchanges = readExchanges();
const ledger = createWarningLedger();
const lowered = exchanges.map((exchange) => convertResponsesRequestToChatRequest(exchange.body, resolveBridgeOptions(), ledger));
const [turn, compaction, resumed] = lowered;
assert.ok(turn && compaction && resumed, 'the capture holds three exchanges');

function lastUserText(index: number): string {
  const message = lowered[index]?.chatRequest.messages.at(-1);
  assert.equal(message?.role, 'user');
  return typeof message?.content === 'string' ? message.content : '';
}

describe('local compaction (capture of Codex 0.171 with a custom provider)', () => {
  it('is what the capture says: tools, then `tools: []` with tool_choice auto and no parallel calls, then tools again', () => {
    assert.deepStrictEqual(
      exchanges.map((exchange) => [exchange['x-codex-turn-metadata']['request_kind'], exchange.body.tools.length > 0, exchange.body.tool_choice, exchange.body.parallel_tool_calls]),
      [
        ['turn', true, 'auto', true],
        ['compaction', false, 'auto', false],
        ['turn', true, 'auto', true],
      ],
    );
  });

  it('sends the compaction request upstream without tools, tool_choice or parallel_tool_calls', () => {
    const request = compaction.chatRequest;
    assert.equal('tools' in request, false);
    assert.equal('tool_choice' in request, false);
    assert.equal('parallel_tool_calls' in request, false);
    assert.deepStrictEqual(compaction.summary.tools, []);
    assert.deepStrictEqual(compaction.summary.toolChoice, { original: 'auto', sent: null });
    assert.match(lastUserText(1), /^You are performing a CONTEXT CHECKPOINT COMPACTION\./);
  });

  it('keeps the history of the compaction request, tool call and output included, though no tool is declared', () => {
    const messages = compaction.chatRequest.messages;
    const assistant = messages.find((message) => message.role === 'assistant');
    assert.deepStrictEqual(assistant, {
      role: 'assistant',
      content: 'Running echo.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'exec_command', arguments: '{"cmd": "echo hi"}' } }],
    });
    const output = messages.find((message) => message.role === 'tool');
    assert.equal(output?.role === 'tool' ? output.tool_call_id : null, 'call_1');
    assert.deepStrictEqual(
      messages.map((message) => message.role),
      ['system', 'user', 'user', 'assistant', 'tool', 'user'],
    );
  });

  it('every request of the exchange is one vLLM accepts', () => {
    for (const [index, request] of lowered.entries()) assert.deepStrictEqual(validateChatRequestForVllm(request.chatRequest), null, `exchange ${index}`);
  });

  it('continues with the summary and the tools again', () => {
    assert.match(lastUserText(2), /^Another language model started to solve this problem and produced a summary/);
    assert.match(lastUserText(2), /SUMMARY of work$/);
    assert.deepStrictEqual(
      resumed.chatRequest.tools?.map((tool) => (tool.type === 'function' ? tool.function.name : tool.custom.name)),
      turn.chatRequest.tools?.map((tool) => (tool.type === 'function' ? tool.function.name : tool.custom.name)),
    );
    assert.equal(resumed.chatRequest.tool_choice, 'auto');
    assert.equal(resumed.chatRequest.parallel_tool_calls, true);
    assert.equal(resumed.chatRequest.messages.some((message) => message.role === 'tool'), false, 'the summary replaces the tool round');
  });

  it('raises no warning beyond the session-wide hosted-tool one', () => {
    assert.deepStrictEqual(
      lowered.map((request) => request.warnings.map((warning) => warning.kind)),
      [['hosted_tool_dropped'], [], []],
    );
  });

  it('labels the three round trips turn, compaction, turn from their metadata header', () => {
    assert.deepStrictEqual(
      exchanges.map((exchange) => labelRoundTrip(JSON.stringify(exchange['x-codex-turn-metadata']))),
      [
        { kind: 'turn', agentName: '/root', text: 'turn' },
        { kind: 'compaction', agentName: '/root', text: 'compaction' },
        { kind: 'turn', agentName: '/root', text: 'turn' },
      ],
    );
  });
});
