import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveBridgeOptions, type BridgeOptions } from '../../../../src/core/bridge-options.ts';
import { InvalidRequestError } from '../../../../src/core/errors.ts';
import { lowerTools, type LoweredToolRecord } from '../../../../src/core/lower/lower-tools.ts';
import { rewriteToolChoice } from '../../../../src/core/lower/rewrite-tool-choice.ts';
import { responsesToolChoiceSchema, responsesToolSchema } from '../../../../src/core/responses/responses-request.ts';
import { createWarning } from '../../../../src/core/warnings.ts';

const CODEX_TOOLS = [
  { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
  { type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } },
  {
    type: 'namespace',
    name: 'multi_agent_v1',
    description: '',
    tools: [
      { type: 'function', name: 'close_agent' },
      { type: 'function', name: 'wait_agent' },
    ],
  },
  { type: 'web_search', external_web_access: false },
];
const ALL_WIRE_NAMES = new Set(['exec_command', 'apply_patch', 'multi_agent_v1__close_agent', 'multi_agent_v1__wait_agent']);

function lowerCodexTools(options: BridgeOptions, tools: readonly unknown[] = CODEX_TOOLS): LoweredToolRecord[] {
  return lowerTools(
    tools.map((tool, index) => ({ tool: responsesToolSchema.parse(tool), source: 'tools' as const, path: `tools[${index}]` })),
    options,
  ).value;
}

function rewrite(toolChoice: unknown, options: BridgeOptions = resolveBridgeOptions(), tools: readonly unknown[] = CODEX_TOOLS) {
  const parsed = toolChoice === undefined ? undefined : responsesToolChoiceSchema.parse(toolChoice);
  return rewriteToolChoice(parsed, lowerCodexTools(options, tools), { clientDeclaredTools: tools.length > 0, options });
}

describe('rewriteToolChoice: strings', () => {
  it('absent → omitted, all tools', () => {
    assert.deepStrictEqual(rewrite(undefined), { value: { toolChoice: undefined, selectedWireNames: ALL_WIRE_NAMES }, warnings: [] });
  });

  for (const choice of ['auto', 'none', 'required'] as const) {
    it(`"${choice}" → "${choice}", all tools`, () => {
      assert.deepStrictEqual(rewrite(choice), { value: { toolChoice: choice, selectedWireNames: ALL_WIRE_NAMES }, warnings: [] });
    });
  }

  it('an unknown string → "auto" with a warning', () => {
    assert.deepStrictEqual(rewrite('any'), {
      value: { toolChoice: 'auto', selectedWireNames: ALL_WIRE_NAMES },
      warnings: [createWarning('tool_choice_rewritten', 'tool_choice "any" is not a value the bridge knows; sent "auto"')],
    });
  });

  it('"required" when the client sent no tools → 400', () => {
    assert.throws(
      () => rewrite('required', resolveBridgeOptions(), []),
      (error: unknown) =>
        InvalidRequestError.is(error) &&
        error.param === 'tool_choice' &&
        error.message === 'tool_choice "required" requires at least one tool, and the request declares none',
    );
  });

  it('"required" after lowering dropped every tool the client sent → omitted with a warning, no tools', () => {
    assert.deepStrictEqual(rewrite('required', resolveBridgeOptions(), [{ type: 'web_search' }]), {
      value: { toolChoice: undefined, selectedWireNames: new Set() },
      warnings: [
        createWarning(
          'tool_choice_rewritten',
          'tool_choice "required" cannot be honoured: no tool remains after lowering; tool_choice and tools are omitted',
        ),
      ],
    });
  });

  it('"auto" with no tool left is omitted silently (vLLM rejects tool_choice without tools)', () => {
    assert.deepStrictEqual(rewrite('auto', resolveBridgeOptions(), [{ type: 'web_search' }]), {
      value: { toolChoice: undefined, selectedWireNames: new Set() },
      warnings: [],
    });
  });
});

describe('rewriteToolChoice: named tools', () => {
  it('{"type":"function","name"} → the named function form', () => {
    assert.deepStrictEqual(rewrite({ type: 'function', name: 'exec_command' }), {
      value: { toolChoice: { type: 'function', function: { name: 'exec_command' } }, selectedWireNames: ALL_WIRE_NAMES },
      warnings: [],
    });
  });

  it('{"type":"function","name","namespace"} → the named form with the joined wire name', () => {
    assert.deepStrictEqual(rewrite({ type: 'function', name: 'close_agent', namespace: 'multi_agent_v1' }), {
      value: { toolChoice: { type: 'function', function: { name: 'multi_agent_v1__close_agent' } }, selectedWireNames: ALL_WIRE_NAMES },
      warnings: [],
    });
  });

  it('{"type":"custom","name"} → the named function form of the bridged tool', () => {
    assert.deepStrictEqual(rewrite({ type: 'custom', name: 'apply_patch' }), {
      value: { toolChoice: { type: 'function', function: { name: 'apply_patch' } }, selectedWireNames: ALL_WIRE_NAMES },
      warnings: [],
    });
  });

  it('a name that is absent after lowering → "auto" with a warning', () => {
    assert.deepStrictEqual(rewrite({ type: 'function', name: 'no_such_tool' }), {
      value: { toolChoice: 'auto', selectedWireNames: ALL_WIRE_NAMES },
      warnings: [
        createWarning(
          'tool_choice_rewritten',
          'tool_choice {"type":"function","name":"no_such_tool"} names a tool that is not among the tools sent to the backend; sent "auto"',
        ),
      ],
    });
  });

  it('a named custom choice with dropCustomTools → "auto" with a warning', () => {
    const result = rewrite({ type: 'custom', name: 'apply_patch' }, resolveBridgeOptions({ dropCustomTools: true }));
    assert.deepStrictEqual(result, {
      value: { toolChoice: 'auto', selectedWireNames: new Set(['exec_command', 'multi_agent_v1__close_agent', 'multi_agent_v1__wait_agent']) },
      warnings: [
        createWarning(
          'tool_choice_rewritten',
          'tool_choice {"type":"custom","name":"apply_patch"} names a custom tool, and custom tools are dropped (dropCustomTools); sent "auto"',
        ),
      ],
    });
  });

  it('a named custom choice with passthrough → the Chat-native custom form (OpenAI only)', () => {
    assert.deepStrictEqual(rewrite({ type: 'custom', name: 'apply_patch' }, resolveBridgeOptions({ strategy: 'passthrough' })).value.toolChoice, {
      type: 'custom',
      custom: { name: 'apply_patch' },
    });
  });
});

describe('rewriteToolChoice: allowed_tools and namespaces', () => {
  it('allowed_tools keeps only the referenced tools and sends the mode', () => {
    assert.deepStrictEqual(
      rewrite({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'exec_command' }, { type: 'custom', name: 'apply_patch' }] }),
      {
        value: { toolChoice: 'auto', selectedWireNames: new Set(['exec_command', 'apply_patch']) },
        warnings: [
          createWarning(
            'tools_filtered',
            'tool_choice {"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"exec_command"},{"type":"custom","name":"apply_patch"}]} keeps 2 of 4 tools; the others are not sent',
          ),
        ],
      },
    );
  });

  it('allowed_tools with mode "required" and exactly one ref → the named form', () => {
    const result = rewrite({ type: 'allowed_tools', mode: 'required', tools: [{ type: 'custom', name: 'apply_patch' }] });
    assert.deepStrictEqual(result.value, {
      toolChoice: { type: 'function', function: { name: 'apply_patch' } },
      selectedWireNames: new Set(['apply_patch']),
    });
    assert.deepStrictEqual(result.warnings.map((warning) => warning.kind), ['tools_filtered']);
  });

  it('allowed_tools with mode "required" and several refs → "required"', () => {
    const result = rewrite({
      type: 'allowed_tools',
      mode: 'required',
      tools: [{ type: 'function', name: 'exec_command' }, { type: 'function', name: 'wait_agent', namespace: 'multi_agent_v1' }],
    });
    assert.deepStrictEqual(result.value, { toolChoice: 'required', selectedWireNames: new Set(['exec_command', 'multi_agent_v1__wait_agent']) });
  });

  it('allowed_tools accepts a namespace ref (all its members) and ignores hosted refs', () => {
    const result = rewrite({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'namespace', name: 'multi_agent_v1' }, { type: 'web_search' }] });
    assert.deepStrictEqual(result.value, {
      toolChoice: 'auto',
      selectedWireNames: new Set(['multi_agent_v1__close_agent', 'multi_agent_v1__wait_agent']),
    });
  });

  it('{"type":"namespace","name"} → "auto" with only that namespace\'s members', () => {
    assert.deepStrictEqual(rewrite({ type: 'namespace', name: 'multi_agent_v1' }), {
      value: { toolChoice: 'auto', selectedWireNames: new Set(['multi_agent_v1__close_agent', 'multi_agent_v1__wait_agent']) },
      warnings: [createWarning('tools_filtered', 'tool_choice {"type":"namespace","name":"multi_agent_v1"} keeps 2 of 4 tools; the others are not sent')],
    });
  });

  it('allowed_tools whose refs match nothing → tool_choice and tools omitted with a warning', () => {
    const result = rewrite({ type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'gone' }] });
    assert.deepStrictEqual(result.value, { toolChoice: undefined, selectedWireNames: new Set() });
    assert.deepStrictEqual(result.warnings.map((warning) => warning.kind), ['tools_filtered', 'tool_choice_rewritten']);
  });
});

describe('rewriteToolChoice: hosted kinds', () => {
  for (const choice of [{ type: 'web_search' }, { type: 'mcp', server_label: 'docs' }, { type: 'tool_search' }, { type: 'file_search' }]) {
    it(`${JSON.stringify(choice)} → "auto" with a warning, all remaining tools`, () => {
      assert.deepStrictEqual(rewrite(choice), {
        value: { toolChoice: 'auto', selectedWireNames: ALL_WIRE_NAMES },
        warnings: [
          createWarning('tool_choice_rewritten', `tool_choice ${JSON.stringify(choice)} names a hosted tool the backend cannot run; sent "auto"`),
        ],
      });
    });
  }
});
