import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileGrammar } from '../../src/core/grammar/compile-grammar.ts';
import type { Logger } from '../../src/core/logger.ts';
import type { ExchangeStartEvent } from '../../src/core/traffic/traffic-event.ts';
import { readCapture, startTestBridge, type StartedBridge } from '../support/bridge-harness.ts';
import { assertCodexAcceptsStream } from '../support/codex-stream-oracle.ts';
import { runExchange, type CodexOutcome, type ObservedExchange } from '../support/exchange-outcome.ts';
import { findEngineKit, reportMissingEngineKit, startLlamaServer, waitFor, type RunningLlamaServer, type ToolCallFormat } from './llama-server.ts';

/**
 * Grammar enforcement against the real llama.cpp `llama-server`. The Hermes (JSON-argument) template
 * enforces a `pattern` on the escaped text, so the self-test turns enforcement on: the known call
 * comes back byte for byte, a grammar that excludes the model's choice changes the call, and the
 * prompt with the pattern in it stays in the prefix cache across turns. The Qwen3-Coder (XML) template
 * ignores every pattern, so the self-test leaves it off and no pattern is sent.
 */

const lookup = findEngineKit();
const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch';
const FIRST_REQUEST = readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json') as Record<string, unknown> & { tools: Array<Record<string, unknown>> };
const HISTORY_REQUEST = readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req2.json');
/** Every request goes out under this name, the one the start-up self-test is run for. */
const MODEL = 'tiny';
const ENGINE_GUARD_MS = 180_000;

interface LoggedBridge {
  bridge: StartedBridge;
  lines: string[];
}

async function startLoggedBridge(server: RunningLlamaServer, grammarEnforcement: 'off' | 'auto' | 'escaped'): Promise<LoggedBridge> {
  const lines: string[] = [];
  const keep = (message: string): void => {
    lines.push(message);
  };
  const logger: Logger = { error: keep, warn: keep, info: keep, debug: () => {} };
  const bridge = await startTestBridge({ backendUrl: server.backendUrl, options: { modelOverride: MODEL }, grammarEnforcement, logger });
  return { bridge, lines };
}

async function selfTestVerdict(logged: LoggedBridge): Promise<string> {
  let line: string | undefined;
  await waitFor('the grammar self-test verdict', async () => {
    line = logged.lines.find((entry) => entry.startsWith(`grammar patterns for model ${MODEL}:`));
    return line !== undefined;
  });
  return line as string;
}

function finalResponse(codex: CodexOutcome): Record<string, unknown> {
  return codex.kind === 'stream' ? (codex.terminal.response as Record<string, unknown>) : codex.body;
}

function deliveredCalls(observed: ObservedExchange): Array<Record<string, unknown>> {
  assert.equal(observed.codex.status, 200);
  if (observed.codex.kind === 'stream') assertCodexAcceptsStream(observed.codex.events, { expectedKinds: { apply_patch: 'custom_tool_call' } });
  const output = (finalResponse(observed.codex).output as Array<Record<string, unknown>> | undefined) ?? [];
  return output.filter((item) => item.type === 'custom_tool_call');
}

function sentApplyPatch(bridge: StartedBridge, observed: ObservedExchange): { strict?: boolean; parameters: { properties: { input: Record<string, unknown> } } } {
  const start = bridge.traffic.find((event): event is ExchangeStartEvent => event.type === 'exchange-start' && event.exchangeId === observed.end.exchangeId);
  const tool = start?.loweredRequest.tools?.find((entry) => entry.type === 'function' && entry.function.name === 'apply_patch');
  assert.ok(tool && tool.type === 'function');
  return tool.function as never;
}

function warningKinds(bridge: StartedBridge): string[] {
  return bridge.traffic.flatMap((event) => ('warnings' in event && Array.isArray(event.warnings) ? event.warnings.map((warning) => (warning as { kind: string }).kind) : []));
}

function usage(observed: ObservedExchange): { input: number; cached: number } {
  const value = finalResponse(observed.codex).usage as { input_tokens: number; input_tokens_details?: { cached_tokens?: number } };
  return { input: value.input_tokens, cached: value.input_tokens_details?.cached_tokens ?? 0 };
}

function exchange(bridge: StartedBridge, body: unknown): Promise<ObservedExchange> {
  return runExchange(bridge, body, {}, { guardMs: ENGINE_GUARD_MS });
}

/** apply_patch's grammar with the Add File hunk taken out: the model's own choice is no longer allowed. */
function withoutAddFile(request: typeof FIRST_REQUEST): typeof FIRST_REQUEST {
  const tools = request.tools.map((tool) => {
    if (tool.name !== 'apply_patch') return tool;
    const format = tool.format as { definition: string };
    return { ...tool, format: { ...format, definition: format.definition.replace('hunk: add_hunk | delete_hunk | update_hunk', 'hunk: delete_hunk | update_hunk') } };
  });
  return { ...request, tools };
}

if (lookup.kit === null) {
  reportMissingEngineKit('grammar enforcement on llama-server', lookup.missing);
} else {
  const kit = lookup.kit;
  const running: Array<{ close(): Promise<void> } | RunningLlamaServer> = [];
  after(async () => {
    for (const entry of running.reverse()) await ('stop' in entry ? entry.stop() : entry.close());
  });
  const start = async (format: ToolCallFormat): Promise<RunningLlamaServer> => {
    const server = await startLlamaServer(kit, { format, contextSize: 32_768 });
    running.push(server);
    return server;
  };

  describe('grammar enforcement on llama-server (hermes: JSON arguments)', { timeout: 300_000 }, () => {
    let server: RunningLlamaServer;
    let enforced: LoggedBridge;
    let plain: LoggedBridge;
    before(async () => {
      server = await start('hermes');
      enforced = await startLoggedBridge(server, 'auto');
      plain = await startLoggedBridge(server, 'off');
      running.push(enforced.bridge, plain.bridge);
    });

    it('the self-test at start-up finds the pattern enforced in the escaped-text form', async () => {
      assert.equal(await selfTestVerdict(enforced), `grammar patterns for model ${MODEL}: enforced by the engine, escaped-text form (the engine self-test passed in the escaped-text form)`);
    });

    for (const stream of [false, true]) {
      it(`${stream ? 'stream' : 'non-stream'}: a valid call is delivered unchanged, byte for byte, with the pattern sent`, async () => {
        await selfTestVerdict(enforced);
        const withPattern = await exchange(enforced.bridge, { ...FIRST_REQUEST, stream });
        const without = await exchange(plain.bridge, { ...FIRST_REQUEST, stream });
        const calls = deliveredCalls(withPattern);
        assert.equal(calls.length, 1);
        assert.equal(calls[0]?.input, PATCH);
        assert.equal(calls[0]?.input, deliveredCalls(without)[0]?.input);
        const sent = sentApplyPatch(enforced.bridge, withPattern);
        assert.equal(sent.strict, true);
        assert.match(String(sent.parameters.properties.input.pattern), /^\^\\\*\\\*\\\* Begin Patch\\\\n/);
        assert.equal(sentApplyPatch(plain.bridge, without).parameters.properties.input.pattern, undefined);
        assert.ok(warningKinds(enforced.bridge).includes('grammar_enforced'));
        assert.ok(!warningKinds(enforced.bridge).includes('grammar_pattern_violated'));
      });
    }

    it('the enforcement is real: a grammar without Add File turns the model\'s Add File into another hunk, and the call matches it', async () => {
      await selfTestVerdict(enforced);
      const observed = await exchange(enforced.bridge, { ...withoutAddFile(FIRST_REQUEST), stream: false });
      const input = String(deliveredCalls(observed)[0]?.input);
      assert.notEqual(input, PATCH);
      assert.match(input, /^\*\*\* Begin Patch\n\*\*\* (Update|Delete) File: /);
      assert.ok(!warningKinds(enforced.bridge).some((kind) => kind === 'grammar_mismatch' || kind === 'grammar_pattern_violated'), 'the changed call matches the grammar');
      const narrowed = withoutAddFile(FIRST_REQUEST).tools.find((tool) => tool.name === 'apply_patch')?.format as { syntax: string; definition: string };
      const matcher = compileGrammar({ syntax: narrowed.syntax, definition: narrowed.definition });
      assert.ok(matcher.success);
      assert.equal(matcher.matcher.match(input).status, 'match', input);
      assert.equal(matcher.matcher.match(PATCH).status, 'mismatch');
      // The same grammar unenforced: the model writes its own Add File.
      const unenforced = await exchange(plain.bridge, { ...withoutAddFile(FIRST_REQUEST), stream: false });
      assert.equal(deliveredCalls(unenforced)[0]?.input, PATCH);
    });

    it('the prefix cache stays stable across turns with the pattern in the request (≥ 95 % of the later prompts cached)', async () => {
      await selfTestVerdict(enforced);
      await exchange(enforced.bridge, { ...FIRST_REQUEST, stream: false });
      for (const body of [FIRST_REQUEST, HISTORY_REQUEST]) {
        const observed = await exchange(enforced.bridge, { ...(body as object), stream: false });
        const { input, cached } = usage(observed);
        assert.ok(cached >= 0.95 * input, `${cached} of ${input} prompt tokens cached`);
      }
    });
  });

  describe('grammar enforcement on llama-server (qwen3coder: XML arguments)', { timeout: 300_000 }, () => {
    let logged: LoggedBridge;
    let forced: LoggedBridge;
    before(async () => {
      const server = await start('qwen3coder');
      logged = await startLoggedBridge(server, 'auto');
      forced = await startLoggedBridge(server, 'escaped');
      running.push(logged.bridge, forced.bridge);
    });

    it('a pattern forced on an engine that ignores it: the call that misses the grammar gets its own warning', async () => {
      const observed = await exchange(forced.bridge, { ...withoutAddFile(FIRST_REQUEST), stream: false });
      assert.equal(deliveredCalls(observed)[0]?.input, PATCH);
      assert.equal(typeof sentApplyPatch(forced.bridge, observed).parameters.properties.input.pattern, 'string');
      assert.ok(warningKinds(forced.bridge).includes('grammar_pattern_violated'), warningKinds(forced.bridge).join(', '));
    });

    it('the self-test finds the pattern not enforced, and no pattern is sent', async () => {
      const verdict = await selfTestVerdict(logged);
      assert.match(verdict, /: checked after generation only \(the engine self-test found the pattern not enforced \(escaped-text: the engine ignored the pattern .*; value: the engine ignored the pattern/);
      const observed = await exchange(logged.bridge, { ...FIRST_REQUEST, stream: false });
      assert.equal(deliveredCalls(observed)[0]?.input, `${PATCH}`);
      const sent = sentApplyPatch(logged.bridge, observed);
      assert.equal(sent.parameters.properties.input.pattern, undefined);
      assert.equal(sent.strict, undefined);
      assert.ok(warningKinds(logged.bridge).includes('grammar_not_enforced'));
    });
  });
}
