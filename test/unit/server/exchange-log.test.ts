import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createSilentLogger } from '../../../src/core/logger.ts';
import { createExchangeLogWriter } from '../../../src/server/exchange-log.ts';
import { makeTempDir } from '../../support/cleanup.ts';

/**
 * The log file writer holds at most its pending cap in memory: when the disk does not keep up (here a
 * FIFO nobody reads yet, the slowest disk there is), lines past the cap are dropped and counted, and
 * a line saying how many follows once the file takes writes again.
 */

describe('the exchange log writer', () => {
  it('drops lines past its pending cap, counts them, and says so once the file catches up', async () => {
    const fifo = join(makeTempDir('freeform-bridge-log-'), 'exchanges.jsonl');
    execFileSync('mkfifo', [fifo]);
    const cap = 64 * 1024;
    const writer = createExchangeLogWriter(fifo, createSilentLogger(), () => [], cap);
    const message = 'm'.repeat(1024);
    const total = 1000;
    for (let index = 0; index < total; index += 1) {
      writer.listener({ type: 'exchange-rejected', exchangeId: `resp_${index}`, startedAt: '2026-01-01T00:00:00.000Z', httpStatus: 401, error: { code: 'invalid_bridge_token', message } });
    }
    // Now a reader: the queued lines flow, then the notice.
    const chunks: Buffer[] = [];
    const reader = createReadStream(fifo);
    reader.on('data', (chunk) => chunks.push(chunk as Buffer));
    const ended = new Promise<void>((resolve) => reader.once('end', () => resolve()));
    await writer.flush();
    await ended;
    const records = Buffer.concat(chunks).toString('utf8').trim().split('\n').map((line) => JSON.parse(line) as { outcome: string; dropped?: number });
    const written = records.filter((record) => record.outcome === 'rejected').length;
    const notices = records.filter((record) => record.outcome === 'log-lines-dropped');
    assert.ok(written < total, 'lines past the cap were not queued');
    assert.ok(written * 1100 <= cap + 2 * 1100, `at most the cap was held: ${written} lines`);
    assert.equal(notices.length, 1);
    assert.equal(written + notices[0]!.dropped!, total, 'every dropped line is counted');
  });
});
