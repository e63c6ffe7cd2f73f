/**
 * The load for the extension host's event-loop test, on a thread of its own (bundled as
 * host-load-worker.js beside the suites): it builds the Codex sessions, posts them to the bridge and
 * serves the fake backend they reach. Were the client or the backend on the extension host's main
 * thread, parsing and building megabytes there would be measured as the bridge's delay.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { createRandom } from '../../../harness/deterministic-random.ts';
import { FAKE_MODEL, startFakeBackend } from './fake-backend.ts';
import { LOAD_ANSWER, SESSION_DELTAS, SESSION_TURNS, STREAMING_DELTAS, STREAMING_SESSIONS, type ExchangeResult, type LoadReply, type LoadRequest } from './host-load-protocol.ts';

type JsonObject = Record<string, unknown>;

/** Codex 0.171 with apply_patch as a free-form tool: its real tools, grammar and context messages. */
const CAPTURE = join('test', 'fixtures', 'captures', 'b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req2.json');
const MEGABYTE = 1_000_000;

const WORDS = 'the file test patch model tool call input output stream value line change build error config server client'.split(' ');

function text(role: 'user' | 'assistant', content: string, id: string): JsonObject {
  return { type: 'message', id, role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: content }] };
}

/** One agent turn as Codex replays it: an ask, reasoning, a file read, a patch, both outputs, a reply. */
function agentTurn(random: () => number, session: number, turn: number): JsonObject[] {
  const word = (): string => WORDS[Math.floor(random() * WORDS.length)] as string;
  const sourceLines = Array.from({ length: 400 }, (_, line) => `\tconst ${word()}${line} = "${word()} \\"quoted\\" — café ✓"; // ${word()} ${word()}`);
  const prose = Array.from({ length: 60 }, () => word()).join(' ');
  const id = `s${session}_${turn}`;
  return [
    text('user', `Fix the failing test in src/module-${id}.ts: ${prose}`, `msg_user_${id}`),
    { type: 'reasoning', id: `rs_${id}`, summary: [], content: [{ type: 'reasoning_text', text: prose }], encrypted_content: null },
    { type: 'function_call', id: `fc_${id}`, status: 'completed', name: 'exec_command', arguments: JSON.stringify({ cmd: `sed -n 1,400p src/module-${id}.ts` }), call_id: `call_read_${id}` },
    { type: 'function_call_output', id: `fco_${id}`, call_id: `call_read_${id}`, output: `Process exited with code 0\nOutput:\n${sourceLines.join('\n')}\n` },
    { type: 'custom_tool_call', id: `ctc_${id}`, status: 'completed', call_id: `call_patch_${id}`, name: 'apply_patch', input: `*** Begin Patch\n*** Update File: src/module-${id}.ts\n@@\n-${sourceLines[0] ?? ''}\n+${sourceLines[1] ?? ''}\n*** End Patch` },
    { type: 'custom_tool_call_output', id: `ctco_${id}`, call_id: `call_patch_${id}`, output: `Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM src/module-${id}.ts\n` },
    text('assistant', `Fixed src/module-${id}.ts: ${prose}`, `msg_assistant_${id}`),
  ];
}

/** A streamed Codex request of about `targetBytes`: the captured tools and context, then history turns. */
function createSession(repository: string, session: number, targetBytes: number): { head: JsonObject; history: JsonObject[] } {
  const capture = JSON.parse(readFileSync(join(repository, CAPTURE), 'utf8')) as JsonObject;
  const context = (capture.input as JsonObject[]).filter((item) => item.type === 'message');
  const random = createRandom(100 + session);
  const history: JsonObject[] = [...context];
  let bytes = Buffer.byteLength(JSON.stringify(capture));
  for (let turn = 1; bytes < targetBytes; turn++) {
    for (const item of agentTurn(random, session, turn)) {
      history.push(item);
      bytes += Buffer.byteLength(JSON.stringify(item)) + 1;
    }
  }
  return { head: { ...capture, model: FAKE_MODEL, stream: true }, history };
}

function withAsk(session: { head: JsonObject; history: JsonObject[] }, ask: string): Buffer {
  return Buffer.from(JSON.stringify({ ...session.head, input: [...session.history, text('user', ask, `msg_ask_${ask.length}`)] }));
}

/** Each turn of the long session resends the whole history plus what the turns before it added. */
function sessionTurns(repository: string): Buffer[] {
  const session = createSession(repository, 0, 10 * MEGABYTE);
  return Array.from({ length: SESSION_TURNS }, (_, turn) => {
    if (turn > 0) session.history.push(text('user', `turn ${turn}: and one more thing`, `msg_more_${turn}`), text('assistant', LOAD_ANSWER.repeat(SESSION_DELTAS), `msg_answer_${turn}`));
    return withAsk(session, `Now add a changelog entry (turn ${turn + 1}).`);
  });
}

function streamingSessions(repository: string): Buffer[] {
  return Array.from({ length: STREAMING_SESSIONS }, (_, session) => withAsk(createSession(repository, session + 1, 2 * MEGABYTE), 'Now run the tests.'));
}

/** Reads the Responses stream to its end: its last event, the final status and the message text. */
async function post(url: string, token: string, body: Buffer, deltas: number): Promise<ExchangeResult> {
  const response = await fetch(`${url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
  });
  const events = (await response.text())
    .split('\n\n')
    .map((block) => block.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)) as { type?: string; response?: { status?: string; output?: Array<{ type: string; content?: Array<{ text?: string }> }> } });
  const last = events.at(-1);
  const message = last?.response?.output?.find((item) => item.type === 'message');
  return {
    httpStatus: response.status,
    requestBytes: body.length,
    terminalEvent: last?.type ?? null,
    responseStatus: last?.response?.status ?? null,
    text: (message?.content ?? []).map((part) => part.text ?? '').join(''),
    deltas,
  };
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('host-load-worker.ts runs only as a worker thread');
  const { repository } = workerData as { repository: string };
  const backend = await startFakeBackend(LOAD_ANSWER);
  backend.recordBodies = false;
  backend.deltaIntervalMs = 1;
  const built = { session: sessionTurns(repository), streaming: streamingSessions(repository) };
  const reply = (message: LoadReply): void => port.postMessage(message);
  port.on('message', (request: LoadRequest) => {
    void (async () => {
      if (request.scenario === 'session') {
        backend.streamedDeltas = SESSION_DELTAS;
        const exchanges: ExchangeResult[] = [];
        for (const body of built.session) exchanges.push(await post(request.url, request.token, body, SESSION_DELTAS));
        return exchanges;
      }
      backend.streamedDeltas = STREAMING_DELTAS;
      return Promise.all(built.streaming.map((body) => post(request.url, request.token, body, STREAMING_DELTAS)));
    })().then(
      (exchanges) => reply({ type: 'done', scenario: request.scenario, exchanges }),
      (error: unknown) => reply({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
  });
  reply({ type: 'ready', backendUrl: backend.url });
}

main().catch((error: unknown) => {
  parentPort?.postMessage({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies LoadReply);
});
