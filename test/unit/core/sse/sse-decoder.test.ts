import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { MAX_SSE_LINE_CHARS, SseDecoder, SseLimitError, isDoneSentinel, parseChatStreamEvent, type SseEvent } from '../../../../src/core/sse/sse-decoder.ts';
import { InputStringDecoder } from '../../../../src/core/stream/input-string-decoder.ts';
import { fixturePath } from '../../../support/fixtures.ts';

const examplesFolder = fixturePath('backend-examples');
const encoder = new TextEncoder();

function decodeChunks(chunks: ReadonlyArray<Uint8Array | string>): SseEvent[] {
  const decoder = new SseDecoder();
  const events: SseEvent[] = [];
  for (const chunk of chunks) events.push(...decoder.push(chunk));
  events.push(...decoder.end());
  return events;
}

/** Every way of cutting `bytes` in two, plus one byte at a time. */
function* splitsOf(bytes: Uint8Array): Generator<{ label: string; chunks: Uint8Array[] }> {
  for (let position = 0; position <= bytes.length; position += 1) {
    yield { label: `split at byte ${position}`, chunks: [bytes.subarray(0, position), bytes.subarray(position)] };
  }
  yield { label: 'byte by byte', chunks: Array.from(bytes, (_, index) => bytes.subarray(index, index + 1)) };
}

function assertEveryChunkingGives(text: string, expected: SseEvent[]): void {
  const bytes = encoder.encode(text);
  for (const { label, chunks } of splitsOf(bytes)) {
    assert.deepEqual(decodeChunks(chunks), expected, label);
  }
  assert.deepEqual(decodeChunks([text]), expected, 'as one string');
}

function event(data: string, fields: Partial<SseEvent> = {}): SseEvent {
  return { event: null, data, id: null, unknownFields: [], ...fields };
}

describe('SseDecoder framing', () => {
  it('decodes comments, names, ids, multi-line data and multibyte text however the bytes are cut', () => {
    const text =
      ': comment from a proxy\n' +
      'event: greeting\nid: 7\ndata: Héllo — 👋\n\n' +
      'data: line one\ndata:line two\ndata:  two spaces keep one\n\n' +
      'data: crlf é\r\n\r\n' +
      'data: cr 👋\r\rdata: last without newline';
    assertEveryChunkingGives(text, [
      event('Héllo — 👋', { event: 'greeting', id: '7' }),
      event('line one\nline two\n two spaces keep one'),
      event('crlf é'),
      event('cr 👋'),
      event('last without newline'),
    ]);
  });

  it('treats a CR at a chunk end followed by LF as one line break, not a blank line', () => {
    // Were `\r` + `\n` counted twice, `a` and `b` would be dispatched as two events.
    assertEveryChunkingGives('data: a\r\ndata: b\r\n\r\n', [event('a\nb')]);
  });

  it('handles a lone CR at the very end of the stream', () => {
    assert.deepEqual(decodeChunks(['data: x\r']), [event('x')]);
  });

  it('does not dispatch an event that has no data', () => {
    assert.deepEqual(decodeChunks(['event: ping\n\n: only a comment\n\nid: 3\n\n']), []);
  });

  it('dispatches an empty data field and reads a field line without a colon as an empty value', () => {
    assert.deepEqual(decodeChunks(['data:\n\ndata\n\n']), [event(''), event('')]);
  });

  it('resets event name and id between events', () => {
    assert.deepEqual(decodeChunks(['event: a\nid: 1\ndata: x\n\ndata: y\n\n']), [
      event('x', { event: 'a', id: '1' }),
      event('y'),
    ]);
  });

  it('ignores retry and strips a UTF-8 byte order mark at the start', () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode('retry: 1000\ndata: x\n\n')]);
    for (const { label, chunks } of splitsOf(bytes)) assert.deepEqual(decodeChunks(chunks), [event('x')], label);
  });

  it('reports unknown fields and dispatches an event that has only an unknown field', () => {
    assertEveryChunkingGives('error: {"code":400}\n\ndata: {"x":1}\nfoo: bar\n\n', [
      event('', { unknownFields: [{ name: 'error', value: '{"code":400}' }] }),
      event('{"x":1}', { unknownFields: [{ name: 'foo', value: 'bar' }] }),
    ]);
  });

  it('flushes llama.cpp\'s `data: [DONE]` that ends with a single newline', () => {
    const events = decodeChunks(['data: {"choices":[]}\n\ndata: [DONE]\n']);
    assert.equal(events.length, 2);
    assert.equal(isDoneSentinel(events[1] as SseEvent), true);
  });

  it('decodes a multibyte character cut before end() as a replacement character instead of losing it', () => {
    const bytes = encoder.encode('data: é');
    assert.deepEqual(decodeChunks([bytes.subarray(0, bytes.length - 1)]), [event('\ufffd')]);
  });
});

describe('SseDecoder on recorded backend streams', () => {
  const files = readdirSync(examplesFolder).filter((name) => name.endsWith('.sse'));

  it('finds the recorded streams', () => {
    assert.ok(files.length >= 5, `expected the .sse examples in ${examplesFolder}`);
  });

  for (const file of files) {
    const text = readFileSync(path.join(examplesFolder, file), 'utf8');
    const frames = text.split('\n\n').filter((frame) => frame.length > 0);

    it(`${file}: one event per frame, all chunks valid, ending in [DONE], at every split`, () => {
      const expected = frames.map((frame) => event(frame.replace(/^data: /, '')));
      assertEveryChunkingGives(text, expected);
      const parsed = expected.map(parseChatStreamEvent);
      assert.deepEqual(parsed.at(-1), { kind: 'done' });
      for (const entry of parsed.slice(0, -1)) assert.equal(entry.kind, 'chunk');
    });

    it(`${file}: same events with CRLF line ends and llama.cpp's single final newline`, () => {
      const expected = decodeChunks([text]);
      assertEveryChunkingGives(text.replace(/\n/g, '\r\n'), expected);
      assert.deepEqual(decodeChunks([text.replace(/\n\n$/, '\n')]), expected);
      assert.deepEqual(decodeChunks([text.replace(/\n\n$/, '')]), expected);
    });
  }

  it('reassembles the text of vllm-stream-text-usage.sse', () => {
    const events = decodeChunks([readFileSync(path.join(examplesFolder, 'vllm-stream-text-usage.sse'))]);
    let text = '';
    for (const parsed of events.map(parseChatStreamEvent)) {
      if (parsed.kind === 'chunk') text += parsed.chunk.choices?.[0]?.delta?.content ?? '';
    }
    assert.equal(text, 'Hello!');
  });

  for (const file of ['vllm-stream-reasoning-toolcall-hermes.sse', 'vllm-stream-toolcall-qwen3coder.sse', 'vllm-stream-toolcall-named-choice.sse']) {
    it(`${file}: the streamed arguments decode to the tricky input`, () => {
      const tricky = readFileSync(path.join(examplesFolder, 'tricky-input.txt'), 'utf8');
      const bytes = readFileSync(path.join(examplesFolder, file));
      // Cut the bytes in the middle of the emoji's UTF-8 sequence to exercise the streaming decoder.
      const cut = bytes.indexOf(0xf0) + 2;
      const inputDecoder = new InputStringDecoder();
      let decoded = '';
      for (const parsed of decodeChunks([bytes.subarray(0, cut), bytes.subarray(cut)]).map(parseChatStreamEvent)) {
        if (parsed.kind !== 'chunk') continue;
        for (const call of parsed.chunk.choices?.[0]?.delta?.tool_calls ?? []) {
          const fragment = call.function?.arguments;
          if (typeof fragment === 'string') decoded += inputDecoder.push(fragment);
        }
      }
      // qwen3_coder strips the value's final newline; hermes keeps it.
      const expected = file.includes('qwen3coder') ? tricky.replace(/\n$/, '') : tricky;
      assert.equal(decoded, expected);
      assert.equal(inputDecoder.state, 'done');
    });
  }
});

describe('parseChatStreamEvent', () => {
  const parseOne = (text: string) => {
    const events = decodeChunks([text]);
    assert.equal(events.length, 1);
    return parseChatStreamEvent(events[0] as SseEvent);
  };

  it('recognises [DONE]', () => {
    assert.deepEqual(parseOne('data: [DONE]'), { kind: 'done' });
    assert.equal(isDoneSentinel(event(' [DONE] ')), true);
    assert.equal(isDoneSentinel(event('{"data":"[DONE]"}')), false);
  });

  it('returns a parsed chunk with its raw text', () => {
    const raw = '{"id":"c1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}';
    const parsed = parseOne(`data: ${raw}\n\n`);
    assert.equal(parsed.kind, 'chunk');
    if (parsed.kind !== 'chunk') return;
    assert.equal(parsed.raw, raw);
    assert.equal(parsed.chunk.choices?.[0]?.delta?.content, 'hi');
  });

  it('reads vLLM\'s mid-stream error frame (spaces, ASCII escapes) as server_error', () => {
    const stream =
      'data: {"choices":[{"index":0,"delta":{"content":"Partial"}}]}\n\n' +
      'data: {"error": {"message": "Internal server error \\u00e9", "type": "InternalServerError", "param": null, "code": 500}}\n\n' +
      'data: [DONE]\n\n';
    const parsed = decodeChunks([stream]).map(parseChatStreamEvent);
    assert.deepEqual(
      parsed.map((entry) => entry.kind),
      ['chunk', 'error', 'done'],
    );
    assert.deepEqual(parsed[1], {
      kind: 'error',
      message: 'Internal server error é',
      code: 'server_error',
      raw: '{"error": {"message": "Internal server error \\u00e9", "type": "InternalServerError", "param": null, "code": 500}}',
    });
  });

  it('reads SGLang\'s flat error object and recognises its context-overflow wording', () => {
    const raw = '{"object":"error","message":"The input (40000 tokens) is longer than the model\'s context length (32768 tokens).","type":"BadRequestError","param":null,"code":400}';
    const parsed = parseOne(`data: ${raw}\n\n`);
    assert.deepEqual(parsed, {
      kind: 'error',
      message: "The input (40000 tokens) is longer than the model's context length (32768 tokens).",
      code: 'context_length_exceeded',
      raw,
    });
  });

  it('reads the 2025 llama.cpp `error:` field as context_length_exceeded', () => {
    const value = '{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"invalid_request_error"}';
    const events = decodeChunks([`error: ${value}\n\ndata: [DONE]\n`]);
    assert.equal(events.length, 2);
    assert.deepEqual(parseChatStreamEvent(events[0] as SseEvent), {
      kind: 'error',
      message: 'the request exceeds the available context size. try increasing the context size or enable context shift',
      code: 'context_length_exceeded',
      raw: value,
    });
    assert.deepEqual(parseChatStreamEvent(events[1] as SseEvent), { kind: 'done' });
  });

  it('reads an `error:` field holding plain text, and a string error in a data frame', () => {
    assert.deepEqual(parseOne('error: model crashed\n\n'), { kind: 'error', message: 'model crashed', code: 'server_error', raw: 'model crashed' });
    assert.deepEqual(parseOne('data: {"error":"engine is dead"}\n\n'), {
      kind: 'error',
      message: 'engine is dead',
      code: 'server_error',
      raw: '{"error":"engine is dead"}',
    });
  });

  it('uses llama.cpp\'s error type to detect context overflow in a data frame', () => {
    const body = readFileSync(path.join(examplesFolder, 'llamacpp-error-context.json'), 'utf8');
    const parsed = parseOne(`data: ${body}\n\n`);
    assert.equal(parsed.kind, 'error');
    assert.equal(parsed.kind === 'error' && parsed.code, 'context_length_exceeded');
  });

  it('treats `"error": null` as no error', () => {
    assert.equal(parseOne('data: {"error":null,"choices":[]}\n\n').kind, 'chunk');
  });

  it('reports text that is not JSON and JSON that is not a chunk as invalid, and ignores data-less events', () => {
    const notJson = parseOne('data: {"choices": [\n\n');
    assert.equal(notJson.kind, 'invalid');
    assert.equal(notJson.kind === 'invalid' && notJson.raw, '{"choices": [');
    const notChunk = parseOne('data: {"choices": "many"}\n\n');
    assert.equal(notChunk.kind, 'invalid');
    assert.match(notChunk.kind === 'invalid' ? notChunk.message : '', /choices/);
    assert.equal(parseOne('data: [1, 2]\n\n').kind, 'invalid');
    const onlyUnknown = parseOne('warning: slow\n\n');
    assert.equal(onlyUnknown.kind, 'ignored');
    assert.match(onlyUnknown.kind === 'ignored' ? onlyUnknown.message : '', /warning/);
  });
});

describe('SseDecoder limits', () => {
  it('a line split over thousands of chunks is read whole, with CRLF breaks inside chunks', () => {
    const piece = 'a'.repeat(1000);
    const chunks = ['data: ', ...Array.from({ length: 5000 }, () => piece), '\r', '\n\r\ndata: next\r\n\r\n'];
    const events = decodeChunks(chunks);
    assert.deepEqual(events.map((event) => event.data.length), [5_000_000, 4]);
  });

  it('a line longer than the cap, or an event whose data lines pass it, fails with an error naming the cap', () => {
    const decoder = new SseDecoder();
    decoder.push('data: ');
    const piece = 'b'.repeat(1024 * 1024);
    assert.throws(
      () => {
        for (let sent = 0; sent <= MAX_SSE_LINE_CHARS; sent += piece.length) decoder.push(piece);
      },
      (error: unknown) => SseLimitError.is(error) && /SSE line longer than 32 MB without a line break/.test(error.message),
    );
    const events = new SseDecoder();
    const line = `data: ${'c'.repeat(1024 * 1024)}\n`;
    assert.throws(
      () => {
        for (let sent = 0; sent <= MAX_SSE_LINE_CHARS; sent += line.length) events.push(line);
      },
      (error: unknown) => SseLimitError.is(error) && /SSE event larger than 32 MB/.test(error.message),
    );
  });
});
