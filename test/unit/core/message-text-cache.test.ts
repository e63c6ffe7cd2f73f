import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ChatMessage } from '../../../src/core/chat/chat-completions-api.ts';
import { createMessageTextCache, type SerialisedMessages } from '../../../src/core/message-text-cache.ts';

const system = (text: string): ChatMessage => ({ role: 'system', content: text });
const user = (text: string): ChatMessage => ({ role: 'user', content: text });
const call = (id: string, command: string): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name: 'exec_command', arguments: JSON.stringify({ cmd: command }) } }],
});
const output = (id: string, text: string): ChatMessage => ({ role: 'tool', tool_call_id: id, content: text });

/** A fresh copy, as each request parses and lowers its own. */
const copy = (messages: ChatMessage[]): ChatMessage[] => structuredClone(messages);

/** What the cache gave, as text: the whole array's and each message's. */
const read = (serialised: SerialisedMessages) => ({ array: Buffer.from(serialised.bytes).toString('utf8'), count: serialised.count, messages: serialised.readTexts() });
/** What JSON.stringify gives. */
const expected = (messages: ChatMessage[]) => ({ array: JSON.stringify(messages), count: messages.length, messages: messages.map((message) => JSON.stringify(message)) });

describe('message text cache', () => {
  it("gives each message its JSON text, reusing the session's last texts for the history it resends", () => {
    const cache = createMessageTextCache();
    const turn1 = [system('You are Codex.'), user('list the files'), call('call_1', 'ls'), output('call_1', 'a.txt\nb — ünï')];
    assert.deepEqual(read(cache.serialise('thread-1', copy(turn1))), expected(turn1));
    assert.equal(cache.reusedMessages, 0);
    const turn2 = [...turn1, user('now read a.txt')];
    assert.deepEqual(read(cache.serialise('thread-1', copy(turn2))), expected(turn2));
    assert.equal(cache.reusedMessages, 4, 'the four messages of the last turn');
    // Another session shares nothing, even with the same history.
    cache.serialise('thread-2', copy(turn2));
    assert.equal(cache.reusedMessages, 4);
  });

  it('serialises anew a message that changed in any way, a key order included, and one whose place moved', () => {
    const cache = createMessageTextCache();
    const history = [system('S'), user('one'), call('call_1', 'ls'), output('call_1', 'x')];
    cache.serialise('t', copy(history));
    const changed = copy(history);
    changed[1] = user('one!');
    const reordered = { content: 'x', role: 'tool', tool_call_id: 'call_1' } as ChatMessage;
    changed[3] = reordered;
    const texts = read(cache.serialise('t', changed));
    assert.deepEqual(texts, expected(changed));
    assert.equal(texts.messages[3], '{"content":"x","role":"tool","tool_call_id":"call_1"}');
    assert.equal(cache.reusedMessages, 2, 'the system message and the call');
    // History rewritten from the start (compaction): every place holds another message.
    const compacted = [system('S'), user('summary of it all'), ...copy(history).slice(1)];
    assert.deepEqual(read(cache.serialise('t', compacted)), expected(compacted));
    assert.equal(cache.reusedMessages, 3);
  });

  it('keeps the sessions used last, within its sessions and its bytes', () => {
    const cache = createMessageTextCache({ maxSessions: 2, maxBytes: 200 });
    const history = (session: string) => [user(`${session} `.repeat(10))];
    const reuseOf = (session: string): number => {
      const before = cache.reusedMessages;
      cache.serialise(session, history(session));
      return cache.reusedMessages - before;
    };
    reuseOf('a');
    reuseOf('b');
    assert.equal(reuseOf('a'), 1, 'a was kept, and is now the most recent');
    reuseOf('c');
    assert.equal(reuseOf('b'), 0, 'b, the least recent, went for c');
    // 50 bytes of JSON for each of c and b, 180 for d: past 200 bytes, the oldest go until d fits.
    cache.serialise('d', [user('d'.repeat(150))]);
    assert.equal(reuseOf('c'), 0);
    // Larger than the whole budget: never kept, and nothing else is pushed out for it.
    cache.serialise('huge', [user('h'.repeat(500))]);
    cache.serialise('huge', [user('h'.repeat(500))]);
    assert.equal(reuseOf('c'), 1);
  });

  it('always gives JSON.stringify of every message, over random sessions that resend, extend and change their histories', () => {
    const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', 'ünïcode — 日本', '"quoted"\\', '\u2028', '\ud800 alone', '😀', 'x'.repeat(100)));
    const message: fc.Arbitrary<ChatMessage> = fc.oneof(
      text.map((content) => user(content)),
      text.map((content) => system(content)),
      fc.tuple(fc.constantFrom('call_1', 'call_2'), text).map(([id, command]) => call(id, command)),
      fc.tuple(fc.constantFrom('call_1', 'call_2'), text).map(([id, content]) => output(id, content)),
    );
    const step = fc.record({ session: fc.constantFrom('a', 'b', 'c'), keep: fc.nat({ max: 6 }), add: fc.array(message, { maxLength: 3 }), change: fc.option(fc.tuple(fc.nat(), message)) });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 3 }), (steps, maxSessions) => {
        const cache = createMessageTextCache({ maxSessions, maxBytes: 2_000 });
        const histories = new Map<string, ChatMessage[]>();
        for (const { session, keep, add, change } of steps) {
          const history = [...(histories.get(session) ?? []).slice(0, keep), ...add];
          if (change !== null && history.length > 0) history[change[0] % history.length] = change[1];
          histories.set(session, history);
          assert.deepEqual(read(cache.serialise(session, copy(history))), expected(history));
        }
      }),
      { seed: 0x5eed_0011, numRuns: 300 },
    );
  });
});
