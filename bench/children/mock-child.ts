/**
 * The project's mock backend in a process of its own, so its CPU and memory are not the bridge's.
 * Answers are chosen by the marker in the request's last user message (bench/answers.ts).
 *
 * Bench-only instrumentation: while recording is on, every write of a stream frame that carries an
 * event token is timestamped on the monotonic clock, so the parent can measure each event's latency
 * from the moment the backend wrote it (direct: to the client; through the bridge: to the client).
 */
import { setMaxListeners } from 'node:events';
import { ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { startMockBackend, type RecordedRequest } from '../../mock-backend/create-mock-backend.ts';
import { createAnswerTurn, readAnswerMarker } from '../answers.ts';
import { monotonicMilliseconds, type ChildMessage, type ParentMessage } from '../child-protocol.ts';

function send(message: ChildMessage): void {
  process.send?.(message);
}

function readLastUserText(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const messages = (body as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return '';
  for (let index = messages.length - 1; index >= 0; index--) {
    const message: unknown = messages[index];
    if (typeof message !== 'object' || message === null || (message as { role?: unknown }).role !== 'user') continue;
    const content = (message as { content?: unknown }).content;
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) return content.map((part: unknown) => (typeof part === 'object' && part !== null ? String((part as { text?: unknown }).text ?? '') : '')).join('\n');
    return '';
  }
  return '';
}

const TOKEN_IN_FRAME = /"content":" t(\d{4})"/;
let recording = false;
const writes: Array<[number, number]> = [];
const originalWrite = ServerResponse.prototype.write;
// Wrapping write() in this process only: the mock itself stays untouched.
ServerResponse.prototype.write = function timedWrite(this: ServerResponse, ...parameters: Parameters<ServerResponse['write']>): boolean {
  const [chunk] = parameters;
  const result = originalWrite.apply(this, parameters);
  if (recording && typeof chunk === 'string') {
    const match = TOKEN_IN_FRAME.exec(chunk);
    if (match?.[1] !== undefined) writes.push([Number(match[1]), monotonicMilliseconds()]);
  }
  return result;
} as ServerResponse['write'];

// The mock adds an abort listener per backpressure wait of a long stream and keeps it until the
// stream ends: harmless, but Node warns past 10. Raised in this process only, to keep the report clean.
setMaxListeners(10_000);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'no-validate': { type: 'boolean' } } });
  const backend = await startMockBackend({
    profile: 'vllm-hermes',
    port: 0,
    validate: values['no-validate'] !== true,
  });
  backend.setResponder((request: RecordedRequest) => {
    // The mock keeps every request (bodies included) for tests; a benchmark sends gigabytes.
    backend.requests.length = 0;
    const answer = readAnswerMarker(readLastUserText(request.body));
    if (answer === null) throw new Error('bench mock: request without an answer marker');
    return createAnswerTurn(answer);
  });

  process.on('message', (message: ParentMessage) => {
    switch (message.type) {
      case 'record-writes':
        recording = message.enabled;
        writes.length = 0;
        send({ type: 'acknowledge', id: message.id });
        break;
      case 'take-writes':
        send({ type: 'writes', id: message.id, writes: writes.splice(0) });
        break;
      case 'stop':
        void backend.close().then(() => process.exit(0));
        break;
      case 'memory':
        send({ type: 'memory', id: message.id, memory: process.memoryUsage() });
        break;
      case 'event-loop-delay':
        break;
      default: {
        const unreachable: never = message;
        throw new Error(`unknown message ${JSON.stringify(unreachable)}`);
      }
    }
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', url: backend.url });
}

main().catch((error: unknown) => {
  process.stderr.write(`bench mock: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
