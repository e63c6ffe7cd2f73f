/**
 * The core alone, in this process: what the bridge does to a request body (JSON parse, lower,
 * serialise, with a large body's long strings carried as bytes as the server carries them) and to an
 * answer (SSE decode, chunk parse, translate, SSE encode), with no network.
 */
import { resolveBridgeOptions } from '../src/core/bridge-options.ts';
import { createGrammarCache } from '../src/core/grammar/grammar-cache.ts';
import { convertResponsesRequestToChatRequest, type LoweredRequest } from '../src/core/lower/convert-responses-request-to-chat-request.ts';
import { encodeChatRequest, parseRequestBody } from '../src/core/outbound/outbound-encoding.ts';
import { parseJson } from '../src/core/parse-json.ts';
import { encodeSseEvent } from '../src/core/sse/sse-encoder.ts';
import { ChatSsePump } from '../src/core/stream/chat-sse-pump.ts';
import { ChatStreamTranslator } from '../src/core/stream/chat-stream-to-responses-events.ts';
import { createWarningLedger } from '../src/core/warnings.ts';
import { monotonicMilliseconds } from './child-protocol.ts';
import { summarize, type Summary } from './statistics.ts';

const options = resolveBridgeOptions();
// One ledger and one grammar cache per process, as the server keeps them.
const ledger = createWarningLedger();
const grammarCache = createGrammarCache();

export function lowerRequestBody(text: string): LoweredRequest {
  const parsed = parseJson(text);
  if (!parsed.success) throw new Error('bench request is not JSON');
  return convertResponsesRequestToChatRequest(parsed.value, options, ledger, { grammarCache });
}

/** Lifts a whole backend SSE answer through the exchange's own pump; returns the bytes sent toward Codex. */
export function liftAnswer(answerSse: Buffer, lowered: LoweredRequest): number {
  const translator = new ChatStreamTranslator({ responseId: 'resp_bench', model: 'qwen3-coder', createdAt: 0, toolMap: lowered.toolMap, grammarCache });
  const pump = new ChatSsePump(translator);
  let bytes = 0;
  const write = (events: ReturnType<ChatStreamTranslator['push']>): void => {
    let text = '';
    for (const event of events) text += encodeSseEvent(event);
    bytes += text.length;
  };
  write(translator.start());
  write(pump.push(answerSse));
  write(pump.end());
  if (translator.finalResponse?.status !== 'completed') throw new Error(`bench lift ended ${translator.finalResponse?.status ?? 'without a terminal event'}`);
  return bytes;
}

export interface CoreTimings {
  parse: Summary;
  lower: Summary;
  serialise: Summary;
  /** parse + lower + serialise: everything done to the body before it goes upstream. */
  requestTotal: Summary;
  lift: Summary;
  /** lower + lift: the core conversion proper, without the JSON text on either side. */
  lowerAndLift: Summary;
}

export function measureCoreConversion(requestText: string, answerSse: Buffer, iterations: number, warmup: number): CoreTimings {
  const samples = { parse: [] as number[], lower: [] as number[], serialise: [] as number[], requestTotal: [] as number[], lift: [] as number[], lowerAndLift: [] as number[] };
  // The server reads bytes and parses them along the outbound encoding's one path (outbound-encoding.ts).
  const requestBytes = Buffer.from(requestText);
  for (let iteration = 0; iteration < warmup + iterations; iteration++) {
    const started = monotonicMilliseconds();
    const parsed = parseRequestBody(requestBytes, 0);
    const parsedAt = monotonicMilliseconds();
    const lowered = convertResponsesRequestToChatRequest(parsed.body, options, ledger, { grammarCache });
    const loweredAt = monotonicMilliseconds();
    const serialised = encodeChatRequest(lowered.chatRequest, { byParts: false, largeStrings: parsed.largeStrings });
    const serialisedAt = monotonicMilliseconds();
    liftAnswer(answerSse, lowered);
    const liftedAt = monotonicMilliseconds();
    if (serialised.body.length === 0) throw new Error('empty lowered request');
    if (iteration < warmup) continue;
    samples.parse.push(parsedAt - started);
    samples.lower.push(loweredAt - parsedAt);
    samples.serialise.push(serialisedAt - loweredAt);
    samples.requestTotal.push(serialisedAt - started);
    samples.lift.push(liftedAt - serialisedAt);
    samples.lowerAndLift.push(loweredAt - parsedAt + (liftedAt - serialisedAt));
  }
  return {
    parse: summarize(samples.parse),
    lower: summarize(samples.lower),
    serialise: summarize(samples.serialise),
    requestTotal: summarize(samples.requestTotal),
    lift: summarize(samples.lift),
    lowerAndLift: summarize(samples.lowerAndLift),
  };
}

/** Lift cost per event of a long answer (core only). */
export function measureLiftPerEvent(answerSse: Buffer, lowered: LoweredRequest, events: number, iterations: number): Summary {
  const samples: number[] = [];
  for (let iteration = 0; iteration < iterations + 2; iteration++) {
    const started = monotonicMilliseconds();
    liftAnswer(answerSse, lowered);
    if (iteration >= 2) samples.push((monotonicMilliseconds() - started) / events);
  }
  return summarize(samples);
}

/**
 * A fixed CPU workload (JSON round trips of the Codex request and a little arithmetic), timed so runs
 * on differently loaded machines can be compared: the figures scale with it.
 */
export function measureCalibration(requestText: string): number {
  const started = monotonicMilliseconds();
  let total = 0;
  for (let round = 0; round < 40; round++) {
    const parsed = parseJson(requestText);
    total += JSON.stringify(parsed.success ? parsed.value : null).length;
  }
  for (let index = 0; index < 5_000_000; index++) total += index % 7;
  if (total < 0) throw new Error('unreachable');
  return monotonicMilliseconds() - started;
}

export interface PrefixReuse {
  sharedBytes: number;
  firstBytes: number;
  fraction: number;
}

/**
 * How much of a turn's lowered request the next turn sends again byte for byte: what an engine's
 * prefix cache (vLLM, SGLang, llama.cpp) can reuse instead of computing it again. The next turn is
 * the same request with the model's answer and a new user message appended, as Codex sends it. An
 * engine's chat template renders the tools first, then the messages in order, so the figure is the
 * shared prefix of the tools' and the messages' JSON text, over the first turn's (the request's other
 * fields are settings, not prompt). The engine tier measures the real cache on llama-server.
 */
export function measurePrefixReuse(requestText: string): PrefixReuse {
  const request = JSON.parse(requestText) as { input: unknown[] };
  const next = {
    ...request,
    input: [
      ...request.input,
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done: the patch is applied and the tests pass.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and one more thing' }] },
    ],
  };
  const prompt = (text: string): Buffer => {
    const parsed = parseRequestBody(Buffer.from(text), 0);
    const lowered = convertResponsesRequestToChatRequest(parsed.body, options, ledger, { grammarCache });
    const parts = encodeChatRequest(lowered.chatRequest, { byParts: true, largeStrings: parsed.largeStrings }).readParts?.();
    if (parts === undefined) throw new Error('the request was not encoded by parts');
    return Buffer.from((parts.tools ?? '') + parts.messages.join(','));
  };
  const first = prompt(requestText);
  const second = prompt(JSON.stringify(next));
  let shared = 0;
  const limit = Math.min(first.length, second.length);
  while (shared < limit && first[shared] === second[shared]) shared++;
  return { sharedBytes: shared, firstBytes: first.length, fraction: shared / first.length };
}
