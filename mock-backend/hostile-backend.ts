import type { ServerResponse } from 'node:http';
import { renderChunkFrame, startSseResponse, type ScriptedHandler } from './scripted-backend.ts';

/**
 * Answers a backend that means harm (or is badly broken) may give: bodies and streams that go on far
 * past anything real, and pages that are not an API at all. Each handler writes only as fast as the
 * bridge reads (it waits for 'drain'), stops at once when the bridge cuts the socket, and ends by
 * itself after `totalBytes`, so a test against a bridge without the limit it checks fails on its
 * assertion instead of hanging.
 */

/** Writes `piece()` until `totalBytes` went out or the bridge closed the socket; true when it went out in full. */
export async function writeUntil(response: ServerResponse, totalBytes: number, piece: () => string | Buffer): Promise<boolean> {
  let written = 0;
  while (written < totalBytes) {
    if (response.destroyed || response.writableEnded) return false;
    const next = piece();
    written += Buffer.byteLength(next);
    if (!response.write(next)) {
      const drained = await new Promise<boolean>((resolve) => {
        const onDrain = (): void => {
          response.off('close', onClose);
          resolve(true);
        };
        const onClose = (): void => {
          response.off('drain', onDrain);
          resolve(false);
        };
        response.once('drain', onDrain);
        response.once('close', onClose);
      });
      if (!drained) return false;
    }
  }
  return true;
}

function endIfOpen(response: ServerResponse, completed: boolean): void {
  if (completed && !response.destroyed) response.end();
}

const KIB = 1024;

/** A stream of text deltas that never reaches a finish reason: `totalBytes` of frames, then the body ends. */
export const streamEndlessText =
  (totalBytes: number, field: 'content' | 'reasoning_content' = 'content'): ScriptedHandler =>
  async (response) => {
    startSseResponse(response);
    const frame = renderChunkFrame({ [field]: 'x'.repeat(8 * KIB) });
    endIfOpen(response, await writeUntil(response, totalBytes, () => frame));
  };

/** One tool call whose arguments never end. */
export const streamEndlessToolArguments =
  (totalBytes: number): ScriptedHandler =>
  async (response) => {
    startSseResponse(response);
    response.write(renderChunkFrame({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{"command":["' } }] }));
    const frame = renderChunkFrame({ tool_calls: [{ index: 0, function: { arguments: 'y'.repeat(8 * KIB) } }] });
    endIfOpen(response, await writeUntil(response, totalBytes, () => frame));
  };

/** Bytes that never contain a line break: one SSE line without end. */
export const streamEndlessLine =
  (totalBytes: number): ScriptedHandler =>
  async (response) => {
    startSseResponse(response);
    response.write('data: ');
    const piece = 'z'.repeat(64 * KIB);
    endIfOpen(response, await writeUntil(response, totalBytes, () => piece));
  };

/** An error status whose body goes on and on. */
export const answerEndlessErrorBody =
  (totalBytes: number, status = 500): ScriptedHandler =>
  async (response) => {
    response.writeHead(status, { 'content-type': 'text/plain' });
    const piece = 'e'.repeat(64 * KIB);
    endIfOpen(response, await writeUntil(response, totalBytes, () => piece));
  };

/** A JSON answer to a stream request that goes on and on (one huge string in a completion). */
export const answerEndlessJson =
  (totalBytes: number): ScriptedHandler =>
  async (response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"');
    const piece = 'j'.repeat(64 * KIB);
    const completed = await writeUntil(response, totalBytes, () => piece);
    if (completed && !response.destroyed) response.end('"},"finish_reason":"stop"}]}');
  };

/** Headers, then nothing at all until the bridge gives up (a hung engine). */
export const answerNothing: ScriptedHandler = (response) => {
  startSseResponse(response);
};

/** Never even sends the headers (an engine stuck before its first byte). */
export const sendNoHeaders: ScriptedHandler = () => undefined;

/** A web page where the API should be (a proxy's login page, a web UI at the base URL). */
export const answerHtmlPage: ScriptedHandler = (response) => {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  response.end('<!doctype html><html><head><title>Sign in</title></head><body><form>login</form></body></html>');
};

/** A well-formed stream whose text carries bytes that are not UTF-8. */
export const streamInvalidUtf8: ScriptedHandler = (response) => {
  startSseResponse(response);
  const [before, after] = renderChunkFrame({ content: 'caf@' }).split('@') as [string, string];
  response.write(Buffer.concat([Buffer.from(before), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(after)]));
  response.write(renderChunkFrame({}, 'stop'));
  response.end('data: [DONE]\n\n');
};

/**
 * An engine that lists `model` and answers every chat request (streamed or not) with a `: x` comment
 * line every `intervalMs`: the connection stays busy, so no idle timeout of the client fires, yet no
 * answer ever comes. Only a time limit of the client's own ends the request; the drip stops by itself
 * after `forMs`, so a client without a working limit ends with the wrong result instead of hanging.
 * Every other route is a 404, as on an engine that has no such endpoint.
 */
export const listModelThenDrip =
  (model: string, options: { intervalMs: number; forMs: number }): ScriptedHandler =>
  async (response, request) => {
    const path = request.path.split('?')[0];
    if (path === '/v1/models') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ object: 'list', data: [{ id: model, object: 'model', owned_by: 'drip' }] }));
      return;
    }
    if (path !== '/v1/chat/completions') {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
      return;
    }
    startSseResponse(response);
    const until = Date.now() + options.forMs;
    while (Date.now() < until && !response.destroyed) {
      response.write(': x\n');
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
    endIfOpen(response, true);
  };

/**
 * Control sequences an engine can hide in any text the bridge prints: a clipboard write (OSC 52: the
 * terminal puts `echo PWNED⏎` on the clipboard), two window-title changes, a cursor move up and a line
 * erase (which would wipe the line printed before), a bell, NUL, a C1 CSI that clears the screen on
 * terminals reading 8-bit controls, DEL and a lone carriage return.
 */
export const TERMINAL_ATTACK = '\u001b]52;c;ZWNobyBQV05FRAo=\u0007\u001b]0;owned\u0007\u001b]2;owned\u001b\\\u001b[1A\u001b[2K\u0000\u009b2J\u007f\rX';

/** The ids and texts the control-sequence engine answers with, each carrying `TERMINAL_ATTACK`. */
export const HOSTILE_ENGINE_TEXT = {
  model: `model${TERMINAL_ATTACK}`,
  version: `0.20.0${TERMINAL_ATTACK}`,
  toolName: `shell${TERMINAL_ATTACK}`,
  callId: `call_${TERMINAL_ATTACK}`,
  /** An update hunk whose line starts with the attack: the verdict quotes that line in its grammar_mismatch warning. */
  patch: `*** Begin Patch\n*** Update File: a.txt\n@@\n${TERMINAL_ATTACK}\n*** End Patch\n`,
} as const;

/**
 * A vLLM look-alike whose every text carries control sequences: its model id (`/v1/models`), its
 * version (`/version`, what the doctor and serve's start-up check read), and on each chat request an
 * `apply_patch` call with an invalid patch and a call to a tool named with the attack, under call ids
 * carrying it too; streamed or as one JSON completion, as asked.
 */
export const answerWithControlSequences: ScriptedHandler = (response, request) => {
  const json = (body: unknown): void => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  if (request.path === '/v1/models') return json({ object: 'list', data: [{ id: HOSTILE_ENGINE_TEXT.model, object: 'model', owned_by: 'vllm', max_model_len: 65_536 }] });
  if (request.path === '/version') return json({ version: HOSTILE_ENGINE_TEXT.version });
  if (request.path !== '/v1/chat/completions') {
    response.writeHead(404, { 'content-type': 'text/plain' });
    return void response.end(`not found${TERMINAL_ATTACK}`);
  }
  const calls = [
    { id: HOSTILE_ENGINE_TEXT.callId, type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: HOSTILE_ENGINE_TEXT.patch }) } },
    { id: `${HOSTILE_ENGINE_TEXT.callId}2`, type: 'function', function: { name: HOSTILE_ENGINE_TEXT.toolName, arguments: '{}' } },
  ];
  if ((request.body as { stream?: unknown } | null)?.stream !== true) {
    return json({ id: 'chatcmpl-hostile', object: 'chat.completion', created: 0, model: HOSTILE_ENGINE_TEXT.model, choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' }] });
  }
  startSseResponse(response);
  response.write(renderChunkFrame({ role: 'assistant', content: null, tool_calls: calls.map((call, index) => ({ index, ...call })) }));
  response.write(renderChunkFrame({}, 'tool_calls'));
  response.end('data: [DONE]\n\n');
};
