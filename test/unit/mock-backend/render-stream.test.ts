import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startMockBackend, type EngineProfile, type MockBackend, type MockTurn } from '../../../mock-backend/create-mock-backend.ts';
import {
  collectStreamedArguments,
  normalizeVolatileFields,
  readSseChunks,
  readSseFrames,
} from '../../../mock-backend/read-sse-frames.ts';
import { fixturePath } from '../../support/fixtures.ts';

const examplesFolder = fixturePath('backend-examples');
const trickyInput = readFileSync(`${examplesFolder}/tricky-input.txt`, 'utf8');
const matrix = JSON.parse(readFileSync(`${examplesFolder}/arguments-matrix.json`, 'utf8')) as Record<string, string>;
const referenceModel = 'Qwen/Qwen3-Coder-30B-A3B-Instruct';
const applyPatchTool = {
  type: 'function',
  function: { name: 'apply_patch', parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] } },
};

function readExampleText(name: string): string {
  return readFileSync(`${examplesFolder}/${name}`, 'utf8');
}

interface StreamResult {
  status: number;
  contentType: string | null;
  text: string;
}

async function streamChat(backend: MockBackend, body: Record<string, unknown>): Promise<StreamResult> {
  const response = await fetch(`${backend.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: referenceModel, messages: [{ role: 'user', content: 'fix greet.py' }], stream: true, ...body }),
  });
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
}

async function withBackend<T>(profile: EngineProfile, turns: MockTurn[], run: (backend: MockBackend) => Promise<T>, options: { reasoningKey?: 'both' } = {}): Promise<T> {
  const backend = await startMockBackend({ profile, ...options });
  backend.enqueue(...turns);
  try {
    return await run(backend);
  } finally {
    await backend.close();
  }
}

type Chunk = Record<string, unknown>;
interface ChunkChoice {
  delta: Record<string, unknown>;
  finish_reason: string | null;
}

function firstChoice(chunk: Chunk): ChunkChoice {
  return (chunk.choices as ChunkChoice[])[0] as ChunkChoice;
}

function toolCallsOf(chunk: Chunk): Array<Record<string, unknown>> {
  const choices = chunk.choices as ChunkChoice[];
  return (choices[0]?.delta.tool_calls ?? []) as Array<Record<string, unknown>>;
}

describe('vLLM streams match the reference .sse files (ids and timestamps aside)', () => {
  it('text with usage: vllm-stream-text-usage.sse', async () => {
    const result = await withBackend('vllm-hermes', [{ text: ['Hello', '!'], usage: { prompt_tokens: 31, completion_tokens: 3 } }], (backend) =>
      streamChat(backend, { stream_options: { include_usage: true } }),
    );
    assert.equal(result.status, 200);
    assert.equal(result.contentType, 'text/event-stream; charset=utf-8');
    assert.equal(normalizeVolatileFields(result.text), normalizeVolatileFields(readExampleText('vllm-stream-text-usage.sse')));
    assert.match(result.text, /"id":"chatcmpl-[0-9a-f]{16}"/);
    assert.match(result.text, /"system_fingerprint":"vllm-[0-9.]+-[0-9a-f]{8}"/);
  });

  it('hermes reasoning + tool call: vllm-stream-reasoning-toolcall-hermes.sse', async () => {
    const turn: MockTurn = {
      reasoning: ['The user wants', ' a greeting fix.'],
      toolCalls: [
        {
          name: 'apply_patch',
          argumentPieces: [
            '{"input": "*',
            '** Begin Patch\\n*** Update File: src/greet.py\\n@@ def greet(name):\\n',
            '-    print(\\"Hello, \\" + name)\\n+    print(f\\"Héllo, {name} 👋 — \\\\\\"quoted\\\\\\" \\',
            '\\\\\\ path\\tTAB\\")\\n+    return \'<b class=\\"x\\">&amp;</b>\'\\n*** End Patch\\n"}',
          ],
        },
      ],
      usage: { prompt_tokens: 812, completion_tokens: 171 },
    };
    const result = await withBackend('vllm-hermes', [turn], (backend) =>
      streamChat(backend, { tools: [applyPatchTool], stream_options: { include_usage: true } }),
    );
    assert.equal(normalizeVolatileFields(result.text), normalizeVolatileFields(readExampleText('vllm-stream-reasoning-toolcall-hermes.sse')));
    assert.match(result.text, /"id":"chatcmpl-tool-[0-9a-f]{16}"/);
    assert.deepEqual(JSON.parse(collectStreamedArguments(readSseChunks(result.text)).get(0) ?? ''), { input: trickyInput });
  });

  it('qwen3_coder with default fragmentation: vllm-stream-toolcall-qwen3coder.sse', async () => {
    const turn: MockTurn = {
      text: ["I'll apply the fix."],
      toolCalls: [{ name: 'apply_patch', input: trickyInput }],
      usage: { prompt_tokens: 905, completion_tokens: 188 },
    };
    const result = await withBackend('vllm-qwen3coder', [turn], (backend) =>
      streamChat(backend, { tools: [applyPatchTool], stream_options: { include_usage: true } }),
    );
    assert.equal(normalizeVolatileFields(result.text), normalizeVolatileFields(readExampleText('vllm-stream-toolcall-qwen3coder.sse')));
    assert.match(result.text, /"id":"call_[0-9a-f]{24}"/);
    assert.equal(collectStreamedArguments(readSseChunks(result.text)).get(0), matrix.vllm_qwen3coder_nonstream_and_stream_concat);
  });

  it('named tool_choice: args in the first delta, finish "stop": vllm-stream-toolcall-named-choice.sse', async () => {
    const turn: MockTurn = {
      toolCalls: [
        {
          name: 'apply_patch',
          argumentPieces: [
            '{',
            '"input": ',
            '"*** Begin Patch\\n*** Update File: src/greet.py\\n@@ def greet(name):\\n-    print',
            '(\\"Hello, \\" + name)\\n+    print(f\\"Héllo, {name} 👋 — \\\\\\"quoted\\\\\\" \\\\\\\\ path\\tTAB\\")\\n+    return \'<b class=\\"x\\">&amp;</b>\'\\n*** End Patch\\n"}',
          ],
        },
      ],
    };
    const result = await withBackend('vllm-hermes', [turn], (backend) =>
      streamChat(backend, { tools: [applyPatchTool], tool_choice: { type: 'function', function: { name: 'apply_patch' } } }),
    );
    assert.equal(normalizeVolatileFields(result.text), normalizeVolatileFields(readExampleText('vllm-stream-toolcall-named-choice.sse')));
  });

  it('named tool_choice with default fragmentation still opens with "{" and finishes "stop"', async () => {
    const result = await withBackend('vllm-qwen3coder', [{ toolCalls: [{ name: 'apply_patch', input: trickyInput }] }], (backend) =>
      streamChat(backend, { tools: [applyPatchTool], tool_choice: { type: 'function', function: { name: 'apply_patch' } } }),
    );
    const chunks = readSseChunks(result.text);
    assert.equal((toolCallsOf(chunks[1] as Chunk)[0]?.function as { arguments: string }).arguments, '{');
    assert.equal(firstChoice(chunks[chunks.length - 1] as Chunk).finish_reason, 'stop');
    assert.deepEqual(JSON.parse(collectStreamedArguments(chunks).get(0) ?? ''), { input: trickyInput });
  });

  it('0.11.1–0.15 interim shape with both reasoning keys: vllm-0.12-stream-reasoning-interim.sse', async () => {
    const result = await withBackend(
      'vllm-hermes',
      [{ reasoning: ['Thinking'], text: ['Hi'] }],
      (backend) => streamChat(backend, { model: 'zai-org/GLM-4.7-FP8' }),
      { reasoningKey: 'both' },
    );
    assert.equal(normalizeVolatileFields(result.text), normalizeVolatileFields(readExampleText('vllm-0.12-stream-reasoning-interim.sse')));
  });
});

describe('vLLM stream variants', () => {
  it('vllm-0.10: reasoning_content, name-only first tool delta, no prompt_text or token_ids, 32-hex ids', async () => {
    const result = await withBackend('vllm-0.10', [{ reasoning: 'Hmm.', toolCalls: [{ name: 'apply_patch', input: trickyInput }] }], (backend) =>
      streamChat(backend, { tools: [applyPatchTool] }),
    );
    const chunks = readSseChunks(result.text);
    assert.equal('prompt_text' in (chunks[0] as Chunk), false);
    assert.equal('prompt_token_ids' in (chunks[0] as Chunk), true);
    assert.deepEqual(firstChoice(chunks[1] as Chunk).delta, { reasoning_content: 'Hmm.' });
    assert.equal('token_ids' in ((chunks[1] as Chunk).choices as object[])[0]!, false);
    const header = chunks.find((chunk) => toolCallsOf(chunk).some((entry) => 'id' in entry)) as Chunk;
    assert.deepEqual(toolCallsOf(header).length, 1);
    assert.equal('arguments' in (toolCallsOf(header)[0]?.function as object), false);
    assert.match(String(toolCallsOf(header)[0]?.id), /^chatcmpl-tool-[0-9a-f]{32}$/);
    assert.match(String((chunks[0] as Chunk).id), /^chatcmpl-[0-9a-f]{32}$/);
    assert.equal(collectStreamedArguments(chunks).get(0), matrix.vllm_hermes_nonstream);
    assert.equal(firstChoice(chunks[chunks.length - 1] as Chunk).finish_reason, 'tool_calls');
  });

  it('gpt-oss: reasoning deltas, header with arguments:"", compact raw pieces starting {"input":', async () => {
    const result = await withBackend('vllm-gptoss', [{ reasoning: 'Need to edit greet.py.', toolCalls: [{ name: 'apply_patch', input: trickyInput }] }], (backend) =>
      streamChat(backend, { tools: [applyPatchTool], stream_options: { include_usage: true } }),
    );
    const chunks = readSseChunks(result.text);
    const toolChunks = chunks.filter((chunk) => toolCallsOf(chunk).length > 0);
    assert.deepEqual((toolCallsOf(toolChunks[0] as Chunk)[0] as { function: unknown }).function, { name: 'apply_patch', arguments: '' });
    assert.equal((toolCallsOf(toolChunks[1] as Chunk)[0] as { function: { arguments: string } }).function.arguments, '{"input":');
    assert.equal(collectStreamedArguments(chunks).get(0), matrix.vllm_gptoss_stream_concat);
    assert.deepEqual((chunks[chunks.length - 1] as Chunk).choices, []);
  });

  it('parallel calls packed into one chunk and remaining arguments in the finish chunk', async () => {
    const turn: MockTurn = {
      toolCalls: [
        { name: 'apply_patch', input: 'a' },
        { name: 'apply_patch', input: 'b' },
      ],
      packParallelCalls: true,
      argumentsInFinishChunk: true,
    };
    const result = await withBackend('vllm-qwen3coder', [turn], (backend) => streamChat(backend, { tools: [applyPatchTool] }));
    const chunks = readSseChunks(result.text);
    const indexes = chunks.map((chunk) => toolCallsOf(chunk).map((entry) => entry.index));
    assert.ok(indexes.some((entryIndexes) => entryIndexes.includes(0) && entryIndexes.includes(1)), JSON.stringify(indexes));
    const finish = firstChoice(chunks[chunks.length - 1] as Chunk);
    assert.equal(finish.finish_reason, 'tool_calls');
    assert.deepEqual(finish.delta, { tool_calls: [{ index: 1, function: { arguments: '}' } }] });
    const collected = collectStreamedArguments(chunks);
    assert.deepEqual([collected.get(0), collected.get(1)], ['{"input": "a"}', '{"input": "b"}']);
  });

  it('truncated call: finish_reason stays tool_calls while the arguments are cut', async () => {
    const result = await withBackend('vllm-hermes', [{ toolCalls: [{ name: 'apply_patch', input: trickyInput }], truncateArgumentsAt: 40 }], (backend) =>
      streamChat(backend, { tools: [applyPatchTool] }),
    );
    const chunks = readSseChunks(result.text);
    assert.equal(firstChoice(chunks[chunks.length - 1] as Chunk).finish_reason, 'tool_calls');
    const argumentsText = collectStreamedArguments(chunks).get(0) ?? '';
    assert.equal(Array.from(argumentsText).length, 40);
    assert.throws(() => JSON.parse(argumentsText));
  });

  it('no usage chunk unless stream_options.include_usage', async () => {
    const result = await withBackend('vllm-hermes', [{ text: 'hi' }], (backend) => streamChat(backend, {}));
    assert.equal(readSseChunks(result.text).some((chunk) => 'usage' in chunk), false);
    assert.ok(result.text.endsWith('data: [DONE]\n\n'));
  });
});

describe('SGLang stream', () => {
  it('bare hex id, full-field deltas, explicit id/name nulls, separate finish chunk, usage with reasoning_tokens', async () => {
    const turn: MockTurn = { text: ["I'll apply the fix."], toolCalls: [{ name: 'apply_patch', input: trickyInput }] };
    const result = await withBackend('sglang', [turn], (backend) => streamChat(backend, { tools: [applyPatchTool], stream_options: { include_usage: true } }));
    const chunks = readSseChunks(result.text);
    assert.match(String((chunks[0] as Chunk).id), /^[0-9a-f]{32}$/);
    assert.deepEqual((chunks[0] as Chunk).choices, [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null, matched_stop: null }]);
    assert.deepEqual(firstChoice(chunks[1] as Chunk).delta, { role: null, content: "I'll apply the fix.\n\n", reasoning_content: null, tool_calls: null });
    assert.equal((chunks[1] as Chunk).usage, null);
    const header = toolCallsOf(chunks[2] as Chunk)[0];
    assert.deepEqual(Object.keys(header ?? {}), ['id', 'index', 'type', 'function']);
    assert.match(String(header?.id), /^call_[0-9a-f]{24}$/);
    assert.deepEqual(header?.function, { name: 'apply_patch', arguments: '' });
    const later = chunks.slice(3, -2).map((chunk) => toolCallsOf(chunk)[0]);
    assert.deepEqual(later.map((entry) => (entry?.function as { arguments: string }).arguments)[0], '{');
    for (const entry of later) {
      assert.equal(entry?.id, null);
      assert.equal((entry?.function as { name: unknown }).name, null);
      assert.equal(entry?.type, 'function');
    }
    const finish = chunks[chunks.length - 2] as Chunk;
    assert.deepEqual(firstChoice(finish).delta, {});
    assert.equal(firstChoice(finish).finish_reason, 'tool_calls');
    const usage = (chunks[chunks.length - 1] as Chunk).usage as Record<string, unknown>;
    assert.deepEqual(Object.keys(usage), ['prompt_tokens', 'total_tokens', 'completion_tokens', 'prompt_tokens_details', 'reasoning_tokens']);
    assert.equal(usage.prompt_tokens_details, null);
    assert.equal(usage.reasoning_tokens, 0);
    assert.equal(collectStreamedArguments(chunks).get(0), matrix.sglang_qwen3coder);
  });

  it('a truncated call keeps finish_reason "length"', async () => {
    const result = await withBackend('sglang', [{ toolCalls: [{ name: 'apply_patch', input: trickyInput }], truncateArgumentsAt: 30 }], (backend) =>
      streamChat(backend, { tools: [applyPatchTool] }),
    );
    const chunks = readSseChunks(result.text);
    assert.equal(firstChoice(chunks[chunks.length - 1] as Chunk).finish_reason, 'length');
  });
});

describe('Ollama stream', () => {
  it('role only on chunk 1, whole call in one Go-escaped delta, separate finish chunk, usage order', async () => {
    const turn: MockTurn = { reasoning: 'Plan.', toolCalls: [{ name: 'apply_patch', input: trickyInput }] };
    const result = await withBackend('ollama', [turn], (backend) =>
      streamChat(backend, { model: 'qwen3-coder:30b', tools: [applyPatchTool], stream_options: { include_usage: true } }),
    );
    const chunks = readSseChunks(result.text);
    assert.equal(chunks.length, 4);
    assert.deepEqual(firstChoice(chunks[0] as Chunk).delta, { role: 'assistant', reasoning: 'Plan.' });
    assert.equal('logprobs' in ((chunks[0] as Chunk).choices as object[])[0]!, false);
    assert.equal((chunks[0] as Chunk).system_fingerprint, 'fp_ollama');
    assert.match(String((chunks[0] as Chunk).id), /^chatcmpl-\d{1,3}$/);
    const call = toolCallsOf(chunks[1] as Chunk)[0];
    assert.equal('role' in firstChoice(chunks[1] as Chunk).delta, false);
    assert.match(String(call?.id), /^call_[a-z0-9]{8}$/);
    assert.equal((call?.function as { arguments: string }).arguments, matrix.ollama_any_parser);
    // Go escapes <, >, & in the whole chunk, so the raw frame holds \\u003c inside the arguments string.
    assert.ok(result.text.includes('\\\\u003cb class='));
    assert.deepEqual((chunks[2] as Chunk).choices, [{ index: 0, delta: {}, finish_reason: 'tool_calls' }]);
    assert.deepEqual(Object.keys((chunks[3] as Chunk).usage as object), ['prompt_tokens', 'completion_tokens', 'total_tokens']);
    assert.ok(result.text.endsWith('data: [DONE]\n\n'));
  });
});

describe('llama.cpp stream', () => {
  it('key order, content:null first delta, { opener, escape-safe diffs, timings on the usage chunk, [DONE] with a blank line', async () => {
    const turn: MockTurn = { toolCalls: [{ name: 'apply_patch', input: trickyInput }] };
    const result = await withBackend('llamacpp', [turn], (backend) => streamChat(backend, { tools: [applyPatchTool], stream_options: { include_usage: true } }));
    assert.ok(result.text.endsWith('}\n\ndata: [DONE]\n\n'), JSON.stringify(result.text.slice(-30)));
    const chunks = readSseChunks(result.text);
    assert.deepEqual(Object.keys(chunks[0] as Chunk), ['choices', 'created', 'id', 'model', 'system_fingerprint', 'object']);
    assert.deepEqual((chunks[0] as Chunk).choices, [{ finish_reason: null, index: 0, delta: { role: 'assistant', content: null } }]);
    const opener = toolCallsOf(chunks[1] as Chunk)[0];
    assert.deepEqual(Object.keys(opener ?? {}), ['index', 'id', 'type', 'function']);
    assert.match(String(opener?.id), /^[A-Za-z0-9]{32}$/);
    assert.deepEqual(opener?.function, { name: 'apply_patch', arguments: '{' });
    const fragments = chunks.flatMap((chunk) => toolCallsOf(chunk)).map((entry) => (entry.function as { arguments: string }).arguments);
    assert.ok(!fragments.some((fragment) => /(^|[^\\])(\\\\)*\\$/.test(fragment)), 'no fragment ends inside an escape sequence');
    assert.equal(collectStreamedArguments(chunks).get(0), matrix.llamacpp_compact);
    const finish = chunks[chunks.length - 2] as Chunk;
    assert.deepEqual(finish.choices, [{ finish_reason: 'tool_calls', index: 0, delta: {} }]);
    assert.equal(finish.timings, undefined, 'with include_usage the timings ride on the usage chunk');
    const usage = chunks[chunks.length - 1] as Chunk;
    assert.deepEqual(usage.choices, []);
    assert.deepEqual(Object.keys(usage.usage as object), ['completion_tokens', 'prompt_tokens', 'total_tokens', 'prompt_tokens_details']);
    assert.ok(typeof (usage.timings as { prompt_ms: unknown }).prompt_ms === 'number');
  });
});

describe('LM Studio stream', () => {
  it('OpenAI-style chunks with a separate finish chunk', async () => {
    const result = await withBackend('lmstudio', [{ toolCalls: [{ name: 'apply_patch', input: 'x' }] }], (backend) => streamChat(backend, { tools: [applyPatchTool] }));
    const chunks = readSseChunks(result.text);
    assert.equal(collectStreamedArguments(chunks).get(0), '{"input":"x"}');
    assert.deepEqual(firstChoice(chunks[chunks.length - 1] as Chunk), { index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' });
  });
});

describe('mid-stream errors', () => {
  it('vLLM: spaced, ASCII-escaped error frame then [DONE], no finish chunk', async () => {
    const result = await withBackend('vllm-hermes', [{ text: ['Partial'], midStreamError: 'vllm' }], (backend) => streamChat(backend, {}));
    const frames = readSseFrames(result.text);
    assert.ok(result.text.includes('"delta":{"content":"Partial"}'));
    assert.deepEqual(frames.slice(-2), [
      { field: 'data', value: '{"error": {"message": "Internal server error", "type": "InternalServerError", "param": null, "code": 500}}' },
      { field: 'data', value: '[DONE]' },
    ]);
    assert.equal(readSseChunks(result.text).some((chunk) => (chunk.choices as ChunkChoice[] | undefined)?.[0]?.finish_reason), false);
  });

  it('SGLang: flat error object then [DONE]', async () => {
    const result = await withBackend('sglang', [{ text: 'Partial', midStreamError: 'sglang' }], (backend) => streamChat(backend, {}));
    const frames = readSseFrames(result.text);
    assert.deepEqual(JSON.parse(frames[frames.length - 2]?.value ?? ''), { object: 'error', message: 'Internal server error', type: 'InternalServerError', param: null, code: 500 });
    assert.equal(frames[frames.length - 1]?.value, '[DONE]');
  });

  it('llama.cpp 2025: a non-standard `error:` field, then [DONE] with a single newline', async () => {
    const result = await withBackend('llamacpp', [{ text: 'Partial', midStreamError: 'llamacpp-2025' }], (backend) => streamChat(backend, {}));
    assert.match(result.text, /\n\nerror: \{"code":400,"message":"the request exceeds the available context size\. try increasing the context size or enable context shift","type":"invalid_request_error"\}\n\ndata: \[DONE\]\n$/);
  });

  it('Ollama: an empty content delta, then EOF without finish chunk or [DONE]', async () => {
    const result = await withBackend('ollama', [{ text: 'Partial', midStreamError: 'ollama' }], (backend) => streamChat(backend, {}));
    const chunks = readSseChunks(result.text);
    assert.deepEqual(firstChoice(chunks[chunks.length - 1] as Chunk), { index: 0, delta: { content: '' }, finish_reason: null });
    assert.equal(result.text.includes('[DONE]'), false);
    assert.equal(chunks.some((chunk) => firstChoice(chunk).finish_reason !== null), false);
  });

  it('socket cut mid-event: the client body read fails', async () => {
    await withBackend('vllm-hermes', [{ text: 'Partial', midStreamError: 'socket-cut' }], async (backend) => {
      const response = await fetch(`${backend.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: referenceModel, messages: [{ role: 'user', content: 'x' }], stream: true }),
      });
      assert.equal(response.status, 200);
      await assert.rejects(response.text());
      assert.equal(backend.requests[0]?.aborted, false);
    });
  });
});
