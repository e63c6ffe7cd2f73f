import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, IncomingMessage, request as httpRequest, ServerResponse, type IncomingHttpHeaders, type Server } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import type { ResponsesResponse, ResponsesStreamEvent } from '../../../src/core/responses/responses-output.ts';
import { encodeSseEvent } from '../../../src/core/sse/sse-encoder.ts';
import { ChatStreamTranslator } from '../../../src/core/stream/chat-stream-to-responses-events.ts';
import { createJsonSink, createStreamSink } from '../../../src/server/response-sink.ts';

/** The two forms of an answer toward Codex, written to a real HTTP response and read back by a client. */

type Handler = (response: ServerResponse) => void;

function createTranslator(): ChatStreamTranslator {
  let counter = 0;
  return new ChatStreamTranslator({ responseId: 'resp_sink', model: 'm', createdAt: 0, toolMap: new Map(), createItemId: (prefix) => `${prefix}_${counter++}` });
}

/** A finished text answer from the real translator: its events and its final response. */
function createAnswer(): { start: ResponsesStreamEvent[]; rest: ResponsesStreamEvent[]; final: ResponsesResponse } {
  const translator = createTranslator();
  const start = translator.start();
  const rest = [
    ...translator.push({ id: 'c', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] }),
    ...translator.push({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    ...translator.finish(),
  ];
  const final = translator.finalResponse;
  assert.ok(final);
  return { start, rest, final };
}

describe('response sinks', () => {
  let server: Server;
  let port = 0;
  let handler: Handler = (response) => response.end();

  before(async () => {
    server = createServer((_request, response) => handler(response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function fetchOnce(): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest({ host: '127.0.0.1', port, path: '/', method: 'POST' }, (incoming) => {
        let body = '';
        incoming.setEncoding('utf8');
        incoming.on('data', (text: string) => (body += text));
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body }));
        incoming.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
  }

  it('a stream sink writes nothing before its commit, then the SSE head and each event, and ends', async () => {
    const { start, rest, final } = createAnswer();
    const seen: { committedBefore: boolean; committedAfter: boolean; secondCommit: boolean } = { committedBefore: true, committedAfter: false, secondCommit: true };
    handler = (response) => {
      const sink = createStreamSink(response, { keepaliveSeconds: 0, onKeepalive: () => {}, onClientGone: () => {}, onFull: () => {} });
      sink.write(start);
      seen.committedBefore = sink.committed;
      assert.equal(sink.commit(), true);
      seen.secondCommit = sink.commit();
      seen.committedAfter = sink.committed;
      sink.write(start);
      sink.write(rest);
      sink.end(final);
    };
    const answer = await fetchOnce();
    assert.deepEqual(seen, { committedBefore: false, committedAfter: true, secondCommit: false });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(answer.headers['x-accel-buffering'], 'no');
    assert.equal(answer.body, [...start, ...rest].map(encodeSseEvent).join(''));
  });

  it('a stream sink answers an HTTP error while uncommitted', async () => {
    handler = (response) => {
      const sink = createStreamSink(response, { keepaliveSeconds: 0, onKeepalive: () => {}, onClientGone: () => {}, onFull: () => {} });
      sink.sendHttp({ status: 429, headers: { 'retry-after': '3' }, body: { error: { message: 'slow', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } } });
    };
    const answer = await fetchOnce();
    assert.equal(answer.status, 429);
    assert.equal(answer.headers['retry-after'], '3');
    assert.deepEqual(JSON.parse(answer.body), { error: { message: 'slow', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } });
  });

  it('a committed stream sink asks for keepalive events while nothing else is written, until stopped', async () => {
    const { start, rest, final } = createAnswer();
    let ticks = 0;
    handler = (response) => {
      const sink = createStreamSink(response, {
        keepaliveSeconds: 0.005,
        onKeepalive: () => {
          ticks += 1;
          if (ticks === 2) {
            sink.write(rest);
            sink.end(final);
          }
        },
        onClientGone: () => {},
        onFull: () => {},
      });
      sink.commit();
      sink.write(start);
    };
    const answer = await fetchOnce();
    assert.equal(ticks, 2, 'the keepalive stops with the answer');
    assert.equal(answer.body, [...start, ...rest].map(encodeSseEvent).join(''));
  });

  /** Records the sink's writes to the response: each write's text, and the text the end carried. */
  function recordWrites(response: ServerResponse): { writes: string[]; endedWith: string | null; writesBeforeEnd: number } {
    const record = { writes: [] as string[], endedWith: null as string | null, writesBeforeEnd: -1 };
    const write = response.write.bind(response) as (chunk: string) => boolean;
    response.write = ((chunk: string) => {
      record.writes.push(chunk);
      return write(chunk);
    }) as typeof response.write;
    const end = response.end.bind(response) as (chunk?: string) => ServerResponse;
    response.end = ((chunk?: string) => {
      record.endedWith = chunk ?? null;
      record.writesBeforeEnd = record.writes.length;
      return end(chunk);
    }) as typeof response.end;
    return record;
  }

  it('joins the events written in one run of the event loop into one socket write, and the last ones into the end', async () => {
    const { start, rest, final } = createAnswer();
    let record: ReturnType<typeof recordWrites> | null = null;
    handler = (response) => {
      record = recordWrites(response);
      const sink = createStreamSink(response, { keepaliveSeconds: 0, onKeepalive: () => {}, onClientGone: () => {}, onFull: () => {} });
      sink.commit();
      sink.write(start);
      setImmediate(() => {
        // Three batches in one run (as the chunks of one socket read arrive): one write.
        sink.write(rest.slice(0, 1));
        sink.write(rest.slice(1, 2));
        sink.write(rest.slice(2, 3));
        setImmediate(() => {
          // A later batch and the end in the same run: they leave together with the end.
          sink.write(rest.slice(3));
          sink.end(final);
        });
      });
    };
    const answer = await fetchOnce();
    assert.ok(record);
    const { writes, writesBeforeEnd, endedWith } = record as ReturnType<typeof recordWrites>;
    assert.deepEqual(writes, [start.map(encodeSseEvent).join(''), rest.slice(0, 3).map(encodeSseEvent).join('')]);
    assert.equal(writesBeforeEnd, 2);
    assert.equal(endedWith, rest.slice(3).map(encodeSseEvent).join(''));
    assert.equal(answer.body, [...start, ...rest].map(encodeSseEvent).join(''));
  });

  it('says when Codex\'s socket is full, so the backend is not read faster than Codex reads', async () => {
    const big: ResponsesStreamEvent = { type: 'response.output_text.delta', sequence_number: 1, item_id: 'i', output_index: 0, content_index: 0, delta: 'x'.repeat(256 * 1024) };
    let fullCalls = 0;
    const writeAnswers: boolean[] = [];
    let fullAnswer: boolean | null = null;
    let release: () => void = () => {};
    const full = new Promise<void>((resolve) => (release = resolve));
    handler = (response) => {
      const sink = createStreamSink(response, {
        keepaliveSeconds: 0,
        onKeepalive: () => {},
        onClientGone: () => {},
        onFull: () => {
          fullCalls += 1;
          // Still full (nothing can drain before the loop turns): a write says so at once. (Once:
          // that write's own flush finds the socket full again.)
          if (fullCalls > 1) return;
          fullAnswer = sink.write([big]);
          release();
        },
      });
      sink.commit();
      sink.write(createAnswer().rest.slice(0, 1));
      const writeUntilFull = (): void => {
        if (fullCalls > 0) return;
        writeAnswers.push(sink.write([big]));
        if (writeAnswers.length < 400) setImmediate(writeUntilFull);
      };
      writeUntilFull();
    };
    await new Promise<void>((resolve, reject) => {
      // A client that never reads: the socket fills.
      const outgoing = httpRequest({ host: '127.0.0.1', port, path: '/', method: 'POST' }, (incoming) => {
        incoming.pause();
        void full.then(() => {
          outgoing.destroy();
          resolve();
        });
      });
      outgoing.on('error', (error) => (outgoing.destroyed ? undefined : reject(error)));
      outgoing.end();
    });
    assert.ok(fullCalls >= 1, 'onFull is called when a write finds the socket full');
    assert.equal(writeAnswers[0], true, 'the first write found room');
    assert.equal(fullAnswer, false, 'a write while the socket is full answers false');
  });

  it('a JSON sink is never committed and sends the final response as its one body', async () => {
    const { start, rest, final } = createAnswer();
    let committed = true;
    handler = (response) => {
      const sink = createJsonSink(response, { onClientGone: () => {} });
      assert.equal(sink.write(start), true);
      sink.write(rest);
      committed = sink.committed;
      sink.end(final);
    };
    const answer = await fetchOnce();
    assert.equal(committed, false);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(JSON.parse(answer.body), JSON.parse(JSON.stringify(final)));
  });

  it('tells when Codex hangs up before the answer ends, and then writes nothing', async () => {
    let gone: () => void = () => {};
    const hungUp = new Promise<void>((resolve) => (gone = resolve));
    let sinkClientGone = false;
    handler = (response) => {
      const sink = createStreamSink(response, {
        keepaliveSeconds: 0,
        onKeepalive: () => {},
        onClientGone: () => {
          sinkClientGone = sink.clientGone;
          assert.equal(sink.write(createAnswer().rest), true, 'a write after the hang-up is dropped quietly');
          gone();
        },
        onFull: () => {},
      });
      sink.commit();
      sink.write(createAnswer().start);
    };
    await new Promise<void>((resolve, reject) => {
      const outgoing = httpRequest({ host: '127.0.0.1', port, path: '/', method: 'POST' }, (incoming) => {
        incoming.once('data', () => {
          outgoing.destroy();
          resolve();
        });
      });
      outgoing.on('error', (error) => (outgoing.destroyed ? undefined : reject(error)));
      outgoing.end();
    });
    await hungUp;
    assert.equal(sinkClientGone, true);
  });

  it('sinks of different exchanges share their accessors: none is a function of their own', () => {
    // An accessor that is an own property with a function made per sink lives in V8's hidden class of
    // that object, in the old generation: it kept each exchange alive through young-generation GCs
    // until the next full GC (response-sink.ts). Shared accessors on a prototype cannot.
    const response = new ServerResponse(new IncomingMessage(new Socket()));
    const options = { keepaliveSeconds: 0, onKeepalive: () => {}, onClientGone: () => {}, onFull: () => {} };
    const pairs = [
      [createStreamSink(response, options), createStreamSink(response, { ...options })],
      [createJsonSink(response, { onClientGone: () => {} }), createJsonSink(response, { onClientGone: () => {} })],
    ] as const;
    const prototypeAccessor = (sink: object, key: string): unknown => Object.getOwnPropertyDescriptor(Object.getPrototypeOf(sink) as object, key)?.get;
    for (const [first, second] of pairs) {
      for (const sink of [first, second]) {
        const ownAccessors = Object.entries(Object.getOwnPropertyDescriptors(sink)).filter(([, descriptor]) => descriptor.get !== undefined || descriptor.set !== undefined);
        assert.deepEqual(ownAccessors.map(([key]) => key), [], `${sink.kind} sink`);
      }
      for (const key of ['committed', 'clientGone'] as const) {
        assert.equal(first[key], false, `${first.kind} sink reads ${key}`);
        if (first.kind === 'stream' || key === 'clientGone') {
          assert.equal(typeof prototypeAccessor(first, key), 'function', `${first.kind} sink: ${key} is an accessor`);
          assert.equal(prototypeAccessor(first, key), prototypeAccessor(second, key), `${first.kind} sink: ${key} shared`);
        }
      }
    }
  });
});
