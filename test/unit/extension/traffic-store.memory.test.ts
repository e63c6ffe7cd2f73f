import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ChatRequest } from '../../../src/core/chat/chat-completions-api.ts';
import { redactSecrets } from '../../../src/core/redact-secrets.ts';
import { DEFAULT_TRAFFIC_BUFFER_SIZE } from '../../../src/core/defaults.ts';
import { DEFAULT_MAX_BODY_BYTES, TrafficStore } from '../../../src/extension/traffic-store.ts';
import { createLoweredRequest, customCall, endEvent, encodedStartEvent, grammarWarning } from '../../support/traffic-events.ts';

/*
 * The traffic panel's memory bound: a session of 500 turns with 2 MB lowered requests
 * must not grow the extension host beyond a stated bound. Measured here, with the store configured
 * as the panel configures it (default ring buffer, default body budget, secret redaction on), by
 * process.memoryUsage() after a forced garbage collection. Not a timing test: only bytes are asserted.
 */

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const TURNS = 500;
const REQUEST_BYTES = 2 * 1024 * 1024;
const MIB = 1024 * 1024;
/** What the bound allows beyond the body budget: summaries of the ring buffer, Map and pool bookkeeping, heap slack. */
const OVERHEAD_ALLOWANCE = 16 * MIB;
const SECRETS = ['sk-backend-key-0123456789', 'ffb_bridge-token-0123456789'];

function measure(): { heap: number; external: number; total: number; rss: number } {
  collectGarbage();
  collectGarbage();
  const usage = process.memoryUsage();
  // `external` includes `arrayBuffers` (Node's documentation): the store keeps request bodies as bytes in ArrayBuffers.
  return { heap: usage.heapUsed, external: usage.external, total: usage.heapUsed + usage.external, rss: usage.rss };
}

function megabytes(bytes: number): string {
  return `${(bytes / MIB).toFixed(1)} MiB`;
}

/** A lowered request of about `bytes` bytes: a system prompt shared by every turn, plus this turn's own text. */
function createRequest(turn: number, history: ChatRequest['messages']): ChatRequest {
  return createLoweredRequest([{ role: 'system', content: 'You are Codex.' }, ...history]);
}

function runSession(store: TrafficStore, nextHistory: (turn: number) => ChatRequest['messages']): void {
  for (let turn = 0; turn < TURNS; turn += 1) {
    const id = `resp_${turn}`;
    store.apply(encodedStartEvent(id, createRequest(turn, nextHistory(turn))));
    const patch = `*** Begin Patch\n*** Add File: f${turn}.txt\n${'+line\n'.repeat(1000)}*** End Patch\n`;
    store.apply(endEvent(id, [customCall(`call_${turn}`, patch)], [grammarWarning(`call_${turn}`, patch)]));
  }
}

describe('TrafficStore memory bound: 500 turns of 2 MB requests', () => {
  it('distinct 2 MB requests (worst case): growth stays within the body budget plus a fixed allowance', (context) => {
    const before = measure();
    const store = new TrafficStore({ redactText: (text) => redactSecrets(text, SECRETS) });
    // Every turn's request is new text (nothing shared), so only the byte budget bounds the bodies. One
    // non-Latin-1 character makes V8 store the whole text with two bytes per character: the worst case.
    const filler = `→${'q'.repeat(REQUEST_BYTES - 64)}`;
    runSession(store, (turn) => [{ role: 'user', content: `turn ${turn} ${filler}` }]);
    const after = measure();
    const growth = after.total - before.total;
    const stats = store.getStats();
    context.diagnostic(
      `distinct: ${TURNS} turns × ${megabytes(REQUEST_BYTES)} = ${megabytes(TURNS * REQUEST_BYTES)} sent; ring ${stats.exchangeCount}/${stats.capacity}; ` +
        `retained bodies ${megabytes(stats.retainedBodyBytes)} (budget ${megabytes(stats.maxBodyBytes)}), ${stats.evictedBodyCount} evicted; ` +
        `heap +${megabytes(after.heap - before.heap)}, external +${megabytes(after.external - before.external)}, total +${megabytes(growth)}, rss +${megabytes(after.rss - before.rss)}`,
    );
    assert.equal(stats.capacity, DEFAULT_TRAFFIC_BUFFER_SIZE);
    assert.equal(stats.maxBodyBytes, DEFAULT_MAX_BODY_BYTES);
    assert.ok(stats.retainedBodyBytes <= DEFAULT_MAX_BODY_BYTES, `retained ${stats.retainedBodyBytes}`);
    assert.ok(growth <= DEFAULT_MAX_BODY_BYTES + OVERHEAD_ALLOWANCE, `the host grew by ${megabytes(growth)}, over the ${megabytes(DEFAULT_MAX_BODY_BYTES + OVERHEAD_ALLOWANCE)} bound`);
    // The newest request is whole and served on demand.
    const newest = store.getLoweredRequestValue(`resp_${TURNS - 1}`) as ChatRequest | null;
    assert.equal(newest?.messages.length, 2);
    store.clear();
  });

  it('a growing conversation up to 2 MB (what Codex sends): shared history is kept once', (context) => {
    const before = measure();
    const store = new TrafficStore({ redactText: (text) => redactSecrets(text, SECRETS) });
    // Codex resends the whole history: turn n carries the n messages before it, about 2 MB at the end.
    const history: ChatRequest['messages'] = [];
    const perTurn = Math.floor(REQUEST_BYTES / TURNS);
    runSession(store, (turn) => {
      history.push({ role: turn % 2 === 0 ? 'user' : 'assistant', content: `message ${turn} ${'h'.repeat(perTurn - 40)}` } as ChatRequest['messages'][number]);
      return [...history];
    });
    const after = measure();
    const growth = after.total - before.total;
    const stats = store.getStats();
    const lastRequestBytes = store.getSummaries().at(-1)?.loweredRequestBytes ?? 0;
    context.diagnostic(
      `growing: last request ${megabytes(lastRequestBytes)}; ring ${stats.exchangeCount}/${stats.capacity}; retained bodies ${megabytes(stats.retainedBodyBytes)}, ${stats.evictedBodyCount} evicted; ` +
        `heap +${megabytes(after.heap - before.heap)}, total +${megabytes(growth)}`,
    );
    assert.ok(lastRequestBytes >= 1.9 * MIB, `the last request is ${megabytes(lastRequestBytes)}`);
    assert.equal(stats.evictedBodyCount, 0, 'every request of the ring buffer stays viewable');
    assert.ok(growth <= DEFAULT_MAX_BODY_BYTES + OVERHEAD_ALLOWANCE, `the host grew by ${megabytes(growth)}`);
    store.clear();
  });
});
