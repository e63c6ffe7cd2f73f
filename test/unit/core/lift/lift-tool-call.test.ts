import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createGrammarCache } from '../../../../src/core/grammar/grammar-cache.ts';
import {
  createCallIdDeduplicator,
  liftNativeCustomToolCall,
  liftToolCall,
  readChatToolCallArguments,
  type LiftToolCallInput,
} from '../../../../src/core/lift/lift-tool-call.ts';
import type { ToolMap, ToolMapEntry } from '../../../../src/core/tool-map.ts';
import { fixturePath } from '../../../support/fixtures.ts';

/** The apply_patch grammar exactly as Codex 0.171 sends it. */
function readCapturedPatchGrammar(): { syntax: string; definition: string } {
  const file = fixturePath('captures/b_freeform_apply_patch_gpt-5.5_v0.171.req1.json');
  const body = JSON.parse(readFileSync(file, 'utf8')) as { tools: Array<{ name?: string; format?: { syntax: string; definition: string } }> };
  const format = body.tools.find((tool) => tool.name === 'apply_patch')?.format;
  assert.ok(format, 'the capture declares apply_patch with a grammar');
  return { syntax: format.syntax, definition: format.definition };
}

const patchGrammar = readCapturedPatchGrammar();

function entry(fields: Partial<ToolMapEntry> & Pick<ToolMapEntry, 'wireName' | 'name' | 'kind'>): [string, ToolMapEntry] {
  return [fields.wireName, { namespace: null, grammar: null, ...fields }];
}

const toolMap: ToolMap = new Map([
  entry({ wireName: 'apply_patch', name: 'apply_patch', kind: 'custom', grammar: patchGrammar }),
  entry({ wireName: 'functions__exec', name: 'exec', namespace: 'functions', kind: 'custom' }),
  entry({ wireName: 'exec_command', name: 'exec_command', kind: 'function' }),
  entry({ wireName: 'multi_agent_v1__close_agent', name: 'close_agent', namespace: 'multi_agent_v1', kind: 'function' }),
]);

const validPatch = '*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\n';

function call(fields: Partial<LiftToolCallInput> & Pick<LiftToolCallInput, 'wireName' | 'argumentsText'>): LiftToolCallInput {
  return { callId: 'call_1', finishReason: 'tool_calls', toolMap, itemId: 'item_1', ...fields };
}

describe('liftToolCall: bridged custom tools', () => {
  it('lifts a top-level custom tool to custom_tool_call without a namespace key', () => {
    const result = liftToolCall(call({ wireName: 'apply_patch', argumentsText: JSON.stringify({ input: validPatch }) }));
    assert.deepEqual(result, {
      item: { type: 'custom_tool_call', id: 'item_1', call_id: 'call_1', name: 'apply_patch', input: validPatch, status: 'completed' },
      warnings: [],
    });
    assert.equal(result.item !== null && 'namespace' in result.item, false);
  });

  it('restores the namespace and the bare name', () => {
    const code = 'const r = await tools.exec_command({cmd: "ls"});\ntext(r);';
    assert.deepEqual(liftToolCall(call({ wireName: 'functions__exec', argumentsText: `{"input": ${JSON.stringify(code)}}` })), {
      item: { type: 'custom_tool_call', id: 'item_1', call_id: 'call_1', namespace: 'functions', name: 'exec', input: code, status: 'completed' },
      warnings: [],
    });
  });

  it('creates a ctc_ item id when none is given', () => {
    const result = liftToolCall(call({ wireName: 'functions__exec', argumentsText: '{"input":"1"}', itemId: undefined }));
    assert.match(result.item?.id ?? '', /^ctc_[0-9a-f]{24}$/);
  });

  it('passes lifting warnings through with the bare tool name', () => {
    const result = liftToolCall(call({ wireName: 'functions__exec', argumentsText: '{"input": null}' }));
    assert.equal(result.item?.type === 'custom_tool_call' && result.item.input, 'null');
    assert.deepEqual(
      result.warnings.map((warning) => [warning.kind, warning.tool, warning.callId]),
      [['non_string_payload', 'exec', 'call_1']],
    );
  });

  it('omits a truncated custom call (unterminated prefix, finish reason tool_calls)', () => {
    const result = liftToolCall(call({ wireName: 'apply_patch', argumentsText: '{"input": "*** Begin Patch\\n*** Upd' }));
    assert.equal(result.item, null);
    assert.equal(result.item === null && result.truncatedKind, 'custom_tool_call');
    assert.deepEqual(result.warnings.map((warning) => warning.kind), ['truncated']);
  });

  it('omits a custom call cut by length', () => {
    const result = liftToolCall(call({ wireName: 'functions__exec', argumentsText: '{"input": "a\nb', finishReason: 'length' }));
    assert.deepEqual([result.item, result.item === null && result.truncatedKind], [null, 'custom_tool_call']);
  });
});

describe('liftToolCall: grammar-aware check', () => {
  const lift = (input: string, fields: Partial<LiftToolCallInput> = {}) =>
    liftToolCall(call({ wireName: 'apply_patch', argumentsText: JSON.stringify({ input }), ...fields }));
  const mismatch = (input: string) => lift(input).warnings.map((warning) => [warning.kind, warning.detail]);

  it('accepts patches that match the captured grammar (no final newline too)', () => {
    assert.deepEqual(mismatch(validPatch), []);
    assert.deepEqual(mismatch(validPatch.trimEnd()), []);
    assert.deepEqual(mismatch('*** Begin Patch\n*** Add File: b.txt\n+hi\n*** Update File: c\n*** Move to: d\n@@\n+x\n*** End of File\n*** Delete File: e\n*** End Patch'), []);
  });

  it('still delivers the call unchanged but warns with the line Codex will reject', () => {
    // Decorated markers are a safe rescue, but an update with no hunk stays unappliable after it.
    assert.deepEqual(mismatch('*** Begin Patch ***\n*** Update File: a\n*** End Patch'), [
      ['grammar_mismatch', "Codex will reject this apply_patch input: line 1: the first line must be '*** Begin Patch'"],
    ]);
    // An XML parser cuts the value at an embedded </parameter>: the missing end is not even offered as a fix.
    assert.deepEqual(mismatch('*** Begin Patch\n*** Update File: a.xml\n@@\n+<parameter=x>'), [
      ['grammar_mismatch', "Codex will reject this apply_patch input: line 4: the last line must be '*** End Patch'"],
    ]);
    assert.deepEqual(mismatch('*** Begin Patch\n*** Modify File: a\n*** End Patch'), [
      [
        'grammar_mismatch',
        "Codex will reject this apply_patch input: line 2: '*** Modify File: a' is not a file header ('*** Add File: ', '*** Delete File: ' or '*** Update File: ')",
      ],
    ]);
    // Grammar-valid text Codex cannot apply.
    assert.deepEqual(mismatch('*** Begin Patch\n*** Update File: a\n@@ -1,2 +1,2 @@\n-x\n+y\n*** End Patch\n'), [
      [
        'grammar_mismatch',
        "Codex will reject this apply_patch input: line 3: '@@ -1,2 +1,2 @@' is a unified-diff range header; Codex reads it as a context line to find in the file and fails",
      ],
    ]);
    const result = lift('oops');
    assert.equal(result.item?.type === 'custom_tool_call' && result.item.input, 'oops');
    assert.deepEqual(
      result.warnings.map((warning) => [warning.kind, warning.tool, warning.callId, warning.raw]),
      [['grammar_mismatch', 'apply_patch', 'call_1', 'oops']],
    );
  });

  it('delivers the repaired input with grammar_repaired when repair is on', () => {
    const fenced = `\`\`\`diff\n${validPatch}\`\`\``;
    const result = lift(fenced, { grammarRepair: true });
    assert.equal(result.item?.type === 'custom_tool_call' && result.item.input, validPatch);
    assert.equal(result.item !== null && result.grammarRepaired, true);
    assert.deepEqual(result.warnings.map((warning) => [warning.kind, warning.raw]), [['grammar_repaired', fenced]]);
    assert.match(result.warnings[0]?.detail ?? '', /removed the Markdown code fence around the patch/);
  });

  it('appends a missing *** End Patch only with repair on, a clean finish and a finished last line', () => {
    const withoutEnd = validPatch.replace('*** End Patch\n', '');
    const delivered = (input: string, fields: Partial<LiftToolCallInput>) => {
      const result = lift(input, { grammarRepair: true, ...fields });
      return [result.item?.type === 'custom_tool_call' && result.item.input, result.warnings.map((warning) => warning.kind)];
    };
    assert.deepEqual(delivered(withoutEnd, {}), [`${withoutEnd}*** End Patch`, ['grammar_repaired']]);
    assert.deepEqual(delivered(withoutEnd, { finishReason: 'stop' }), [`${withoutEnd}*** End Patch`, ['grammar_repaired']]);
    // A length finish whose arguments still parse (an XML parser closes the JSON), a stream that ended
    // without a finish reason, and a last line without its newline may all be cuts: never completed.
    assert.deepEqual(delivered(withoutEnd, { finishReason: 'length' }), [withoutEnd, ['grammar_mismatch']]);
    assert.deepEqual(delivered(withoutEnd, { finishReason: null }), [withoutEnd, ['grammar_mismatch']]);
    assert.deepEqual(delivered(withoutEnd.trimEnd(), {}), [withoutEnd.trimEnd(), ['grammar_mismatch']]);
    assert.deepEqual(delivered(withoutEnd, { grammarRepair: false }), [withoutEnd, ['grammar_mismatch']]);
  });

  it('reports an uncompilable grammar once per cache, and not at all without a grammar', () => {
    const brokenMap: ToolMap = new Map([entry({ wireName: 'broken', name: 'broken', kind: 'custom', grammar: { syntax: 'lark', definition: 'start: start "a"\n' } })]);
    const grammarCache = createGrammarCache();
    const kinds = () =>
      liftToolCall(call({ wireName: 'broken', argumentsText: '{"input": "x"}', toolMap: brokenMap, grammarCache })).warnings.map((warning) => warning.kind);
    assert.deepEqual(kinds(), ['grammar_uncompilable']);
    assert.deepEqual(kinds(), []);
    assert.deepEqual(liftToolCall(call({ wireName: 'functions__exec', argumentsText: '{"input": "oops"}' })).warnings, []);
  });
});

describe('liftToolCall: function tools', () => {
  it('passes arguments through as received', () => {
    assert.deepEqual(liftToolCall(call({ wireName: 'exec_command', argumentsText: '{"cmd": "ls",  "x":1}' })), {
      item: { type: 'function_call', id: 'item_1', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd": "ls",  "x":1}', status: 'completed' },
      warnings: [],
    });
  });

  it('restores the namespace and the bare name, with an fc_ item id', () => {
    const result = liftToolCall(call({ wireName: 'multi_agent_v1__close_agent', argumentsText: '{}', itemId: undefined }));
    assert.match(result.item?.id ?? '', /^fc_[0-9a-f]{24}$/);
    assert.deepEqual(
      { ...result, item: { ...result.item, id: 'id' } },
      {
        item: { type: 'function_call', id: 'id', call_id: 'call_1', namespace: 'multi_agent_v1', name: 'close_agent', arguments: '{}', status: 'completed' },
        warnings: [],
      },
    );
  });

  it('keeps unknown names as function_call unchanged', () => {
    assert.deepEqual(liftToolCall(call({ wireName: 'invented_tool', argumentsText: '{"a":1}' })), {
      item: { type: 'function_call', id: 'item_1', call_id: 'call_1', name: 'invented_tool', arguments: '{"a":1}', status: 'completed' },
      warnings: [],
    });
  });

  it('delivers malformed function arguments that are not a cut-off prefix (Codex reports the error)', () => {
    const result = liftToolCall(call({ wireName: 'exec_command', argumentsText: 'ls -la' }));
    assert.equal(result.item?.type === 'function_call' && result.item.arguments, 'ls -la');
    assert.deepEqual(result.warnings, []);
  });

  it('omits a function call whose arguments are an unterminated prefix', () => {
    const result = liftToolCall(call({ wireName: 'exec_command', argumentsText: '{"cmd": "rm -rf /tmp/x' }));
    assert.deepEqual([result.item, result.item === null && result.truncatedKind], [null, 'function_call']);
    assert.deepEqual(
      result.warnings.map((warning) => [warning.kind, warning.tool, warning.callId, warning.raw]),
      [['truncated', 'exec_command', 'call_1', '{"cmd": "rm -rf /tmp/x']],
    );
  });

  it('omits an unparsable function call cut by length, but delivers a parsable one', () => {
    assert.equal(liftToolCall(call({ wireName: 'exec_command', argumentsText: '{"cmd": "ls"', finishReason: 'length' })).item, null);
    assert.equal(liftToolCall(call({ wireName: 'invented', argumentsText: 'x', finishReason: 'length' })).item, null);
    assert.notEqual(liftToolCall(call({ wireName: 'exec_command', argumentsText: '{"cmd": "ls"}', finishReason: 'length' })).item, null);
  });
});

describe('liftNativeCustomToolCall', () => {
  it('lifts a Chat-native custom call, restoring the namespace of a known wire name', () => {
    assert.deepEqual(liftNativeCustomToolCall({ name: 'functions__exec', input: 'text(1)', callId: 'c1', toolMap, itemId: 'i1' }), {
      type: 'custom_tool_call',
      id: 'i1',
      call_id: 'c1',
      namespace: 'functions',
      name: 'exec',
      input: 'text(1)',
      status: 'completed',
    });
  });

  it('keeps an unknown name and creates an item id', () => {
    const item = liftNativeCustomToolCall({ name: 'apply_patch_v2', input: 'x', callId: 'c1', toolMap });
    assert.deepEqual({ ...item, id: 'id' }, { type: 'custom_tool_call', id: 'id', call_id: 'c1', name: 'apply_patch_v2', input: 'x', status: 'completed' });
    assert.match(item.id, /^ctc_[0-9a-f]{24}$/);
  });
});

describe('createCallIdDeduplicator', () => {
  it('keeps unique ids and suffixes repeated ones with a warning', () => {
    const deduplicate = createCallIdDeduplicator();
    assert.deepEqual(deduplicate('call_a'), { callId: 'call_a', warning: null });
    assert.deepEqual(deduplicate('call_b'), { callId: 'call_b', warning: null });
    const second = deduplicate('call_a');
    assert.equal(second.callId, 'call_a_2');
    assert.deepEqual(second.warning && [second.warning.kind, second.warning.callId], ['duplicate_call_id', 'call_a_2']);
    assert.match(second.warning?.detail ?? '', /"call_a".*"call_a_2"/);
    assert.equal(deduplicate('call_a').callId, 'call_a_3');
  });

  it('does not collide with an engine id that already looks suffixed', () => {
    const deduplicate = createCallIdDeduplicator();
    deduplicate('x');
    deduplicate('x_2');
    assert.equal(deduplicate('x').callId, 'x_3');
  });

  it('synthesises call_<24 hex> for missing or empty ids', () => {
    const deduplicate = createCallIdDeduplicator();
    const ids = [null, undefined, '', '  '].map((id) => deduplicate(id));
    for (const { callId, warning } of ids) {
      assert.match(callId, /^call_[0-9a-f]{24}$/);
      assert.equal(warning, null);
    }
    assert.equal(new Set(ids.map(({ callId }) => callId)).size, 4);
  });

  it('uses an injected id factory', () => {
    const deduplicate = createCallIdDeduplicator(() => 'call_fixed');
    assert.equal(deduplicate(null).callId, 'call_fixed');
    assert.match(deduplicate(null).callId, /^call_[0-9a-f]{24}$/);
  });
});

describe('readChatToolCallArguments', () => {
  it('passes strings through, re-serialises objects compactly, and turns missing into ""', () => {
    assert.equal(readChatToolCallArguments('{"a": 1}'), '{"a": 1}');
    assert.equal(readChatToolCallArguments({ input: 'x', n: [1, 2] }), '{"input":"x","n":[1,2]}');
    assert.equal(readChatToolCallArguments(null), '');
    assert.equal(readChatToolCallArguments(undefined), '');
  });
});

describe('liftToolCall: a code-mode exec body that is a patch', () => {
  const execMap: ToolMap = new Map([entry({ wireName: 'functions__exec', name: 'exec', namespace: 'functions', kind: 'custom', execAppliesPatches: true })]);
  const patch = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n';
  const liftExec = (input: string) => liftToolCall({ wireName: 'functions__exec', argumentsText: JSON.stringify({ input }), callId: 'call_e', finishReason: 'tool_calls', toolMap: execMap });

  it('takes the patch out of an `apply_patch <<EOF` heredoc and calls the helper with it', () => {
    for (const body of [`apply_patch <<'EOF'\n${patch}EOF\n`, `apply_patch <<"PATCH"\n${patch}PATCH`, `\napplypatch <<EOF\n${patch}EOF\n`]) {
      const lifted = liftExec(body);
      assert.equal(lifted.item?.type === 'custom_tool_call' && lifted.item.input, `text(await tools.apply_patch(${JSON.stringify(patch)}));\n`, body);
      assert.deepEqual(lifted.warnings.map((warning) => [warning.kind, warning.raw]), [['grammar_repaired', body]]);
      assert.match(lifted.warnings[0]?.detail ?? '', /heredoc/);
    }
  });

  it('leaves a heredoc that changes directory, runs more, or holds a patch Codex rejects', () => {
    for (const body of [`cd src && apply_patch <<'EOF'\n${patch}EOF\n`, `apply_patch <<'EOF'\n${patch}EOF\necho done\n`, `apply_patch <<'EOF'\n${patch.replace('+hi\n', 'hi\n')}EOF\n`]) {
      const lifted = liftExec(body);
      assert.equal(lifted.item?.type === 'custom_tool_call' && lifted.item.input, body, body);
      assert.deepEqual(lifted.warnings, []);
    }
  });
});
