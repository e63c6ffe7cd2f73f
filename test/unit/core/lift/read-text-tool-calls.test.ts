import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ChatCompletionChunk } from '../../../../src/core/chat/chat-completions-api.ts';
import { mayBecomeTextToolCall, readTextToolCalls } from '../../../../src/core/lift/read-text-tool-calls.ts';
import type { ResponsesOutputItem, ResponsesStreamEvent } from '../../../../src/core/responses/responses-output.ts';
import { ChatStreamTranslator } from '../../../../src/core/stream/chat-stream-to-responses-events.ts';
import type { ToolMap, ToolMapEntry } from '../../../../src/core/tool-map.ts';
import { assertCodexAcceptsStream } from '../../../support/codex-stream-oracle.ts';
import { fixturePath } from '../../../support/fixtures.ts';

/*
 * The corpus of tool calls engines left as text (test/fixtures/text-tool-calls, each case with the
 * public report it comes from), streamed through the translator in small pieces: every case ends as
 * the report's calls (recovered), as its text with one tool_call_as_text warning (warned), or as its
 * text with no warning (untouched); nothing is read as a call it was not.
 */

interface CorpusCase {
  id: string;
  family: string;
  source: string;
  text: string;
  tools: Record<string, 'function' | 'custom'>;
  expected: 'recovered' | 'warned' | 'untouched';
  calls?: Array<{ name: string; arguments: Record<string, unknown> }>;
}

const corpus = (JSON.parse(readFileSync(fixturePath('text-tool-calls', 'corpus.json'), 'utf8')) as { cases: CorpusCase[] }).cases;

function toolMapOf(tools: CorpusCase['tools']): ToolMap {
  return new Map(Object.entries(tools).map(([name, kind]): [string, ToolMapEntry] => [name, { wireName: name, name, namespace: null, kind, grammar: null }]));
}

function chunk(content: string | null, finishReason: string | null = null): ChatCompletionChunk {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finishReason }] };
}

type Outcome = 'recovered' | 'warned' | 'untouched' | 'wrong';

function runCase(corpusCase: CorpusCase, pieceLength: number): { outcome: Outcome; detail: string } {
  let items = 0;
  const translator = new ChatStreamTranslator({ responseId: 'resp_1', model: 'm', createdAt: 1, toolMap: toolMapOf(corpusCase.tools), createItemId: (prefix) => `${prefix}_${items++}` });
  const events: ResponsesStreamEvent[] = [...translator.start()];
  for (let start = 0; start < corpusCase.text.length; start += pieceLength) events.push(...translator.push(chunk(corpusCase.text.slice(start, start + pieceLength))));
  events.push(...translator.push(chunk(null, 'stop')), ...translator.finish());
  assertCodexAcceptsStream(events, { expectedKinds: Object.fromEntries(Object.entries(corpusCase.tools).map(([name, kind]) => [name, kind === 'custom' ? 'custom_tool_call' : 'function_call'])) });
  const done = events.flatMap((event): ResponsesOutputItem[] => (event.type === 'response.output_item.done' ? [event.item] : []));
  const calls = done.filter((item) => item.type === 'function_call' || item.type === 'custom_tool_call');
  const messages = done.filter((item) => item.type === 'message');
  const warnings = translator.warnings.filter((warning) => warning.kind === 'tool_call_as_text');
  if (calls.length > 0) {
    const read = calls.map((item) => ({
      name: item.name,
      arguments: item.type === 'custom_tool_call' ? { input: item.input } : (JSON.parse(item.arguments) as Record<string, unknown>),
    }));
    const right = messages.length === 0 && warnings.length === calls.length && JSON.stringify(read) === JSON.stringify(corpusCase.calls);
    return { outcome: right ? 'recovered' : 'wrong', detail: JSON.stringify(read) };
  }
  const message = messages[0];
  const delivered = message?.type === 'message' ? message.content.map((part) => part.text).join('') : '';
  if (delivered !== corpusCase.text) return { outcome: 'wrong', detail: `delivered ${JSON.stringify(delivered)}` };
  return { outcome: warnings.length === 0 ? 'untouched' : 'warned', detail: warnings.map((warning) => warning.detail).join(' | ') };
}

describe('text tool-call corpus', () => {
  it('ends every case as expected, streamed in pieces of any size, and none wrongly', () => {
    const tally = new Map<string, Record<Outcome, number>>();
    for (const corpusCase of corpus) {
      for (const pieceLength of [1, 7, 4096]) {
        const { outcome, detail } = runCase(corpusCase, pieceLength);
        assert.equal(outcome, corpusCase.expected, `${corpusCase.id} (pieces of ${pieceLength}): ${detail}`);
      }
      const counts = tally.get(corpusCase.family) ?? { recovered: 0, warned: 0, untouched: 0, wrong: 0 };
      counts[corpusCase.expected] += 1;
      tally.set(corpusCase.family, counts);
    }
    // The figures docs/RULES.md quotes; printed so a run shows them.
    for (const [family, counts] of tally) console.log(`text tool-call corpus: ${family}: ${counts.recovered} recovered, ${counts.warned} warned, ${counts.untouched} left alone, ${counts.wrong} wrong`);
    assert.ok(corpus.length >= 25);
  });

  it('names a source for every case', () => {
    for (const corpusCase of corpus) assert.match(corpusCase.source, /https:\/\/github\.com\/|issue 48|llama-server/, corpusCase.id);
  });
});

describe('mayBecomeTextToolCall', () => {
  it('holds what may still open a call block and releases prose at its first letter', () => {
    for (const prefix of ['', '\n', '<', '<tool', '<tool_call>\n{"na', '<think>plan', '<think>x</think>\n<func', '[TOOL_', '{', '{"n', '[{"name": "x"', '```', '```json\n<tool_call>', '<｜tool▁calls▁begin｜>', '<|start|>assistant']) {
      assert.equal(mayBecomeTextToolCall(prefix), true, JSON.stringify(prefix));
    }
    for (const prefix of ['I', 'Sure', '<b>', '{"answer"', '```python\n', '<think>x</think>Done', '[link]']) {
      assert.equal(mayBecomeTextToolCall(prefix), false, JSON.stringify(prefix));
    }
  });
});

describe('readTextToolCalls', () => {
  const tools = toolMapOf({ apply_patch: 'custom', shell: 'function' });

  it('keeps a free-form input as written, where a function argument that is JSON becomes its value', () => {
    const reading = readTextToolCalls('<function=apply_patch>\n<parameter=input>\n[1, 2]\n</parameter>\n</function>\n<function=shell>\n<parameter=command>\n["ls"]\n</parameter>\n</function>', tools);
    assert.equal(reading.kind, 'calls');
    assert.ok(reading.kind === 'calls');
    assert.deepEqual(
      reading.calls.map((call) => JSON.parse(call.argumentsText) as unknown),
      [{ input: '[1, 2]' }, { command: ['ls'] }],
    );
  });

  it('reports two call forms in one text, a repeated parameter and arguments that do not parse, never reading them', () => {
    const mixed = readTextToolCalls('<tool_call>{"name": "shell", "arguments": {}}</tool_call>\n<tool_call>\n<function=shell>\n</function>\n</tool_call>', tools);
    assert.ok(mixed.kind === 'markup' && /two call forms/.test(mixed.reason), JSON.stringify(mixed));
    const repeated = readTextToolCalls('<function=shell>\n<parameter=command>\na\n</parameter>\n<parameter=command>\nb\n</parameter>\n</function>', tools);
    assert.ok(repeated.kind === 'markup' && /repeats/.test(repeated.reason), JSON.stringify(repeated));
    const broken = readTextToolCalls('<tool_call>{"name": "shell", "arguments": {"command": ["ls"]}}}</tool_call>', tools);
    assert.ok(broken.kind === 'markup' && /does not parse/.test(broken.reason), JSON.stringify(broken));
  });
});
