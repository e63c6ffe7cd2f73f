import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestWindow } from '../support/window-controller.ts';
import { chatRequests, codexSuiteTitle } from '../../harness/codex-session.ts';
import { textInput, trackAppServers } from './app-server-client.ts';
import { IDE_MODEL, IDE_PROVIDER_ID, startIdeSetup } from './ide-setup.ts';

/**
 * Two VS Code windows, one bridge, and the Codex extension working through it: two controllers (one
 * per "window", as each window's extension host has its own) in this process, the real app-server on
 * config.toml. The window that runs the bridge closes between two turns; the other takes over on the
 * same port and the next turn goes through without Codex noticing.
 */

trackAppServers(after);

const TOKEN = 'ffb_two-windows-token';

describe(codexSuiteTitle('app-server through a bridge shared by two VS Code windows'), { timeout: 180_000 }, () => {
  it('the window running the bridge closes between two turns: the other takes over on the same port and the thread goes on', async (context) => {
    const setup = await startIdeSetup({ surface: 'freeform', token: TOKEN, bridgeDown: true });
    context.after(() => setup.close());
    const first = createTestWindow({ token: TOKEN, backendUrl: setup.backend.url, port: setup.port });
    const second = createTestWindow({ token: TOKEN, backendUrl: setup.backend.url, port: setup.port });
    context.after(async () => {
      await first.controller.stop();
      await second.controller.stop();
    });
    assert.equal((await first.controller.start(first.settings)).attachedTo, null);
    assert.equal((await second.controller.start(second.settings)).attachedTo, process.pid);

    const server = setup.startAppServer();
    await server.initialize();
    const thread = (await server.request('thread/start', { cwd: setup.workspace, approvalPolicy: 'never', sandbox: 'workspace-write' })).thread as Record<string, unknown>;
    assert.deepEqual([thread.modelProvider, thread.model], [IDE_PROVIDER_ID, IDE_MODEL]);
    const runTurn = async (text: string): Promise<string> => {
      const started = (await server.request('turn/start', { threadId: thread.id, input: textInput(text) })).turn as { id: string };
      const completed = await server.waitForNotification('turn/completed', (params) => (params.turn as { id?: string } | undefined)?.id === started.id);
      return (completed.turn as { status: string }).status;
    };

    assert.equal(await runTurn('first turn'), 'completed');
    const endsSeenBySecond = (): number => second.traffic.filter((event) => event.type === 'exchange-end').length;
    const waitForEnds = async (count: number): Promise<void> => {
      for (let attempt = 0; attempt < 200 && endsSeenBySecond() < count; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    };
    await waitForEnds(1);
    assert.equal(endsSeenBySecond(), 1, 'the attached window\'s panel saw the first round trip');

    await first.controller.stop();
    for (let attempt = 0; attempt < 200 && second.takeOvers.length === 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.deepEqual(second.takeOvers.map((result) => [result.port, result.attachedTo]), [[setup.port, null]]);

    assert.equal(await runTurn('second turn'), 'completed');
    assert.equal(chatRequests(setup.backend).length, 2);
    // Traffic crosses from the bridge's worker thread to the window's thread after the answer is sent.
    await waitForEnds(2);
    assert.equal(endsSeenBySecond(), 2, 'the second round trip ran through the bridge the second window now runs');
  });
});
