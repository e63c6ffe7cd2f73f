import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveBridgeOptions } from '../../../src/core/bridge-options.ts';
import { InvalidRequestError } from '../../../src/core/errors.ts';
import { convertResponsesRequestToChatRequest } from '../../../src/core/lower/convert-responses-request-to-chat-request.ts';
import type { ToolDeclaration } from '../../../src/core/lower/lower-tools.ts';
import { createToolLoweringCache } from '../../../src/core/lower/tool-lowering-cache.ts';
import { serialiseChatRequest } from '../../../src/core/serialise-chat-request.ts';
import { createWarningLedger } from '../../../src/core/warnings.ts';

const LARK = 'start: begin_patch hunk+ end_patch';
const applyPatch = () => ({ type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: LARK } });
const execCommand = (description = 'Run.') => ({
  type: 'function',
  name: 'exec_command',
  description,
  parameters: { type: 'object', properties: { cmd: { type: 'string' }, workdir: { type: 'string' } } },
});
const webSearch = () => ({ type: 'web_search' });

/** A fresh parse of the same tools, as each request brings its own. */
function declare(...tools: object[]): ToolDeclaration[] {
  return structuredClone(tools).map((tool, index) => ({ tool: tool as ToolDeclaration['tool'], source: 'tools', path: `tools[${index}]` }));
}

function request(tools: object[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return structuredClone({ model: 'qwen3-coder', input: 'hello', tools, tool_choice: 'auto', stream: true, ...extra });
}

describe('tool lowering cache', () => {
  const options = resolveBridgeOptions();

  it('lowers a tool list once and hands the same frozen lowering to every request that declares it again', () => {
    const cache = createToolLoweringCache();
    const first = cache.lower(declare(execCommand(), applyPatch()), options, null);
    const again = cache.lower(declare(execCommand(), applyPatch()), options, null);
    assert.equal(again, first);
    assert.deepEqual(
      first.chatTools.map((tool) => (tool.type === 'function' ? tool.function.name : null)),
      ['exec_command', 'apply_patch'],
    );
    assert.deepEqual(first.chatToolsJson, { text: JSON.stringify(first.chatTools), byteLength: Buffer.byteLength(JSON.stringify(first.chatTools)) });
    assert.ok(Object.isFrozen(first.chatToolsJson));
    assert.deepEqual([...first.toolMap.keys()], ['exec_command', 'apply_patch']);
    // Shared between requests: nothing of it can change.
    assert.ok(Object.isFrozen(first.chatTools) && Object.isFrozen(first.chatTools[0]) && Object.isFrozen(first.value[1]));
    const tool = first.chatTools[0];
    assert.throws(() => {
      if (tool?.type === 'function') (tool.function as { name: string }).name = 'changed';
    }, TypeError);
    assert.throws(() => (first.toolMap as Map<string, unknown>).set('x', {}), TypeError);
    assert.throws(() => (first.toolMap as Map<string, unknown>).delete('exec_command'), TypeError);
  });

  it('lowers afresh whatever differs: a value, a key order, the options object, the examples, a path', () => {
    const cache = createToolLoweringCache();
    const base = cache.lower(declare(execCommand(), applyPatch()), options, null);
    assert.notEqual(cache.lower(declare(execCommand('Run it.'), applyPatch()), options, null), base);
    const reordered = execCommand();
    reordered.parameters.properties = { workdir: { type: 'string' }, cmd: { type: 'string' } };
    const lowered = cache.lower(declare(reordered, applyPatch()), options, null);
    assert.notEqual(lowered, base);
    assert.notEqual(lowered.chatToolsJson, base.chatToolsJson, 'the lowered schema keeps the declared key order');
    assert.notEqual(cache.lower(declare(applyPatch(), execCommand()), options, null), base);
    assert.notEqual(cache.lower(declare(execCommand(), applyPatch()), resolveBridgeOptions(), null), base, 'another options object');
    assert.notEqual(cache.lower(declare(execCommand(), applyPatch()), options, () => 'example'), base);
    const carried = declare(execCommand(), applyPatch()).map((declaration) => ({ ...declaration, source: 'additional_tools' as const }));
    assert.notEqual(cache.lower(carried, options, null), base);
    assert.equal(cache.lower(declare(execCommand(), applyPatch()), options, null), base, 'the original is still kept');
  });

  it('keeps the most recently used lists and forgets the oldest beyond its size', () => {
    const cache = createToolLoweringCache({ maxEntries: 2 });
    const one = cache.lower(declare(execCommand('one')), options, null);
    const two = cache.lower(declare(execCommand('two')), options, null);
    assert.equal(cache.lower(declare(execCommand('one')), options, null), one, 'used again: now the most recent');
    cache.lower(declare(execCommand('three')), options, null);
    assert.equal(cache.lower(declare(execCommand('one')), options, null), one);
    assert.notEqual(cache.lower(declare(execCommand('two')), options, null), two, 'the least recently used went');
  });

  it('keeps no refusal: a colliding list is refused on every request', () => {
    const cache = createToolLoweringCache();
    const colliding = () => declare(execCommand('one'), execCommand('two'));
    assert.throws(() => cache.lower(colliding(), options, null), InvalidRequestError);
    assert.throws(() => cache.lower(colliding(), options, null), InvalidRequestError);
  });

  it('does not keep a list holding U+0000, which is how every placeholder of a large body starts', () => {
    const cache = createToolLoweringCache();
    const withNul = () => declare(execCommand('\u0000f00d:0\u0000'));
    const first = cache.lower(withNul(), options, null);
    assert.ok(!Object.isFrozen(first.chatTools), 'handed out as this request\'s own');
    assert.notEqual(cache.lower(withNul(), options, null), first);
  });
});

/** The body as text: with known parts it is written straight into bytes. */
const bodyText = (body: string | Buffer): string => (typeof body === 'string' ? body : body.toString('utf8'));

describe('lowering and serialising with the cache', () => {
  const options = resolveBridgeOptions();

  it('sends the same bytes, the second time without lowering or serialising the tools again', () => {
    const cache = createToolLoweringCache();
    const tools = [execCommand(), applyPatch()];
    const plain = convertResponsesRequestToChatRequest(request(tools), options, createWarningLedger());
    const ledger = createWarningLedger();
    const first = convertResponsesRequestToChatRequest(request(tools), options, ledger, { toolCache: cache });
    const second = convertResponsesRequestToChatRequest(request(tools), options, ledger, { toolCache: cache });
    assert.equal(second.chatRequest.tools, first.chatRequest.tools, 'the cached tools themselves');
    assert.equal(second.toolMap, first.toolMap);
    assert.equal(second.toolsJson?.text, JSON.stringify(plain.chatRequest.tools));
    assert.equal(second.toolsJson?.byteLength, Buffer.byteLength(JSON.stringify(plain.chatRequest.tools)));
    for (const byParts of [false, true]) {
      const expected = serialiseChatRequest(plain.chatRequest, { byParts, largeStrings: null });
      const sent = serialiseChatRequest(second.chatRequest, { byParts, largeStrings: null, known: { tools: second.toolsJson } });
      assert.equal(bodyText(sent.body), expected.body);
      assert.equal(bodyText(sent.body), JSON.stringify(plain.chatRequest));
      assert.deepEqual(sent.readParts?.(), expected.readParts?.());
    }
  });

  it('splices the tools in among the other members whatever their order, leaving out those without a value', () => {
    const cache = createToolLoweringCache();
    const tools = [execCommand()];
    convertResponsesRequestToChatRequest(request(tools), options, createWarningLedger(), { toolCache: cache });
    const lowered = convertResponsesRequestToChatRequest(request(tools, { max_output_tokens: 64, temperature: 0.5 }), options, createWarningLedger(), { toolCache: cache });
    assert.ok(lowered.toolsJson !== null);
    const reordered = { tools: lowered.chatRequest.tools, ...lowered.chatRequest, unset: undefined, model: 'ünï — 模型' };
    assert.equal(bodyText(serialiseChatRequest(reordered, { byParts: false, largeStrings: null, known: { tools: lowered.toolsJson } }).body), JSON.stringify(reordered));
  });

  it('gives a tool_choice that keeps only some tools a tool list of its own, and shows once-per-process warnings once', () => {
    const cache = createToolLoweringCache();
    const tools = [execCommand(), applyPatch(), webSearch()];
    const ledger = createWarningLedger();
    const first = convertResponsesRequestToChatRequest(request(tools), options, ledger, { toolCache: cache });
    assert.deepEqual(
      first.warnings.map((warning) => warning.kind),
      ['grammar_not_enforced', 'hosted_tool_dropped'],
    );
    const forced = convertResponsesRequestToChatRequest(request(tools, { tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'custom', name: 'apply_patch' }] } }), options, ledger, { toolCache: cache });
    const plainForced = convertResponsesRequestToChatRequest(request(tools, { tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'custom', name: 'apply_patch' }] } }), options, createWarningLedger());
    assert.equal(forced.toolsJson, null, 'not the cached list: tool_choice left some out');
    assert.deepEqual(forced.chatRequest.tools?.map((tool) => (tool.type === 'function' ? tool.function.name : null)), ['apply_patch']);
    assert.deepEqual(forced.chatRequest.tools, plainForced.chatRequest.tools);
    assert.deepEqual([...forced.toolMap.keys()], [...plainForced.toolMap.keys()]);
    assert.deepEqual(forced.summary.tools, plainForced.summary.tools);
    const third = convertResponsesRequestToChatRequest(request(tools), options, ledger, { toolCache: cache });
    assert.notEqual(third.toolsJson, null);
    assert.deepEqual(third.warnings, [], 'both were reported on the first request');
  });
});
