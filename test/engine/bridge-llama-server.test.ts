import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { classifyEngineRefusal } from '../../src/core/engine-error.ts';
import { mapFailureToHttp } from '../../src/server/failure-map.ts';
import type { ExchangeStartEvent } from '../../src/core/traffic/traffic-event.ts';
import { postResponses, readCapture, readSseEvents, startTestBridge, type StartedBridge } from '../support/bridge-harness.ts';
import { assertCodexAcceptsStream } from '../support/codex-stream-oracle.ts';
import { jsonError, runExchange, type CodexOutcome, type ObservedExchange } from '../support/exchange-outcome.ts';
import { findEngineKit, reportMissingEngineKit, readSlots, startLlamaServer, TOOL_CALL_FORMATS, waitFor, type RunningLlamaServer } from './llama-server.ts';

/**
 * The bridge against the real llama.cpp `llama-server`, both tool-call formats: Hermes JSON (the model
 * writes the arguments) and Qwen3-Coder XML (the server builds them). The crafted models answer any
 * request that offers `apply_patch` with one call adding hello.txt, and "Done." once a tool result is
 * in the context, so every answer below is known exactly.
 */

const lookup = findEngineKit();
const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch';

/** Codex 0.171's first request of a freeform-surface turn and the one after the patch was applied. */
const FIRST_REQUEST = readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json');
const HISTORY_REQUEST = readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req2.json');

type OutputItem = Record<string, unknown> & { type: string };

/** A hang guard, not a speed check: six Codex-sized prefills on two busy cores take a while. */
const ENGINE_GUARD_MS = 180_000;

function exchange(bridge: StartedBridge, body: unknown): Promise<ObservedExchange> {
  return runExchange(bridge, body, {}, { guardMs: ENGINE_GUARD_MS });
}

/** The output Codex ends up with, from a stream's terminal event or a JSON body. */
function finalResponse(codex: CodexOutcome): Record<string, unknown> {
  if (codex.kind === 'stream') return codex.terminal.response as Record<string, unknown>;
  return codex.body;
}

function outputItems(codex: CodexOutcome): OutputItem[] {
  return (finalResponse(codex).output as OutputItem[] | undefined) ?? [];
}

function outputText(codex: CodexOutcome): string {
  return outputItems(codex)
    .filter((item) => item.type === 'message')
    .flatMap((item) => item.content as Array<{ type: string; text?: string }>)
    .map((part) => part.text ?? '')
    .join('');
}

function sentRequest(bridge: StartedBridge, observed: ObservedExchange): ExchangeStartEvent {
  const start = bridge.traffic.find((event): event is ExchangeStartEvent => event.type === 'exchange-start' && event.exchangeId === observed.end.exchangeId);
  if (!start) throw new Error(`no exchange-start for ${observed.end.exchangeId}`);
  return start;
}

function describeObserved(observed: ObservedExchange): string {
  return JSON.stringify({ codex: observed.codex.kind === 'json' ? observed.codex.body : finalResponse(observed.codex), end: observed.end }).slice(0, 3_000);
}

/** A long prompt of distinct words: nothing of it is in the server's prefix cache. */
function freshWords(count: number, seed: string): string {
  return Array.from({ length: count }, (_, index) => `${seed}${index.toString(36)}`).join(' ');
}

function assertDeliveredPatch(observed: ObservedExchange): string {
  const { codex } = observed;
  assert.equal(codex.status, 200, describeObserved(observed));
  if (codex.kind === 'stream') assertCodexAcceptsStream(codex.events, { expectedKinds: { apply_patch: 'custom_tool_call' } });
  assert.equal(finalResponse(codex).status, 'completed', describeObserved(observed));
  const calls = outputItems(codex).filter((item) => item.type === 'custom_tool_call');
  assert.equal(calls.length, 1, describeObserved(observed));
  assert.equal(calls[0]?.name, 'apply_patch');
  assert.equal(calls[0]?.input, PATCH);
  assert.equal(outputItems(codex).filter((item) => item.type === 'function_call').length, 0);
  assert.equal(observed.end.outcome, 'completed');
  return String(calls[0]?.call_id);
}

if (lookup.kit === null) {
  reportMissingEngineKit('the bridge against a real llama-server', lookup.missing);
} else {
  const kit = lookup.kit;
  for (const format of TOOL_CALL_FORMATS) {
    describe(`the bridge against a real llama-server (${format})`, { timeout: 240_000 }, () => {
      let server: RunningLlamaServer;
      let bridge: StartedBridge;
      let passthroughBridge: StartedBridge;

      before(async () => {
        // The slots share one KV cache: six concurrent Codex-sized prompts (about 5100 tokens each) need
        // 32768; with less, the server fails some of them with "Context size has been exceeded".
        server = await startLlamaServer(kit, { format, contextSize: 32_768 });
        bridge = await startTestBridge({ backendUrl: server.backendUrl });
        passthroughBridge = await startTestBridge({ backendUrl: server.backendUrl, options: { strategy: 'passthrough' } });
      });
      after(async () => {
        await bridge?.close();
        await passthroughBridge?.close();
        await server?.stop();
      });

      for (const stream of [true, false]) {
        const mode = stream ? 'stream' : 'non-stream';

        it(`${mode}: tool_choice "auto" (what Codex sends): the lowered apply_patch call comes back as one custom_tool_call`, async () => {
          const observed = await exchange(bridge, { ...FIRST_REQUEST, stream });
          assertDeliveredPatch(observed);
          const sent = sentRequest(bridge, observed).loweredRequest;
          const lowered = sent.tools?.find((tool) => tool.type === 'function' && tool.function.name === 'apply_patch');
          assert.ok(lowered && lowered.type === 'function', 'apply_patch was not lowered to a function');
          assert.deepEqual(Object.keys((lowered.function.parameters as { properties: Record<string, unknown> }).properties), ['input']);
          assert.equal(sent.tool_choice, 'auto');
          assert.ok(!sent.tools?.some((tool) => tool.type !== 'function'), 'a non-function tool reached the engine');
        });

        const forms: Array<{ title: string; toolChoice: unknown; sent: unknown }> = [
          { title: '"required"', toolChoice: 'required', sent: 'required' },
          { title: 'named custom apply_patch', toolChoice: { type: 'custom', name: 'apply_patch' }, sent: { type: 'function', function: { name: 'apply_patch' } } },
          // The server only logs a named choice and treats it as "auto": the model still picks apply_patch.
          { title: 'named function view_image (the engine treats it as "auto")', toolChoice: { type: 'function', name: 'view_image' }, sent: { type: 'function', function: { name: 'view_image' } } },
          {
            title: 'allowed_tools, mode auto',
            toolChoice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'custom', name: 'apply_patch' }, { type: 'function', name: 'exec_command' }] },
            sent: 'auto',
          },
          {
            title: 'allowed_tools, mode required, one tool',
            toolChoice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'custom', name: 'apply_patch' }] },
            sent: { type: 'function', function: { name: 'apply_patch' } },
          },
        ];
        for (const form of forms) {
          it(`${mode}: tool_choice ${form.title}: sent upstream as ${JSON.stringify(form.sent)}, the call is delivered`, async () => {
            const observed = await exchange(bridge, { ...FIRST_REQUEST, stream, tool_choice: form.toolChoice });
            assertDeliveredPatch(observed);
            assert.deepEqual(sentRequest(bridge, observed).loweredRequest.tool_choice, form.sent);
          });
        }

        it(`${mode}: tool_choice "none": the engine parses no call, so none is delivered (the model's text is)`, async () => {
          const observed = await exchange(bridge, { ...FIRST_REQUEST, stream, tool_choice: 'none' });
          assert.equal(observed.codex.status, 200, describeObserved(observed));
          if (observed.codex.kind === 'stream') assertCodexAcceptsStream(observed.codex.events);
          assert.equal(sentRequest(bridge, observed).loweredRequest.tool_choice, 'none');
          assert.deepEqual(
            outputItems(observed.codex).map((item) => item.type),
            ['message'],
          );
          // What the model writes instead is its own business (the crafted models write tool-call markup).
          assert.notEqual(outputText(observed.codex), '');
        });

        it(`${mode}: the history round trip (custom_tool_call and its output replayed) ends in "Done."`, async () => {
          const observed = await exchange(bridge, { ...HISTORY_REQUEST, stream });
          assert.equal(observed.codex.status, 200, describeObserved(observed));
          if (observed.codex.kind === 'stream') assertCodexAcceptsStream(observed.codex.events);
          assert.equal(outputText(observed.codex), 'Done.');
          assert.deepEqual(
            outputItems(observed.codex).map((item) => item.type),
            ['message'],
          );
          const messages = sentRequest(bridge, observed).loweredRequest.messages;
          const assistant = messages.find((message) => message.role === 'assistant' && Array.isArray(message.tool_calls));
          assert.ok(assistant && assistant.role === 'assistant' && assistant.tool_calls, 'the call was not replayed as an assistant tool call');
          const replayed = assistant.tool_calls[0]!;
          assert.equal(replayed.function.name, 'apply_patch');
          assert.equal(typeof (JSON.parse(replayed.function.arguments) as { input: unknown }).input, 'string');
          const toolMessage = messages.find((message) => message.role === 'tool');
          assert.ok(toolMessage && toolMessage.role === 'tool');
          assert.equal(toolMessage.tool_call_id, replayed.id);
        });

        it(`${mode}: a small max_output_tokens truncates the call: response incomplete, the call not delivered`, async () => {
          const observed = await exchange(bridge, { ...FIRST_REQUEST, stream, max_output_tokens: 12 });
          assert.equal(observed.codex.status, 200, describeObserved(observed));
          if (observed.codex.kind === 'stream') assertCodexAcceptsStream(observed.codex.events, { expectedTerminal: 'response.incomplete' });
          const response = finalResponse(observed.codex);
          assert.equal(response.status, 'incomplete', describeObserved(observed));
          assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
          assert.equal(outputItems(observed.codex).filter((item) => item.type === 'custom_tool_call' || item.type === 'function_call').length, 0);
          assert.equal(observed.end.outcome, 'incomplete');
          assert.equal(sentRequest(bridge, observed).loweredRequest.max_tokens, 12);
        });

        it(`${mode}: a custom tool reaching the engine (passthrough) is its 500, answered as a 400 Codex shows instead of retrying`, async () => {
          const observed = await exchange(passthroughBridge, { ...FIRST_REQUEST, stream });
          const error = jsonError(observed.codex);
          assert.equal(error.status, 400, describeObserved(observed));
          assert.equal(error.code, 'backend_rejected_request');
          assert.match(error.message, /HTTP 500 .*Failed to parse tools: Unsupported tool type/);
          assert.match(error.message, /hint: .*function_bridge/);
          assert.equal(observed.end.outcome, 'failed');
        });

        it(`${mode}: a prompt over the context is the engine's 400 exceed_context_size_error, answered as context_length_exceeded`, async () => {
          const body = { ...FIRST_REQUEST, stream, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: freshWords(12_000, `ctx${format}${mode}`) }] }] };
          const observed = await exchange(bridge, body);
          const error = jsonError(observed.codex);
          assert.equal(error.status, 400, describeObserved(observed));
          assert.equal(error.code, 'context_length_exceeded');
          assert.match(error.message, /request \(\d+ tokens\) exceeds the available context size \(32768 tokens\)/);
        });
      }

      it('an unknown tool_choice string never reaches the engine: rewritten to "auto" with a warning', async () => {
        const observed = await exchange(bridge, { ...FIRST_REQUEST, tool_choice: 'banana' });
        assertDeliveredPatch(observed);
        assert.equal(sentRequest(bridge, observed).loweredRequest.tool_choice, 'auto');
        assert.ok(observed.end.warnings.some((warning) => warning.kind === 'tool_choice_rewritten'), JSON.stringify(observed.end.warnings));
      });

      it("the engine's own 400 for a bad tool_choice maps to a 400 that carries its message", async () => {
        const response = await fetch(`${server.backendUrl}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], tools: [], tool_choice: 'banana' }),
        });
        const text = await response.text();
        assert.equal(response.status, 400, text);
        const mapped = mapFailureToHttp({ kind: 'engine-refusal', refusal: classifyEngineRefusal(response.status, text, { backendUrl: server.backendUrl, model: 'm', retryAfter: null }) });
        assert.equal(mapped.status, 400);
        assert.equal(mapped.body.error.code, 'backend_rejected_request');
        assert.match(mapped.body.error.message, /Invalid tool_choice: banana/);
      });

      it('a request without tools (tools: []) sends neither tools nor tool_choice, and the answer is text', async () => {
        const observed = await exchange(bridge, { ...FIRST_REQUEST, tools: [], tool_choice: 'auto' });
        assert.equal(observed.codex.status, 200, describeObserved(observed));
        const sent = sentRequest(bridge, observed).loweredRequest;
        assert.equal(sent.tools, undefined);
        assert.equal(sent.tool_choice, undefined);
        assert.deepEqual(
          outputItems(observed.codex).map((item) => item.type),
          ['message'],
        );
      });

      it('six concurrent streams each deliver their own complete call', async () => {
        const observed = await Promise.all(Array.from({ length: 6 }, () => exchange(bridge, { ...FIRST_REQUEST, stream: true })));
        const callIds = observed.map((exchange) => assertDeliveredPatch(exchange));
        assert.equal(new Set(callIds).size, 6, `call ids repeat: ${callIds.join(', ')}`);
      });
    });
  }

  describe('llama-server while it loads its model, and after a client abort', { timeout: 300_000 }, () => {
    const servers: RunningLlamaServer[] = [];
    const bridges: StartedBridge[] = [];
    after(async () => {
      for (const bridge of bridges) await bridge.close();
      for (const server of servers) await server.stop();
    });

    for (const format of TOOL_CALL_FORMATS) {
      it(`${format}: the 503 "Loading model" of the first moments is a 503 Codex retries, and the retry is answered`, async () => {
        const server = await startLlamaServer(kit, { format, waitUntilReady: false });
        servers.push(server);
        const bridge = await startTestBridge({ backendUrl: server.backendUrl });
        bridges.push(bridge);
        // Poll through the bridge from the moment the process exists: refused connections first, then the
        // engine's 503 while it loads, then 200. The model loads in about a second; a poll takes milliseconds.
        const loadingAnswers: Array<ReturnType<typeof jsonError>> = [];
        let delivered: ObservedExchange | null = null;
        await waitFor(
          'the loaded model',
          async () => {
            const observed = await exchange(bridge, { ...FIRST_REQUEST, stream: true });
            if (observed.codex.kind === 'stream') {
              delivered = observed;
              return true;
            }
            const error = jsonError(observed.codex);
            if (/Loading model/.test(error.message)) loadingAnswers.push(error);
            return false;
          },
          30_000,
        );
        assert.ok(loadingAnswers.length > 0, `no request met the loading server (its log:\n${server.output().slice(-2_000)})`);
        for (const answer of loadingAnswers) {
          assert.equal(answer.status, 503);
          assert.equal(answer.code, 'backend_unavailable');
          assert.match(answer.message, /HTTP 503 .*Loading model/);
        }
        assertDeliveredPatch(delivered!);
      });
    }

    for (const format of TOOL_CALL_FORMATS) {
      it(`${format}: a client abort mid-request releases the engine slot; the next request on that one slot succeeds`, async () => {
        // One slot: a slot the abort left busy would block the next request for good.
        const server = await startLlamaServer(kit, { format, slots: 1, contextSize: 32_768 });
        servers.push(server);
        const bridge = await startTestBridge({ backendUrl: server.backendUrl });
        bridges.push(bridge);
        const controller = new AbortController();
        // About 15000 tokens, none of them cached: a prefill of seconds, long enough to abort in the middle.
        const body = { ...FIRST_REQUEST, stream: true, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: freshWords(2_700, 'abort') }] }] };
        const pending = postResponses(bridge.url, body, { signal: controller.signal })
          .then(async (response) => readSseEvents(response))
          .catch((error: unknown) => error);
        await waitFor('the slot to start processing', async () => (await readSlots(server)).some((slot) => slot.is_processing));
        controller.abort();
        const aborted = await pending;
        assert.ok(aborted instanceof Error, `the request was not aborted: ${JSON.stringify(aborted).slice(0, 500)}`);
        await waitFor('the aborted exchange to end', async () => bridge.traffic.some((event) => event.type === 'exchange-end'));
        const end = bridge.traffic.find((event) => event.type === 'exchange-end');
        assert.equal(end?.type === 'exchange-end' ? end.outcome : null, 'aborted');
        // The server notices the disconnect between two prefill batches; a loaded machine makes those slow.
        await waitFor('the slot to be released', async () => (await readSlots(server)).every((slot) => !slot.is_processing), 90_000).catch((error: unknown) => {
          throw new Error(`${String(error)}; the server's log ends:\n${server.output().slice(-3_000)}`);
        });
        // The engine itself saw the disconnect and cancelled the work (its log line), not just finished it.
        assert.match(server.output(), /stop: cancel task/);
        assertDeliveredPatch(await exchange(bridge, { ...FIRST_REQUEST, stream: true }));
      });
    }
  });
}
