import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MockTurn, RecordedRequest } from '../../../mock-backend/create-mock-backend.ts';
import {
  chatMessages,
  chatRequests,
  codexSuiteTitle,
  describeRun,
  lastMessage,
  messageText,
  replayedCalls,
  roundTripOf,
  startE2eSession,
  unexpectedWarnings,
  type E2eSession,
} from '../../../harness/codex-session.ts';

/**
 * Sub-agents with the real Codex: the parent spawns a child, the child's first request carries its
 * task, the child answers, and the parent hears the answer. The mock plays both models and tells
 * them apart by what the bridge read from each request's `x-codex-turn-metadata` header.
 *
 * Multi-agent v2 (`--enable multi_agent_v2`, tools in namespace `collaboration`) hands the task and
 * the answer over as `agent_message` items; the default v1 (`multi_agent_v1__spawn_agent`) as plain
 * user messages.
 */

const TASK = 'Compute 6 times 7 and answer with the number only.';
const CHILD_ANSWER = '42';
const FINAL = 'The sub-agent computed 42.';

function userTexts(request: RecordedRequest): string[] {
  return chatMessages(request)
    .filter((message) => message.role === 'user')
    .map((message) => messageText(message.content));
}

function hasCall(request: RecordedRequest, callId: string): boolean {
  return replayedCalls(request).some((call) => call.id === callId);
}

/** The parent's and the child's requests, each with the label the bridge gave its round trip. */
function splitByAgent(session: E2eSession): { parent: RecordedRequest[]; child: RecordedRequest[] } {
  const requests = chatRequests(session.backend);
  return {
    parent: requests.filter((request) => roundTripOf(session.traffic, request)?.kind === 'turn'),
    child: requests.filter((request) => roundTripOf(session.traffic, request)?.kind === 'subagent'),
  };
}

describe(codexSuiteTitle('sub-agents, multi-agent v2 (agent_message)'), { timeout: 180_000 }, () => {
  it('the child gets its task, answers, and the parent receives the answer', async () => {
    const session = await startE2eSession({ profile: 'vllm-hermes', surface: 'functions' });
    session.backend.setResponder((request): MockTurn => {
      const label = roundTripOf(session.traffic, request);
      if (label?.kind === 'subagent') return { text: CHILD_ANSWER };
      if (!hasCall(request, 'call_spawn')) {
        return { toolCalls: [{ id: 'call_spawn', name: 'collaboration__spawn_agent', arguments: { task_name: 'calc', message: TASK, fork_turns: 'none' } }] };
      }
      if (!hasCall(request, 'call_wait')) return { toolCalls: [{ id: 'call_wait', name: 'collaboration__wait_agent', arguments: {} }] };
      return { text: FINAL };
    });
    try {
      const run = await session.runCodex('Delegate 6 times 7 to a sub-agent and report its answer.', { extraArguments: ['--enable', 'multi_agent_v2'], timeoutMs: 150_000 });
      assert.equal(run.code, 0, describeRun(run));
      assert.deepEqual(run.agentMessages, [FINAL], describeRun(run));

      const { parent, child } = splitByAgent(session);
      assert.equal(child.length, 1, 'the child answers in one request');
      const [childRequest] = child as [RecordedRequest];
      assert.deepEqual(roundTripOf(session.traffic, childRequest), { kind: 'subagent', agentName: '/root/calc', text: 'sub-agent /root/calc' });
      // The task is the child's last user message: the NEW_TASK header, then the payload, in that order.
      const task = messageText(lastMessage(childRequest)?.content);
      assert.equal(lastMessage(childRequest)?.role, 'user');
      assert.match(task, /^Message Type: NEW_TASK\n/);
      assert.ok(task.endsWith(`Payload:\n${TASK}`), task);

      const last = parent.at(-1);
      assert.ok(last, 'the parent asked the model again after the child finished');
      assert.deepEqual(roundTripOf(session.traffic, last), { kind: 'turn', agentName: '/root', text: 'turn' });
      const answer = userTexts(last).find((text) => text.startsWith('Message Type: FINAL_ANSWER'));
      assert.ok(answer, `the parent's last request carries the child's answer: ${JSON.stringify(userTexts(last))}`);
      assert.match(answer, /Sender: \/root\/calc\n/);
      assert.ok(answer.endsWith(`Payload:\n${CHILD_ANSWER}`), answer);

      assert.deepEqual(unexpectedWarnings(session.traffic), [], 'agent_message is lowered, never dropped');
      await session.stopServers();
      const labels = session.readExchangeLog().map((record) => (record.roundTrip as { text?: string } | undefined)?.text);
      assert.ok(labels.includes('sub-agent /root/calc'), `the exchange log names the sub-agent's round trip: ${labels.join(', ')}`);
    } finally {
      await session.close();
    }
  });
});

describe(codexSuiteTitle('sub-agents, default multi-agent v1 (spawn_agent / wait_agent)'), { timeout: 180_000 }, () => {
  it('the child gets its task as a user message, and wait_agent hands its answer to the parent', async () => {
    const session = await startE2eSession({ profile: 'vllm-hermes', surface: 'functions' });
    session.backend.setResponder((request): MockTurn => {
      const label = roundTripOf(session.traffic, request);
      if (label?.kind === 'subagent') return { text: CHILD_ANSWER };
      if (!hasCall(request, 'call_spawn')) return { toolCalls: [{ id: 'call_spawn', name: 'multi_agent_v1__spawn_agent', arguments: { message: TASK } }] };
      if (!hasCall(request, 'call_wait')) {
        const spawned = chatMessages(request).find((message) => message.role === 'tool' && message.tool_call_id === 'call_spawn');
        const agentId = /"agent_id":"([^"]+)"/.exec(messageText(spawned?.content))?.[1] ?? 'missing-agent-id';
        return { toolCalls: [{ id: 'call_wait', name: 'multi_agent_v1__wait_agent', arguments: { targets: [agentId] } }] };
      }
      return { text: FINAL };
    });
    try {
      const run = await session.runCodex('Delegate 6 times 7 to a sub-agent and report its answer.', { timeoutMs: 150_000 });
      assert.equal(run.code, 0, describeRun(run));
      // v1 also posts a <subagent_notification> when the child ends; arriving after the parent's
      // answer, it starts one more parent turn, which the mock answers the same way.
      assert.ok(run.agentMessages.length >= 1 && run.agentMessages.every((message) => message === FINAL), describeRun(run));

      const { parent, child } = splitByAgent(session);
      assert.equal(child.length, 1, 'the child answers in one request');
      const [childRequest] = child as [RecordedRequest];
      const childLabel = roundTripOf(session.traffic, childRequest);
      assert.equal(childLabel?.kind, 'subagent');
      // v1 gives every agent the root's name; the label tells the child apart by its thread.
      assert.match(childLabel?.text ?? '', /^sub-agent \/root, thread …[0-9a-f]{8}$/);
      assert.equal(lastMessage(childRequest)?.role, 'user');
      assert.equal(messageText(lastMessage(childRequest)?.content), TASK);

      const waited = parent.find((request) => hasCall(request, 'call_wait'));
      assert.ok(waited, 'the parent asked the model again after wait_agent');
      const output = chatMessages(waited).find((message) => message.role === 'tool' && message.tool_call_id === 'call_wait');
      assert.match(messageText(output?.content), new RegExp(`"completed":\\s*"${CHILD_ANSWER}"`), 'wait_agent returns the child’s answer');
      assert.deepEqual(unexpectedWarnings(session.traffic), []);
    } finally {
      await session.close();
    }
  });
});
