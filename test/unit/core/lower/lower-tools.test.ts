import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveBridgeOptions } from '../../../../src/core/bridge-options.ts';
import { InvalidRequestError } from '../../../../src/core/errors.ts';
import { convertResponsesRequestToChatRequest } from '../../../../src/core/lower/convert-responses-request-to-chat-request.ts';
import { lowerTools, withoutEnginePatterns, type ToolDeclaration } from '../../../../src/core/lower/lower-tools.ts';
import { createWarningLedger } from '../../../../src/core/warnings.ts';
import { responsesToolSchema } from '../../../../src/core/responses/responses-request.ts';
import { toWireName } from '../../../../src/core/tool-map.ts';

const APPLY_PATCH_DESCRIPTION =
  'The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.';
const APPLY_PATCH_GRAMMAR = 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\nend_patch: "*** End Patch" LF?';

function declare(tool: unknown, path = 'tools[0]', source: ToolDeclaration['source'] = 'tools'): ToolDeclaration {
  return { tool: responsesToolSchema.parse(tool), source, path };
}

function bridgedParameters(wireName: string): Record<string, unknown> {
  return {
    type: 'object',
    properties: { input: { type: 'string', description: `Raw free-form input for the \`${wireName}\` tool.` } },
    required: ['input'],
    additionalProperties: false,
  };
}

const applyPatchTool = {
  type: 'custom',
  name: 'apply_patch',
  description: APPLY_PATCH_DESCRIPTION,
  format: { type: 'grammar', syntax: 'lark', definition: APPLY_PATCH_GRAMMAR },
};

const EXEC_COMMAND_PARAMETERS = {
  type: 'object',
  properties: { cmd: { type: 'string' } },
  required: ['cmd'],
  additionalProperties: false,
};

describe('lowerTools: function tools', () => {
  it('drops strict and keeps name, description and parameters', () => {
    const result = lowerTools(
      [declare({ type: 'function', name: 'exec_command', description: 'Runs a command.', strict: false, parameters: EXEC_COMMAND_PARAMETERS })],
      resolveBridgeOptions(),
    );
    assert.deepStrictEqual(result, {
      value: [
        {
          name: 'exec_command',
          namespace: null,
          kind: 'function',
          source: 'tools',
          disposition: 'lowered',
          wireName: 'exec_command',
          reason: null,
          chatTool: { type: 'function', function: { name: 'exec_command', description: 'Runs a command.', parameters: EXEC_COMMAND_PARAMETERS } },
          mapEntry: { wireName: 'exec_command', name: 'exec_command', namespace: null, kind: 'function', grammar: null },
        },
      ],
      warnings: [],
    });
  });

  it('drops null keys and defaults missing or empty parameters to an empty object schema', () => {
    const result = lowerTools(
      [
        declare({ type: 'function', name: 'get_goal', description: null, parameters: null, strict: null }),
        declare({ type: 'function', name: 'list_goals', parameters: {} }, 'tools[1]'),
      ],
      resolveBridgeOptions(),
    );
    assert.deepStrictEqual(
      result.value.map((record) => record.chatTool),
      [
        { type: 'function', function: { name: 'get_goal', parameters: { type: 'object', properties: {} } } },
        { type: 'function', function: { name: 'list_goals', parameters: { type: 'object', properties: {} } } },
      ],
    );
  });

  it('rejects defer_loading: true with a 400 naming the tool', () => {
    assert.throws(
      () => lowerTools([declare({ type: 'function', name: 'lazy', defer_loading: true }, 'tools[4]')], resolveBridgeOptions()),
      (error: unknown) =>
        InvalidRequestError.is(error) &&
        error.message === "tool 'lazy' (tools[4]) sets defer_loading: true, which has no Chat Completions equivalent" &&
        error.param === 'tools[4].defer_loading',
    );
  });
});

describe('lowerTools: custom tools with function_bridge', () => {
  it('bridges a custom tool with description and lark grammar into exactly one function', () => {
    const result = lowerTools([declare(applyPatchTool)], resolveBridgeOptions());
    assert.deepStrictEqual(result, {
      value: [
        {
          name: 'apply_patch',
          namespace: null,
          kind: 'custom',
          source: 'tools',
          disposition: 'bridged',
          wireName: 'apply_patch',
          reason: null,
          chatTool: {
            type: 'function',
            function: {
              name: 'apply_patch',
              description:
                `${APPLY_PATCH_DESCRIPTION}\n\nIn this interface the free-form text goes in the string argument \`input\`, unchanged.\n` +
                `It must match this lark grammar (the server does not enforce it):\n\`\`\`lark\n${APPLY_PATCH_GRAMMAR}\n\`\`\``,
              parameters: bridgedParameters('apply_patch'),
            },
          },
          mapEntry: {
            wireName: 'apply_patch',
            name: 'apply_patch',
            namespace: null,
            kind: 'custom',
            grammar: { syntax: 'lark', definition: APPLY_PATCH_GRAMMAR },
          },
        },
      ],
      warnings: [
        {
          warning: {
            kind: 'grammar_not_enforced',
            tool: 'apply_patch',
            callId: null,
            detail:
              "custom tool 'apply_patch' declares a lark grammar: checked after generation, not enforced by the engine (grammar enforcement is off)",
          },
          once: { key: 'grammar_not_enforced:apply_patch', fingerprint: `lark\n${APPLY_PATCH_GRAMMAR}\ngrammar enforcement is off` },
        },
      ],
    });
  });

  it('does not add a second newline before the closing fence when the grammar ends with one', () => {
    const result = lowerTools(
      [declare({ type: 'custom', name: 'exec', description: 'Run code.', format: { type: 'grammar', syntax: 'lark', definition: '\nstart: SOURCE\n' } })],
      resolveBridgeOptions(),
    );
    const chatTool = result.value[0]?.chatTool;
    assert.equal(chatTool?.type, 'function');
    assert.ok(chatTool?.type === 'function' && chatTool.function.description?.endsWith('```lark\n\nstart: SOURCE\n```'));
  });

  it('synthesises a description when it is missing and warns once per tool name', () => {
    const result = lowerTools([declare({ type: 'custom', name: 'scratchpad' })], resolveBridgeOptions());
    assert.deepStrictEqual(result.value[0]?.chatTool, {
      type: 'function',
      function: {
        name: 'scratchpad',
        description:
          'Free-form tool `scratchpad`. Put the complete raw text in the `input` argument.\n\nIn this interface the free-form text goes in the string argument `input`, unchanged.',
        parameters: bridgedParameters('scratchpad'),
      },
    });
    assert.deepStrictEqual(result.warnings, [
      {
        warning: {
          kind: 'custom_description_missing',
          tool: 'scratchpad',
          callId: null,
          detail: "custom tool 'scratchpad' has no description; the bridge sent a generic one",
        },
        once: { key: 'custom_description_missing:scratchpad', fingerprint: '' },
      },
    ]);
  });

  for (const [label, format] of [
    ['absent', undefined],
    ['{}', {}],
    ['{"type":"text"}', { type: 'text' }],
  ] as const) {
    it(`adds no grammar block and no grammar warning when format is ${label}`, () => {
      const result = lowerTools([declare({ type: 'custom', name: 'notes', description: 'Take notes.', format })], resolveBridgeOptions());
      assert.deepStrictEqual(result.value[0]?.chatTool, {
        type: 'function',
        function: {
          name: 'notes',
          description: 'Take notes.\n\nIn this interface the free-form text goes in the string argument `input`, unchanged.',
          parameters: bridgedParameters('notes'),
        },
      });
      assert.equal(result.value[0]?.mapEntry?.grammar, null);
      assert.deepStrictEqual(result.warnings, []);
    });
  }

  it('ignores an unknown format type with a warning', () => {
    const result = lowerTools(
      [declare({ type: 'custom', name: 'notes', description: 'Take notes.', format: { type: 'regex_v2', pattern: 'x+' } })],
      resolveBridgeOptions(),
    );
    assert.deepStrictEqual(result.value[0]?.chatTool, {
      type: 'function',
      function: {
        name: 'notes',
        description: 'Take notes.\n\nIn this interface the free-form text goes in the string argument `input`, unchanged.',
        parameters: bridgedParameters('notes'),
      },
    });
    assert.deepStrictEqual(result.warnings, [
      {
        warning: { kind: 'unknown_format_type', tool: 'notes', callId: null, detail: "custom tool 'notes' declares format type 'regex_v2'; the bridge ignores it" },
        once: { key: 'unknown_format_type:notes', fingerprint: 'regex_v2' },
      },
    ]);
  });

  it('fences a regex grammar with its syntax tag', () => {
    const result = lowerTools(
      [declare({ type: 'custom', name: 'date', description: 'A date.', format: { type: 'grammar', syntax: 'regex', definition: '\\d{4}-\\d{2}-\\d{2}' } })],
      resolveBridgeOptions(),
    );
    const chatTool = result.value[0]?.chatTool;
    assert.ok(chatTool?.type === 'function');
    assert.equal(
      chatTool.function.description,
      'A date.\n\nIn this interface the free-form text goes in the string argument `input`, unchanged.\n' +
        'It must match this regex grammar (the server does not enforce it):\n```regex\n\\d{4}-\\d{2}-\\d{2}\n```',
    );
  });
});

describe('lowerTools: grammar enforcement by the engine', () => {
  const enforced = (strict: boolean) =>
    resolveBridgeOptions({ grammarEnforcement: { enforced: true, form: 'escaped-text', strict, reason: 'the engine self-test passed' } });
  const patchTool = { ...applyPatchTool, format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** End Patch" LF?\n%import common.LF\n' } };

  it('puts the pattern on `input`, says so in the description and tells the terminal why', () => {
    const result = lowerTools([declare(patchTool)], enforced(false));
    const chatTool = result.value[0]?.chatTool;
    assert.ok(chatTool?.type === 'function');
    assert.deepStrictEqual(chatTool.function.parameters, {
      type: 'object',
      properties: {
        input: { type: 'string', description: 'Raw free-form input for the `apply_patch` tool.', pattern: String.raw`^\*\*\* End Patch(\\n)?$` },
      },
      required: ['input'],
      additionalProperties: false,
    });
    assert.equal(chatTool.function.strict, undefined);
    assert.match(chatTool.function.description ?? '', /\(the server enforces it\)/);
    assert.equal(result.value[0]?.mapEntry?.enforcedPattern, true);
    assert.deepStrictEqual(
      result.warnings.map((pending) => [pending.warning.kind, pending.warning.detail]),
      [['grammar_enforced', "custom tool 'apply_patch': grammar enforced by the engine (the engine self-test passed)"]],
    );
  });

  it('marks the function strict where the engine constrains only strict tools', () => {
    const chatTool = lowerTools([declare(patchTool)], enforced(true)).value[0]?.chatTool;
    assert.ok(chatTool?.type === 'function');
    assert.equal(chatTool.function.strict, true);
  });

  it('withoutEnginePatterns gives byte for byte the request lowered with enforcement refused, and leaves the sent one as it was', () => {
    const dateTool = { type: 'custom', name: 'date', description: 'A date.', format: { type: 'grammar', syntax: 'regex', definition: '\\d{4}' } };
    const functionTool = { type: 'function', name: 'read', description: 'Reads.', parameters: { type: 'object', properties: { input: { type: 'string', pattern: 'x+' } } } };
    const body = { model: 'm', input: 'hi', tools: [patchTool, dateTool, functionTool] };
    const refused = resolveBridgeOptions({ grammarEnforcement: { enforced: false, reason: 'the engine refused the pattern: no' } });
    const plain = JSON.stringify(convertResponsesRequestToChatRequest(body, refused, createWarningLedger()).chatRequest);
    for (const strict of [false, true]) {
      const { chatRequest: sent, toolMap } = convertResponsesRequestToChatRequest(body, enforced(strict), createWarningLedger());
      const before = JSON.stringify(sent);
      assert.match(before, /"pattern":"\^/);
      assert.equal(JSON.stringify(withoutEnginePatterns(sent, toolMap)), plain, `strict: ${strict}`);
      assert.equal(JSON.stringify(sent), before, 'the request that was sent is not changed');
    }
  });

  it('a grammar that cannot be written as a pattern is checked after generation, and the reason says why', () => {
    const result = lowerTools([declare({ type: 'custom', name: 'date', format: { type: 'grammar', syntax: 'regex', definition: '\\d{4}' } })], enforced(true));
    const chatTool = result.value[0]?.chatTool;
    assert.ok(chatTool?.type === 'function');
    assert.equal(chatTool.function.strict, undefined);
    assert.deepStrictEqual(chatTool.function.parameters, bridgedParameters('date'));
    const notEnforced = result.warnings.find((pending) => pending.warning.kind === 'grammar_not_enforced');
    assert.match(notEnforced?.warning.detail ?? '', /checked after generation, not enforced by the engine \(its grammar cannot be sent as a pattern: .*\\d, \\w or \\s/);
  });
});

describe('lowerTools: namespaces', () => {
  it('flattens members with the joined wire name, keeps each member kind and skips nameless members', () => {
    const result = lowerTools(
      [
        declare(
          {
            type: 'namespace',
            name: 'functions',
            description: 'dropped',
            tools: [
              { type: 'custom', name: 'exec', description: 'Run JavaScript.', format: { type: 'grammar', syntax: 'lark', definition: 'start: SOURCE' } },
              { type: 'function', name: 'wait', strict: false, parameters: { type: 'object', properties: { ms: { type: 'number' } } } },
              { type: 'function', description: 'no name' },
            ],
          },
          'input[0].tools[0]',
          'additional_tools',
        ),
      ],
      resolveBridgeOptions(),
    );
    assert.deepStrictEqual(
      result.value.map(({ name, namespace, kind, source, disposition, wireName, reason, mapEntry }) => ({
        name,
        namespace,
        kind,
        source,
        disposition,
        wireName,
        reason,
        mapEntry,
      })),
      [
        {
          name: 'exec',
          namespace: 'functions',
          kind: 'custom',
          source: 'additional_tools',
          disposition: 'bridged',
          wireName: 'functions__exec',
          reason: null,
          mapEntry: { wireName: 'functions__exec', name: 'exec', namespace: 'functions', kind: 'custom', grammar: { syntax: 'lark', definition: 'start: SOURCE' } },
        },
        {
          name: 'wait',
          namespace: 'functions',
          kind: 'function',
          source: 'additional_tools',
          disposition: 'lowered',
          wireName: 'functions__wait',
          reason: null,
          mapEntry: { wireName: 'functions__wait', name: 'wait', namespace: 'functions', kind: 'function', grammar: null },
        },
        {
          name: '',
          namespace: 'functions',
          kind: 'function',
          source: 'additional_tools',
          disposition: 'dropped',
          wireName: null,
          reason: 'namespace member without a name',
          mapEntry: null,
        },
      ],
    );
    assert.deepStrictEqual(result.value[1]?.chatTool, {
      type: 'function',
      function: { name: 'functions__wait', parameters: { type: 'object', properties: { ms: { type: 'number' } } } },
    });
    const exec = result.value[0]?.chatTool;
    assert.ok(exec?.type === 'function');
    assert.deepStrictEqual(exec.function.parameters, bridgedParameters('functions__exec'));
    assert.deepStrictEqual(result.warnings.map((pending) => [pending.warning.kind, pending.warning.tool, pending.once?.key]), [
      ['grammar_not_enforced', 'exec', 'grammar_not_enforced:functions__exec'],
    ]);
  });

  it('shortens wire names longer than 64 characters deterministically and warns once', () => {
    const namespace = 'mcp__a_very_long_server_name_for_testing';
    const name = 'a_tool_with_an_equally_long_name';
    const result = lowerTools([declare({ type: 'namespace', name: namespace, tools: [{ type: 'function', name }] })], resolveBridgeOptions());
    const wireName = toWireName(namespace, name);
    assert.equal(wireName.length, 64);
    assert.equal(result.value[0]?.wireName, wireName);
    assert.deepStrictEqual(result.value[0]?.mapEntry, { wireName, name, namespace, kind: 'function', grammar: null });
    assert.deepStrictEqual(result.warnings.map((pending) => [pending.warning.kind, pending.once?.key]), [
      ['tool_name_shortened', `tool_name_shortened:${wireName}`],
    ]);
  });
});

describe('lowerTools: hosted tools', () => {
  it('drops web_search and tool_search with one once-per-kind warning each', () => {
    const result = lowerTools(
      [
        declare({ type: 'tool_search', execution: 'client', description: 'search', parameters: { type: 'object', properties: {} } }),
        declare({ type: 'web_search', external_web_access: false }, 'tools[1]'),
      ],
      resolveBridgeOptions(),
    );
    assert.deepStrictEqual(result, {
      value: [
        {
          name: 'tool_search',
          namespace: null,
          kind: 'tool_search',
          source: 'tools',
          disposition: 'dropped',
          wireName: null,
          reason: "client tool search is not lowered: Codex declares it only for a model whose catalog entry sets supports_search_tool (every built-in OpenAI model name does) and then hides every MCP tool behind it, so the model sees no MCP tool; use the bridge's profile or catalog (freeform-bridge codex-config, or Write Codex Config in VS Code), whose model entry leaves supports_search_tool unset",
          chatTool: null,
          mapEntry: null,
        },
        {
          name: 'web_search',
          namespace: null,
          kind: 'web_search',
          source: 'tools',
          disposition: 'dropped',
          wireName: null,
          reason: "hosted tool kind 'web_search' cannot run on a Chat Completions backend",
          chatTool: null,
          mapEntry: null,
        },
      ],
      warnings: [
        {
          warning: {
            kind: 'hosted_tool_dropped',
            tool: 'tool_search',
            callId: null,
            detail: "client tool search is not lowered: Codex declares it only for a model whose catalog entry sets supports_search_tool (every built-in OpenAI model name does) and then hides every MCP tool behind it, so the model sees no MCP tool; use the bridge's profile or catalog (freeform-bridge codex-config, or Write Codex Config in VS Code), whose model entry leaves supports_search_tool unset; 'tool_search' tools are dropped (shown once per process)",
          },
          once: { key: 'hosted_tool_dropped:tool_search', fingerprint: '' },
        },
        {
          warning: {
            kind: 'hosted_tool_dropped',
            tool: 'web_search',
            callId: null,
            detail: "hosted tool kind 'web_search' cannot run on a Chat Completions backend; 'web_search' tools are dropped (shown once per process)",
          },
          once: { key: 'hosted_tool_dropped:web_search', fingerprint: '' },
        },
      ],
    });
  });

  it('never forwards a hosted kind as a function, even a built-in one named like a tool', () => {
    const result = lowerTools([declare({ type: 'apply_patch' }), declare({ type: 'mcp', server_label: 'docs' }, 'tools[1]')], resolveBridgeOptions());
    assert.deepStrictEqual(
      result.value.map((record) => [record.name, record.kind, record.disposition, record.chatTool]),
      [
        ['apply_patch', 'apply_patch', 'dropped', null],
        ['docs', 'mcp', 'dropped', null],
      ],
    );
  });
});

describe('lowerTools: name collisions', () => {
  const isCollision = (message: string) => (error: unknown) =>
    InvalidRequestError.is(error) && error.code === 'tool_name_collision' && error.param === 'tools' && error.message === message;

  it('rejects a function and a custom tool with the same name with the exact message', () => {
    assert.throws(
      () => lowerTools([declare({ type: 'function', name: 'apply_patch' }), declare(applyPatchTool, 'tools[1]')], resolveBridgeOptions()),
      isCollision(
        "tool name 'apply_patch' is declared both as a function tool and as a custom tool; the function bridge cannot tell their calls apart",
      ),
    );
  });

  it('de-duplicates identical declarations (top level and carrier) silently', () => {
    const result = lowerTools(
      [declare(applyPatchTool), declare(applyPatchTool, 'input[0].tools[0]', 'additional_tools')],
      resolveBridgeOptions(),
    );
    assert.equal(result.value.filter((record) => record.chatTool !== null).length, 1);
    assert.deepStrictEqual(
      result.value.map((record) => [record.source, record.disposition, record.reason]),
      [
        ['tools', 'bridged', null],
        ['additional_tools', 'dropped', 'duplicate of an identical declaration'],
      ],
    );
    assert.deepStrictEqual(result.warnings.map((pending) => pending.warning.kind), ['grammar_not_enforced']);
  });

  it('rejects the same name declared twice with different definitions', () => {
    assert.throws(
      () =>
        lowerTools(
          [declare({ type: 'function', name: 'wait', description: 'a' }), declare({ type: 'function', name: 'wait', description: 'b' }, 'tools[1]')],
          resolveBridgeOptions(),
        ),
      isCollision("tool name 'wait' is declared twice with different definitions; the function bridge cannot tell their calls apart"),
    );
  });

  it('rejects a flattened name that equals an existing flat name', () => {
    assert.throws(
      () =>
        lowerTools(
          [declare({ type: 'function', name: 'a__b' }), declare({ type: 'namespace', name: 'a', tools: [{ type: 'function', name: 'b' }] }, 'tools[1]')],
          resolveBridgeOptions(),
        ),
      isCollision("tool name 'a__b' is declared both as 'a__b' and as 'a.b'; the function bridge cannot tell their calls apart"),
    );
  });
});

describe('lowerTools: strategies', () => {
  it('passthrough forwards custom tools in the Chat-native custom form', () => {
    const result = lowerTools([declare(applyPatchTool)], resolveBridgeOptions({ strategy: 'passthrough' }));
    assert.deepStrictEqual(result, {
      value: [
        {
          name: 'apply_patch',
          namespace: null,
          kind: 'custom',
          source: 'tools',
          disposition: 'passthrough',
          wireName: 'apply_patch',
          reason: null,
          chatTool: {
            type: 'custom',
            custom: { name: 'apply_patch', description: APPLY_PATCH_DESCRIPTION, format: { type: 'grammar', syntax: 'lark', definition: APPLY_PATCH_GRAMMAR } },
          },
          mapEntry: { wireName: 'apply_patch', name: 'apply_patch', namespace: null, kind: 'custom', grammar: { syntax: 'lark', definition: APPLY_PATCH_GRAMMAR } },
        },
      ],
      warnings: [],
    });
  });

  it('dropCustomTools drops custom tools (also inside namespaces) with a once-per-tool warning', () => {
    const result = lowerTools(
      [
        declare(applyPatchTool),
        declare({ type: 'namespace', name: 'functions', tools: [{ type: 'custom', name: 'exec' }, { type: 'function', name: 'wait' }] }, 'tools[1]'),
      ],
      resolveBridgeOptions({ dropCustomTools: true }),
    );
    assert.deepStrictEqual(
      result.value.map((record) => [record.wireName, record.kind, record.disposition, record.reason]),
      [
        [null, 'custom', 'dropped', 'dropCustomTools is on'],
        [null, 'custom', 'dropped', 'dropCustomTools is on'],
        ['functions__wait', 'function', 'lowered', null],
      ],
    );
    assert.deepStrictEqual(result.warnings, [
      {
        warning: { kind: 'custom_tool_dropped', tool: 'apply_patch', callId: null, detail: "custom tool 'apply_patch' was dropped because dropCustomTools is on" },
        once: { key: 'custom_tool_dropped:apply_patch', fingerprint: '' },
      },
      {
        warning: { kind: 'custom_tool_dropped', tool: 'exec', callId: null, detail: "custom tool 'functions.exec' was dropped because dropCustomTools is on" },
        once: { key: 'custom_tool_dropped:functions__exec', fingerprint: '' },
      },
    ]);
  });
});
