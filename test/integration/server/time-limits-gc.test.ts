import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { listModelThenDrip } from '../../../mock-backend/hostile-backend.ts';
import { startScriptedBackend, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';
import { runEngineDoctor } from '../../../src/server/engine-doctor.ts';

/**
 * Time limits hold through garbage collections. An engine that lists a model and then answers chat
 * requests with a comment line every few milliseconds keeps each connection busy without ever
 * answering: only the client's own limit ends the request. The collections are forced all through the
 * wait, as other traffic would cause them; a limit the collector can take away never fires, and the
 * engine's drip ending (long after the limit) then gives a result that is not "no answer".
 */

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const MODEL = 'drip-model';
/** The drip outlasts every limit below many times over; it ends by itself so nothing can hang. */
const DRIP = { intervalMs: 20, forMs: 8_000 };

let engine: ScriptedBackend;
let collector: NodeJS.Timeout;
before(async () => {
  engine = await startScriptedBackend();
  engine.setHandlers(listModelThenDrip(MODEL, DRIP));
  collector = setInterval(collectGarbage, 10);
});
after(async () => {
  clearInterval(collector);
  await engine.close();
});

describe('time limits through garbage collections', { timeout: 60_000 }, () => {
  it('the doctor: each probe of a dripping engine ends at its limit, reported as no answer', async () => {
    const report = await runEngineDoctor({ backendUrl: engine.url, apiKey: null, configuredModel: null, probe: true, probeTimeoutMs: 300 });
    assert.equal(report.model, MODEL);
    for (const check of ['Tool call', 'Tool call, streamed']) {
      const finding = report.findings.find((entry) => entry.check === check);
      assert.match(finding?.summary ?? '', /no answer within 0\.3 s/, `${check}: ${JSON.stringify(finding)}`);
    }
    // Every chat request was cut by the doctor, none ended by the engine.
    const chats = engine.requests.filter((request) => request.path === '/v1/chat/completions');
    assert.ok(chats.length >= 4, `${chats.length} chat requests`);
    for (const chat of chats) assert.equal(chat.aborted, true);
  });
});
