import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { classifyEngineRefusal } from '../../../src/core/engine-error.ts';
import { mapFailureToHttp } from '../../../src/server/failure-map.ts';
import { isPlainObject } from '../../../src/core/parse-json.ts';
import { fixturePath } from '../../support/fixtures.ts';
import { startMockBackend, type MockBackend, type MockBackendOptions, type MockTurn } from '../../../mock-backend/create-mock-backend.ts';
import { collectStreamedArguments, readSseChunks } from '../../../mock-backend/read-sse-frames.ts';

/**
 * The `llamacpp` mock profile held against what a real llama-server (v0.5.0, commit de3ff81) wrote for
 * the same request bodies (test/fixtures/llama-server). The mock imitates the Qwen3-Coder XML handler,
 * whose arguments the server builds itself, so the stream comparisons use the `qwen3coder` recordings.
 * Ids, timestamps and timings differ per run; shapes (field order, value types, frame kinds, wire
 * separators), argument bytes and error bodies must not.
 */

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch';

function readWire(folder: string, name: string): { status: number; contentType: string | null; body: string } {
  const head = readFileSync(fixturePath('llama-server', 'wire', folder, `${name}.status-headers.txt`), 'utf8');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const contentType = /^Content-Type: (.*)$/im.exec(head)?.[1]?.trim() ?? null;
  return { status, contentType, body: readFileSync(fixturePath('llama-server', 'wire', folder, `${name}.body`), 'utf8') };
}

function readRequestText(name: string): string {
  return readFileSync(fixturePath('llama-server', 'requests', `${name}.json`), 'utf8');
}

function readRequest(name: string): Record<string, unknown> {
  return JSON.parse(readRequestText(name)) as Record<string, unknown>;
}

const openBackends: MockBackend[] = [];
after(async () => {
  await Promise.all(openBackends.map((backend) => backend.close()));
});

async function askMock(
  requestText: string,
  turns: MockTurn[] = [{ toolCalls: [{ name: 'apply_patch', input: `${PATCH}\n` }] }],
  options: Partial<MockBackendOptions> = {},
): Promise<{ status: number; contentType: string | null; body: string }> {
  const backend = await startMockBackend({ profile: 'llamacpp', ...options });
  openBackends.push(backend);
  backend.enqueue(...turns);
  const response = await fetch(`${backend.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: requestText });
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}

/** Value types in place of values (literal where the value is part of the shape); objects as ordered entries. */
const LITERAL_KEYS: ReadonlySet<string> = new Set(['object', 'finish_reason', 'role', 'type', 'name']);
function shapeOf(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => shapeOf(item));
  if (isPlainObject(value)) return Object.entries(value).map(([entryKey, entry]) => [entryKey, shapeOf(entry, entryKey)]);
  if (typeof value === 'string') return LITERAL_KEYS.has(key) ? value : 'string';
  if (typeof value === 'number') return 'number';
  return value;
}

type Chunk = Record<string, unknown>;
type FrameKind = 'role' | 'call-opener' | 'call-piece' | 'finish' | 'usage' | 'other';

function classifyChunk(chunk: Chunk): FrameKind {
  const choices = chunk.choices as Array<{ finish_reason: string | null; delta: Record<string, unknown> }>;
  if (choices.length === 0) return 'usage';
  const choice = choices[0]!;
  if (choice.finish_reason !== null) return 'finish';
  if ('role' in choice.delta) return 'role';
  const calls = choice.delta.tool_calls as Array<Record<string, unknown>> | undefined;
  if (calls) return calls.some((call) => 'id' in call) ? 'call-opener' : 'call-piece';
  return 'other';
}

/** Frame kinds in order (runs of pieces collapsed) and the distinct shapes of each kind. */
function describeStream(body: string): { kinds: FrameKind[]; shapes: Record<string, string[]> } {
  const kinds: FrameKind[] = [];
  const shapes: Record<string, Set<string>> = {};
  for (const chunk of readSseChunks(body)) {
    const kind = classifyChunk(chunk);
    if (kinds.at(-1) !== kind || kind !== 'call-piece') kinds.push(kind);
    (shapes[kind] ??= new Set()).add(JSON.stringify(shapeOf(chunk)));
  }
  return { kinds, shapes: Object.fromEntries(Object.entries(shapes).map(([kind, set]) => [kind, [...set]])) };
}

function argumentPieces(body: string): string[] {
  return readSseChunks(body).flatMap((chunk) =>
    ((chunk.choices as Array<{ delta: { tool_calls?: Array<{ function: { arguments: string } }> } }>)[0]?.delta.tool_calls ?? []).map((call) => call.function.arguments),
  );
}

/** What the real server never does to a piece: end it inside an escape, or end it with a newline it holds back. */
function describePieceViolations(pieces: readonly string[], holdsNewlines: boolean): string[] {
  const violations: string[] = [];
  for (const [index, piece] of pieces.entries()) {
    if (/(^|[^\\])(\\\\)*\\$/.test(piece)) violations.push(`piece ${index} ends inside an escape: ${JSON.stringify(piece)}`);
    if (holdsNewlines && /(^|[^\\])(\\\\)*\\n$/.test(piece)) violations.push(`piece ${index} ends with a newline: ${JSON.stringify(piece)}`);
  }
  return violations;
}

describe('llamacpp mock profile against the real llama-server bytes: streams', () => {
  it('a stream: the same frame kinds, shapes, separators and argument bytes; [DONE] followed by a blank line; timings on the finish chunk', async () => {
    const real = readWire('qwen3coder', 'required-stream');
    const mock = await askMock(readRequestText('required-stream'));
    assert.equal(mock.status, real.status);
    assert.equal(mock.contentType, real.contentType);
    assert.deepEqual(describeStream(mock.body), describeStream(real.body));
    assert.deepEqual(describeStream(real.body).kinds, ['role', 'call-opener', 'call-piece', 'finish']);
    for (const body of [real.body, mock.body]) {
      assert.ok(body.endsWith('}\n\ndata: [DONE]\n\n'), JSON.stringify(body.slice(-40)));
      assert.match(body, /^(data: [^\n]+\n\n)+$/);
    }
    const finish = readSseChunks(mock.body).at(-1)!;
    assert.equal(typeof (finish.timings as { predicted_ms?: unknown }).predicted_ms, 'number');
    assert.equal(collectStreamedArguments(readSseChunks(mock.body)).get(0), collectStreamedArguments(readSseChunks(real.body)).get(0));
  });

  it('with include_usage: no timings on the finish chunk, then a choices:[] usage chunk carrying usage (with cached_tokens) and timings', async () => {
    const real = readWire('qwen3coder', 'required-stream-usage');
    const mock = await askMock(readRequestText('required-stream-usage'));
    assert.deepEqual(describeStream(mock.body), describeStream(real.body));
    assert.deepEqual(describeStream(real.body).kinds, ['role', 'call-opener', 'call-piece', 'finish', 'usage']);
  });

  it('argument pieces: {, the key prefix, escape-safe pieces, every newline held back and glued to the next piece, then " and }', async () => {
    const real = argumentPieces(readWire('qwen3coder', 'required-stream').body);
    const mock = argumentPieces((await askMock(readRequestText('required-stream'))).body);
    for (const pieces of [real, mock]) {
      assert.deepEqual(pieces.slice(0, 2), ['{', '"input":"']);
      assert.deepEqual(pieces.slice(-2), ['"', '}']);
      assert.deepEqual(describePieceViolations(pieces, true), []);
      assert.ok(pieces.some((piece) => piece.startsWith('\\n') && piece.length > 2), `no held-back newline in ${JSON.stringify(pieces)}`);
    }
    assert.equal(mock.join(''), real.join(''));
  });

  it('the real server never splits an escape, whatever the model tokenises (Hermes, a model writing \\ and n apart, XML)', () => {
    for (const [folder, names] of [
      ['hermes', ['required-stream', 'auto-stream', 'named-stream']],
      ['hermes-split', ['required-stream', 'auto-stream']],
      ['qwen3coder', ['required-stream', 'auto-stream', 'named-stream']],
    ] as const) {
      for (const name of names) {
        const pieces = argumentPieces(readWire(folder, name).body);
        assert.ok(pieces.length > 5, `${folder}/${name}`);
        assert.deepEqual(describePieceViolations(pieces, folder === 'qwen3coder'), [], `${folder}/${name}`);
      }
    }
  });

  it('a named tool_choice object is treated as "auto": finish_reason tool_calls, the same shapes as the real named-choice stream', async () => {
    const request = readRequest('named-stream');
    assert.ok(isPlainObject(request.tool_choice), 'the recorded request names a function');
    const real = readWire('qwen3coder', 'named-stream');
    const mock = await askMock(readRequestText('named-stream'));
    assert.deepEqual(describeStream(mock.body), describeStream(real.body));
    const finishReason = (body: string): unknown => (readSseChunks(body).at(-1)!.choices as Array<{ finish_reason: unknown }>)[0]?.finish_reason;
    assert.equal(finishReason(real.body), 'tool_calls');
    assert.equal(finishReason(mock.body), 'tool_calls');
  });
});

describe('llamacpp mock profile against the real llama-server bytes: non-stream', () => {
  for (const name of ['required-nonstream', 'named-nonstream'] as const) {
    it(`${name}: the same shape, content "" next to tool_calls, the same arguments bytes`, async () => {
      const real = readWire('qwen3coder', name);
      const mock = await askMock(readRequestText(name));
      assert.equal(mock.status, real.status);
      assert.equal(mock.contentType, real.contentType);
      const realBody = JSON.parse(real.body) as Chunk;
      const mockBody = JSON.parse(mock.body) as Chunk;
      assert.deepEqual(shapeOf(mockBody), shapeOf(realBody));
      type Message = { content: unknown; tool_calls: Array<{ function: { arguments: string } }> };
      const messageOf = (body: Chunk): Message => (body.choices as Array<{ message: Message }>)[0]!.message;
      assert.equal(messageOf(realBody).content, '');
      assert.equal(messageOf(mockBody).content, '');
      assert.equal(messageOf(mockBody).tool_calls[0]?.function.arguments, messageOf(realBody).tool_calls[0]?.function.arguments);
    });
  }
});

describe('llamacpp mock profile against the real llama-server bytes: errors', () => {
  const cases: Array<{ name: string; folder?: string; options?: Partial<MockBackendOptions>; maskPromptTokens?: boolean }> = [
    { name: 'err-custom-tool' },
    { name: 'err-custom-tool-stream' },
    { name: 'err-tool-no-function' },
    { name: 'err-bad-tool-choice' },
    { name: 'err-bad-tool-choice-stream' },
    { name: 'err-no-messages' },
    { name: 'err-enable-thinking-string', folder: 'hermes' },
    { name: 'err-bad-json' },
    // The prompt's token count is the real tokenizer's; the mock only estimates it, so it is masked.
    { name: 'err-context', options: { contextWindow: 4096 }, maskPromptTokens: true },
  ];
  const maskPromptTokens = (body: string): string => body.replace(/request \(\d+ tokens\)/, 'request (N tokens)').replace(/"n_prompt_tokens":\d+/, '"n_prompt_tokens":N');
  for (const testCase of cases) {
    it(`${testCase.name}: the same status and body bytes`, async () => {
      const real = readWire(testCase.folder ?? 'qwen3coder', testCase.name);
      const mock = await askMock(readRequestText(testCase.name), undefined, testCase.options);
      assert.equal(mock.status, real.status);
      assert.equal(mock.contentType, real.contentType);
      const mask = testCase.maskPromptTokens ? maskPromptTokens : (body: string): string => body;
      assert.equal(mask(mock.body), mask(real.body));
    });
  }

  it('an error after the 200 (output the format handler cannot parse): data: {"error":…}, then the end without [DONE]', async () => {
    const real = readWire('random-gptoss', 'auto-stream');
    const [realFirst, ...realRest] = real.body.split('\n\n');
    const errorBody = JSON.parse(realRest[0]!.slice('data: '.length)) as unknown;
    const mock = await askMock(readRequestText('auto-stream'), [{ midStreamError: 'llamacpp', errorBody }]);
    const [mockFirst, ...mockRest] = mock.body.split('\n\n');
    assert.equal(mock.status, 200);
    assert.deepEqual(shapeOf(JSON.parse(mockFirst!.slice('data: '.length))), shapeOf(JSON.parse(realFirst!.slice('data: '.length))));
    assert.deepEqual(mockRest, realRest);
  });

  it('503 "Loading model": the same body bytes (message, type, code: another field order than the other errors)', async () => {
    const real = readWire('loading', '503-while-loading');
    const mock = await askMock(readRequestText('required-stream'), [{ failure: 'overloaded' }]);
    assert.equal(mock.status, 503);
    assert.equal(mock.body, real.body);
  });

  it('tools: [] is taken as no tools: accepted, answered with text', async () => {
    const real = readWire('hermes', 'err-empty-tools');
    const mock = await askMock(readRequestText('err-empty-tools'), [{ text: 'plain text' }]);
    assert.equal(real.status, 200);
    assert.equal(mock.status, 200);
    const message = (body: string): Record<string, unknown> => ((JSON.parse(body) as Chunk).choices as Array<{ message: Record<string, unknown> }>)[0]!.message;
    assert.equal(message(real.body).tool_calls, undefined);
    assert.equal(message(mock.body).tool_calls, undefined);
  });
});

describe("the bridge's mapping of the real llama-server error bodies", () => {
  const context = { backendUrl: 'http://127.0.0.1:8080/v1', model: 'tiny', retryAfter: null };
  const cases: Array<{ folder: string; name: string; status: number; code: string; message: RegExp }> = [
    // A 500 for a cause that never goes away: a 400 Codex prints instead of retrying it 30 times.
    { folder: 'qwen3coder', name: 'err-custom-tool', status: 400, code: 'backend_rejected_request', message: /Unsupported tool type.*hint: .*function_bridge/s },
    { folder: 'qwen3coder', name: 'err-tool-no-function', status: 400, code: 'backend_rejected_request', message: /Missing tool function/ },
    { folder: 'qwen3coder', name: 'err-bad-tool-choice', status: 400, code: 'backend_rejected_request', message: /Invalid tool_choice: banana/ },
    { folder: 'qwen3coder', name: 'err-no-messages', status: 400, code: 'backend_rejected_request', message: /'messages' is required/ },
    { folder: 'hermes', name: 'err-enable-thinking-string', status: 400, code: 'backend_rejected_request', message: /enable_thinking/ },
    // Codex compacts on context_length_exceeded; the type alone identifies it.
    { folder: 'qwen3coder', name: 'err-context', status: 400, code: 'context_length_exceeded', message: /request \(6392 tokens\) exceeds the available context size \(4096 tokens\)/ },
    // Loading is transient: a 503 Codex retries.
    { folder: 'loading', name: '503-while-loading', status: 503, code: 'backend_unavailable', message: /Loading model/ },
  ];
  for (const testCase of cases) {
    it(`${testCase.folder}/${testCase.name} → ${testCase.status} ${testCase.code}`, () => {
      const real = readWire(testCase.folder, testCase.name);
      const mapped = mapFailureToHttp({ kind: 'engine-refusal', refusal: classifyEngineRefusal(real.status, real.body, context) });
      assert.equal(mapped.status, testCase.status);
      assert.equal(mapped.body.error.code, testCase.code);
      assert.match(mapped.body.error.message, testCase.message);
    });
  }
});
