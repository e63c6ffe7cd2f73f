import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../../src/core/logger.ts';
import type { ExchangeRejectedEvent } from '../../../src/core/traffic/traffic-event.ts';
import { startTestBridge } from '../../support/bridge-harness.ts';
import { makeTempDir } from '../../support/cleanup.ts';
import { sendRawHttpRequest } from '../../support/raw-http.ts';
import { startScriptedBackend } from '../../../mock-backend/scripted-backend.ts';

/**
 * A flood of refused requests is reported once per cause and interval, with a count, in the terminal,
 * the log file and the panel alike: it cannot fill the log or push the real round trips out of the
 * panel's buffer. The interval here is a minute, so the whole flood falls in one.
 */

const TOKEN = 'bridge-token-refusal-flood';
const FLOOD = 300;

describe('a flood of refusals', () => {
  it('is one line per cause with a count, in the terminal, the log file and the traffic', async () => {
    const backend = await startScriptedBackend();
    const lines: string[] = [];
    const logger: Logger = { error: (message) => lines.push(message), warn: (message) => lines.push(message), info: () => undefined, debug: () => undefined };
    const logFile = join(makeTempDir('freeform-bridge-flood-'), 'exchanges.jsonl');
    const bridge = await startTestBridge({ backendUrl: backend.url, getToken: () => TOKEN, logger, logFile, refusalReportIntervalMs: 60_000 });
    try {
      for (let batch = 0; batch < FLOOD / 30; batch += 1) {
        await Promise.all(
          Array.from({ length: 30 }, (_, index) =>
            sendRawHttpRequest(bridge.url, { path: '/v1/responses', headers: index % 2 === 0 ? { 'content-type': 'application/json' } : { authorization: 'Bearer wrong', 'content-type': 'application/json' }, body: '{}' }),
          ),
        );
      }
    } finally {
      await bridge.close();
      await backend.close();
    }
    const rejected = bridge.traffic.filter((event): event is ExchangeRejectedEvent => event.type === 'exchange-rejected');
    assert.equal(rejected.length, 2, 'the first refusal, then one report for the rest');
    assert.equal(rejected.reduce((sum, event) => sum + (event.repeated ?? 1), 0), FLOOD, `every refusal is counted: ${JSON.stringify(rejected)}`);
    assert.match(rejected[1]!.error.message, new RegExp(`\\(${FLOOD - 1} more refused the same way within 60 s\\)$`));
    const refusedLines = lines.filter((line) => / refused: HTTP 401/.test(line));
    assert.equal(refusedLines.length, 2, lines.join('\n'));
    const records = readFileSync(logFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { outcome: string; repeated: number });
    assert.deepEqual(records.map((record) => [record.outcome, record.repeated]), [['rejected', 0], ['rejected', FLOOD - 1]]);
  });
});
