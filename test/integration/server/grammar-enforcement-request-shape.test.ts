import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readCapture, startTestBridge } from '../../support/bridge-harness.ts';
import { runExchange } from '../../support/exchange-outcome.ts';
import { startMockBackend, type EngineProfile } from '../../../mock-backend/create-mock-backend.ts';

/*
 * The request shape vLLM and SGLang constrain, sent to their mock profiles (which validate requests as
 * those engines do): the lowered `apply_patch` function carries `"strict": true` beside `name` and
 * `parameters` (vLLM's and SGLang's `Function` models both have the field; vLLM constrains `auto` tool
 * calls only when a tool is strict, docs/features/tool_calling.md, with VLLM_ENFORCE_STRICT_TOOL_CALLING
 * on by default in vllm/envs.py; SGLang builds its structural tag for strict tools unless
 * SGLANG_TOOL_STRICT_LEVEL says otherwise, docs/references/environment_variables.md), and the grammar
 * as the JSON-Schema `pattern` of the `input` string, in the form that engine's parser matches.
 */

const REQUEST = { ...(readCapture('b_freeform_apply_patch_gpt-5.5_v0.171.req1.json') as Record<string, unknown>), stream: false };

const CASES: Array<{ profile: EngineProfile; setting: 'escaped' | 'value'; newline: RegExp }> = [
  // JSON arguments matched as escaped text: a newline is `\\n` in the pattern.
  { profile: 'vllm-hermes', setting: 'escaped', newline: /Begin Patch\\\\n/ },
  // qwen3_coder's XML parameters are matched as the decoded value.
  { profile: 'vllm-qwen3coder', setting: 'value', newline: /Begin Patch\\x0a/ },
  { profile: 'sglang', setting: 'escaped', newline: /Begin Patch\\\\n/ },
];

describe('grammar enforcement: the request shape vLLM and SGLang read', () => {
  for (const { profile, setting, newline } of CASES) {
    it(`${profile}, ${setting} form: accepted, with strict on the function and the pattern on input`, async () => {
      const backend = await startMockBackend({ profile });
      const bridge = await startTestBridge({ backendUrl: backend.url, grammarEnforcement: setting, keepaliveSeconds: 0 });
      try {
        const observed = await runExchange(bridge, REQUEST);
        assert.equal(observed.codex.status, 200);
        const sent = backend.requests.find((request) => request.path === '/v1/chat/completions');
        assert.equal(sent?.validationError ?? null, null);
        const tools = (sent?.body as { tools: Array<{ type: string; function: Record<string, unknown> }> }).tools;
        const patch = tools.find((tool) => tool.function.name === 'apply_patch');
        assert.ok(patch);
        assert.equal(patch.type, 'function');
        assert.equal(patch.function.strict, true);
        const input = (patch.function.parameters as { properties: { input: { type: string; pattern: string } } }).properties.input;
        assert.equal(input.type, 'string');
        assert.match(input.pattern, /^\^.*\$$/s);
        assert.match(input.pattern, newline);
        // Only the bridged free-form tool is constrained; Codex's own function tools go as declared.
        assert.ok(tools.filter((tool) => tool.function.name !== 'apply_patch').every((tool) => tool.function.strict === undefined));
      } finally {
        await bridge.close();
        await backend.close();
      }
    });
  }
});

describe('grammar enforcement: a grammar whose repetition an engine cannot afford', () => {
  for (const definition of ['(a{0,1000}){0,1000}', '((a?){1000}){1000}', '(a*)*']) {
    it(`${definition}: no pattern reaches the engine, and a warning names the tool`, async () => {
      const backend = await startMockBackend({ profile: 'vllm-hermes' });
      const bridge = await startTestBridge({ backendUrl: backend.url, grammarEnforcement: 'escaped', keepaliveSeconds: 0 });
      try {
        const tool = { type: 'custom', name: 'repeat_tool', description: 'hostile grammar', format: { type: 'grammar', syntax: 'regex', definition } };
        const observed = await runExchange(bridge, { model: 'm', input: 'hi', stream: false, tools: [tool] });
        assert.equal(observed.codex.status, 200);
        const sent = backend.requests.find((request) => request.path === '/v1/chat/completions');
        const tools = (sent?.body as { tools: Array<{ function: { name: string; strict?: boolean; parameters: unknown } }> }).tools;
        const lowered = tools.find((entry) => entry.function.name === 'repeat_tool');
        assert.ok(lowered);
        assert.doesNotMatch(JSON.stringify(lowered), /"pattern"/);
        assert.equal(lowered.function.strict, undefined);
        const warning = observed.end.warnings.find((entry) => entry.kind === 'grammar_not_enforced');
        assert.equal(warning?.tool, 'repeat_tool');
        assert.match(warning?.detail ?? '', /^custom tool 'repeat_tool' declares a regex grammar: checked after generation, not enforced by the engine \(its grammar cannot be sent as a pattern: the pattern (nests counted repeats|repeats something that can match nothing)/);
      } finally {
        await bridge.close();
        await backend.close();
      }
    });
  }
});
