/**
 * The extension host's own event-loop delay while the bridge (in its worker thread) relays Codex
 * traffic and the traffic panel, open, receives every round trip: what every other extension in the
 * window feels. The load (client and backend) runs on a worker thread of its own, so the extension
 * host's main thread carries only what the extension does there. Behaviour is asserted; the delay
 * is printed, never asserted (speed is measured by `npm run bench`, not tested).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { EventLoopDelayFigures, FreeformBridgeTestApi } from '../../../src/extension/test-api.ts';
import { LOAD_ANSWER, SESSION_TURNS, STREAMING_SESSIONS, type ExchangeResult, type LoadReply, type LoadRequest, type LoadScenario } from './host-load-protocol.ts';
import { updateSetting, waitFor } from './suite-support.ts';

const EXTENSION_ID = 'freeform-bridge.freeform-bridge';

type State = ReturnType<FreeformBridgeTestApi['getState']>;

/** The load worker's next reply, or its crash; a reply that never comes fails after `timeoutMs`. */
function nextReply(worker: Worker, timeoutMs: number): Promise<LoadReply> {
  return new Promise((resolveReply, reject) => {
    const timer = setTimeout(() => settle(() => reject(new Error(`the load worker did not answer within ${timeoutMs} ms`))), timeoutMs);
    const onMessage = (reply: LoadReply): void => settle(() => (reply.type === 'error' ? reject(new Error(`load worker: ${reply.message}`)) : resolveReply(reply)));
    const onError = (error: Error): void => settle(() => reject(error));
    const onExit = (code: number): void => settle(() => reject(new Error(`the load worker exited (code ${code})`)));
    function settle(finish: () => void): void {
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      finish();
    }
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

function describeDelay(figures: EventLoopDelayFigures): string {
  return `p50 ${figures.p50Ms.toFixed(2)} ms, p99 ${figures.p99Ms.toFixed(2)} ms, max ${figures.maxMs.toFixed(2)} ms (${figures.samples} samples)`;
}

describe('the extension host\'s event loop while the bridge relays Codex traffic', function () {
  this.timeout(120_000);
  let api: FreeformBridgeTestApi;
  let load: Worker | null = null;
  const state = (): State => api.getState();

  before(async function () {
    const extension = vscode.extensions.getExtension<FreeformBridgeTestApi>(EXTENSION_ID);
    assert.ok(extension, `extension ${EXTENSION_ID} is not installed in this host`);
    const exported = await extension.activate();
    assert.ok(exported, 'activate() returns the test API in ExtensionMode.Test');
    api = exported;
    // Building the sessions (about 26 MB of JSON) happens in the worker before it says ready.
    load = new Worker(join(__dirname, 'host-load-worker.js'), { workerData: { repository: extension.extensionPath } });
    const ready = await nextReply(load, 60_000);
    assert.equal(ready.type, 'ready');
    await updateSetting('backendUrl', ready.backendUrl);
    await vscode.commands.executeCommand('freeformBridge.start');
    await waitFor(state, (value) => value.status === 'on' && value.backendUrl === ready.backendUrl, 'the bridge to run against the load worker\'s backend');
    await vscode.commands.executeCommand('freeformBridge.showTraffic');
    await waitFor(state, (value) => value.trafficPanel.open && value.trafficPanel.readyCount > 0, 'the traffic panel to open and say ready', 20_000);
  });

  after(async () => {
    await vscode.commands.executeCommand('freeformBridge.stop');
    await updateSetting('backendUrl', undefined);
    // Ending the thread closes its backend's server and sockets with it.
    await load?.terminate();
  });

  /** Runs one scenario in the load worker while the extension host's delay is measured. */
  async function measure(scenario: LoadScenario, expectedExchanges: number): Promise<{ exchanges: ExchangeResult[]; delay: EventLoopDelayFigures }> {
    assert.ok(load, 'the load worker runs');
    const { url, bridgeThreadId, trafficPanel } = state();
    assert.ok(url, 'the bridge runs');
    assert.ok(bridgeThreadId !== null && bridgeThreadId > 0, `the bridge runs on thread ${bridgeThreadId}, not the extension host's (0)`);
    const storedBefore = trafficPanel.exchanges;
    api.startEventLoopDelay();
    let delay: EventLoopDelayFigures | null = null;
    try {
      const reply = nextReply(load, 90_000);
      load.postMessage({ type: 'run', scenario, url, token: api.getBridgeToken() } satisfies LoadRequest);
      const done = await reply;
      assert.ok(done.type === 'done' && done.scenario === scenario, `the load worker answered ${JSON.stringify(done)}`);
      assert.equal(done.exchanges.length, expectedExchanges);
      // The round trips' ends cross from the bridge's thread after the answer's last byte.
      await waitFor(state, (value) => value.trafficPanel.exchanges >= storedBefore + expectedExchanges, `the panel's store to count ${expectedExchanges} more round trips`);
      delay = api.takeEventLoopDelay();
      for (const [index, exchange] of done.exchanges.entries()) {
        const what = `exchange ${index + 1} of ${scenario} (${(exchange.requestBytes / 1e6).toFixed(1)} MB)`;
        assert.equal(exchange.httpStatus, 200, what);
        assert.equal(exchange.terminalEvent, 'response.completed', what);
        assert.equal(exchange.responseStatus, 'completed', what);
        assert.equal(exchange.text, LOAD_ANSWER.repeat(exchange.deltas), `${what}: the streamed answer arrives whole`);
      }
      assert.equal(state().trafficPanel.exchanges, storedBefore + expectedExchanges, 'the panel\'s store counted each round trip once');
      return { exchanges: done.exchanges, delay };
    } finally {
      if (!delay) api.takeEventLoopDelay();
    }
  }

  it(`relays a 10 MB Codex session (${SESSION_TURNS} turns) and reports the extension host's event-loop delay`, async () => {
    const { exchanges, delay } = await measure('session', SESSION_TURNS);
    assert.ok(exchanges.every((exchange) => exchange.requestBytes >= 9_500_000), `each turn resends about 10 MB: ${exchanges.map((exchange) => exchange.requestBytes).join(', ')} bytes`);
    console.log(`      extension host event-loop delay, 10 MB session, ${SESSION_TURNS} turns, bridge in a worker: ${describeDelay(delay)}`);
  });

  it(`relays ${STREAMING_SESSIONS} streaming 2 MB sessions at once and reports the extension host's event-loop delay`, async () => {
    const { exchanges, delay } = await measure('streaming', STREAMING_SESSIONS);
    assert.ok(exchanges.every((exchange) => exchange.requestBytes >= 1_900_000), `each session is about 2 MB: ${exchanges.map((exchange) => exchange.requestBytes).join(', ')} bytes`);
    console.log(`      extension host event-loop delay, ${STREAMING_SESSIONS} sessions of 2 MB streaming at once, bridge in a worker: ${describeDelay(delay)}`);
  });
});
