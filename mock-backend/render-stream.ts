/**
 * SSE chunk sequences per engine (vLLM, SGLang, Ollama, llama.cpp, LM
 * Studio) and their mid-stream error shapes. Key order matters: it is part of what the bridge must
 * tolerate, so every object below is built in the engine's own field order.
 */
import { renderWireJson } from './profiles.ts';
import { renderPythonJsonDumps } from './python-text.ts';
import type { PreparedToolCall, PreparedTurn, ResponseContext } from './prepare-turn.ts';
import type { MidStreamErrorKind } from './script.ts';

export interface RenderedStream {
  /** First chunk plus the content, reasoning and tool-call deltas: what a mid-stream error still lets through. */
  bodyFrames: string[];
  /** Finish chunk, usage chunk (when requested) and the end marker. */
  endFrames: string[];
}

type Delta = Record<string, unknown>;

const doneFrame = 'data: [DONE]\n\n';
/** 2025 llama-server builds wrote `data: [DONE]` with a single newline; current ones end it with a blank line like everyone. */
const llamacpp2025DoneFrame = 'data: [DONE]\n';

function renderDataFrame(context: ResponseContext, value: unknown): string {
  return `data: ${renderWireJson(context.profile, value)}\n\n`;
}

function createHeaderEntry(call: PreparedToolCall, argumentsText: string | undefined): Delta {
  const functionPart: Delta = { name: call.name };
  if (argumentsText !== undefined) functionPart.arguments = argumentsText;
  return { id: call.id, type: 'function', index: call.index, function: functionPart };
}

function createPieceEntry(call: PreparedToolCall, piece: string): Delta {
  return { index: call.index, function: { arguments: piece } };
}

/** The `tool_calls` deltas of one call in vLLM's `id, type, index, function` order, per layout. */
function createVllmCallDeltas(call: PreparedToolCall): Delta[] {
  const [firstPiece, ...laterPieces] = call.pieces;
  const pieceDeltas = (pieces: readonly string[]): Delta[] => pieces.map((piece) => ({ tool_calls: [createPieceEntry(call, piece)] }));
  switch (call.layout) {
    case 'hermes': {
      // hermes at U: the name entry and the first arguments entry for the same index share one chunk.
      const entries = [createHeaderEntry(call, undefined)];
      if (firstPiece !== undefined) entries.push(createPieceEntry(call, firstPiece));
      return [{ tool_calls: entries }, ...pieceDeltas(laterPieces)];
    }
    case 'name-only':
      return [{ tool_calls: [createHeaderEntry(call, undefined)] }, ...pieceDeltas(call.pieces)];
    case 'empty-arguments':
      return [{ tool_calls: [createHeaderEntry(call, '')] }, ...pieceDeltas(call.pieces)];
    case 'first-piece':
      return [{ tool_calls: [createHeaderEntry(call, firstPiece ?? '')] }, ...pieceDeltas(laterPieces)];
    case 'whole':
      return [{ tool_calls: [createHeaderEntry(call, call.pieces.join(''))] }];
    default: {
      const unreachable: never = call.layout;
      throw new Error(`unknown layout ${String(unreachable)}`);
    }
  }
}

function mergeToolCallDeltas(left: Delta, right: Delta): Delta {
  return { tool_calls: [...(left.tool_calls as unknown[]), ...(right.tool_calls as unknown[])] };
}

function renderVllmStream(context: ResponseContext, turn: PreparedTurn, options: { argumentsInFinishChunk: boolean; packParallelCalls: boolean }): RenderedStream {
  const is2026 = context.vllmEra === '2026';
  const both = context.reasoningKey === 'both';
  const base = (): Delta => ({ id: context.completionId, object: 'chat.completion.chunk', created: context.created, model: context.model });
  // `token_ids:null` on deltas since ~Oct 2025; `prompt_text` only in 2026 builds.
  const tokenIds: Delta = context.vllmEra === '0.10' ? {} : { token_ids: null };
  const contentDelta = (text: string): Delta => (both ? { content: text, reasoning_content: null } : { content: text });
  const reasoningDelta = (text: string): Delta => {
    if (context.reasoningKey === 'both') return { reasoning: text, reasoning_content: text };
    return { [context.reasoningKey]: text };
  };

  const first = {
    ...base(),
    choices: [{ index: 0, delta: { role: 'assistant', content: '', ...(both ? { reasoning_content: null } : {}) }, logprobs: null, finish_reason: null }],
    prompt_token_ids: null,
    ...(is2026 ? { prompt_text: null } : {}),
  };
  const deltas: Delta[] = [...turn.reasoningPieces.map(reasoningDelta), ...turn.textPieces.map(contentDelta)];
  if (turn.separatorBeforeCalls) deltas.push(contentDelta('\n\n'));

  const callGroups: Delta[][] = [];
  for (const group of turn.calls.map(createVllmCallDeltas)) {
    const previous = callGroups[callGroups.length - 1];
    const tail = options.packParallelCalls ? previous?.pop() : undefined;
    const [head, ...rest] = group;
    if (previous !== undefined && tail !== undefined && head !== undefined) {
      // Several tokens in one engine step: the tail of call i and the header of call i+1 share a chunk.
      previous.push(mergeToolCallDeltas(tail, head), ...rest);
    } else {
      callGroups.push(group);
    }
  }
  const flatCallDeltas = callGroups.flat();
  let finishDelta: Delta = turn.calls.length > 0 ? {} : contentDelta('');
  const lastCallDelta = flatCallDeltas[flatCallDeltas.length - 1];
  const isPieceOnly = (delta: Delta): boolean =>
    Array.isArray(delta.tool_calls) && delta.tool_calls.every((entry) => typeof entry === 'object' && entry !== null && !('id' in entry));
  if (options.argumentsInFinishChunk && lastCallDelta !== undefined && isPieceOnly(lastCallDelta)) {
    // The "remaining arguments" delta computed at finish rides in the finish chunk.
    finishDelta = flatCallDeltas.pop() ?? {};
  }
  deltas.push(...flatCallDeltas);

  const finish = {
    ...base(),
    choices: [{ index: 0, delta: finishDelta, logprobs: null, finish_reason: turn.finishReason, stop_reason: null, ...tokenIds }],
    ...(context.systemFingerprint !== null && !context.includeUsage ? { system_fingerprint: context.systemFingerprint } : {}),
  };
  const endFrames = [renderDataFrame(context, finish)];
  if (context.includeUsage) {
    const usage = {
      ...base(),
      choices: [],
      usage: {
        prompt_tokens: turn.usage.prompt_tokens,
        total_tokens: turn.usage.prompt_tokens + turn.usage.completion_tokens,
        completion_tokens: turn.usage.completion_tokens,
      },
      // The reference captures carry the fingerprint on a text answer's usage chunk but not after tool calls.
      ...(context.systemFingerprint !== null && turn.calls.length === 0 ? { system_fingerprint: context.systemFingerprint } : {}),
    };
    endFrames.push(renderDataFrame(context, usage));
  }
  endFrames.push(doneFrame);
  return {
    bodyFrames: [
      renderDataFrame(context, first),
      ...deltas.map((delta) => renderDataFrame(context, { ...base(), choices: [{ index: 0, delta, logprobs: null, finish_reason: null, ...tokenIds }] })),
    ],
    endFrames,
  };
}

/** SGLang: first chunk trimmed, later chunks dumped with every field; later tool deltas carry `"id":null,"name":null`. */
function renderSglangStream(context: ResponseContext, turn: PreparedTurn): RenderedStream {
  const base = (): Delta => ({ id: context.completionId, object: 'chat.completion.chunk', created: context.created, model: context.model });
  const chunk = (delta: Delta, finishReason: string | null): Delta => ({
    ...base(),
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason, matched_stop: null }],
    usage: null,
  });
  const fullDelta = (fields: Delta): Delta => ({ role: null, content: null, reasoning_content: null, tool_calls: null, ...fields });
  const first = { ...base(), choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null, matched_stop: null }] };

  const textPieces = [...turn.textPieces];
  if (turn.calls.length > 0 && textPieces.length > 0) textPieces[textPieces.length - 1] += '\n\n';
  const deltas: Delta[] = [
    ...turn.reasoningPieces.map((piece) => fullDelta({ reasoning_content: piece })),
    ...textPieces.map((piece) => fullDelta({ content: piece })),
  ];
  for (const call of turn.calls) {
    deltas.push(fullDelta({ tool_calls: [{ id: call.id, index: call.index, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of call.pieces) {
      deltas.push(fullDelta({ tool_calls: [{ id: null, index: call.index, type: 'function', function: { name: null, arguments: piece } }] }));
    }
  }
  const endFrames = [renderDataFrame(context, chunk({}, turn.finishReason))];
  if (context.includeUsage) {
    const usage = {
      ...base(),
      choices: [],
      usage: {
        prompt_tokens: turn.usage.prompt_tokens,
        total_tokens: turn.usage.prompt_tokens + turn.usage.completion_tokens,
        completion_tokens: turn.usage.completion_tokens,
        prompt_tokens_details: null,
        reasoning_tokens: turn.reasoningPieces.length,
      },
    };
    endFrames.push(renderDataFrame(context, usage));
  }
  endFrames.push(doneFrame);
  return {
    bodyFrames: [renderDataFrame(context, first), ...deltas.map((delta) => renderDataFrame(context, chunk(delta, null)))],
    endFrames,
  };
}

/** Ollama ≥0.32.6: role only on chunk 1, each call whole in one delta, separate finish chunk, Go-escaped JSON. */
function renderOllamaStream(context: ResponseContext, turn: PreparedTurn): RenderedStream {
  const chunk = (delta: Delta, finishReason: string | null): Delta => ({
    id: context.completionId,
    object: 'chat.completion.chunk',
    created: context.created,
    model: context.model,
    system_fingerprint: 'fp_ollama',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const deltas: Delta[] = [
    ...turn.reasoningPieces.map((piece) => ({ reasoning: piece })),
    ...turn.textPieces.map((piece) => ({ content: piece })),
    ...turn.calls.map((call) => ({
      tool_calls: [{ id: call.id, index: call.index, type: 'function', function: { name: call.name, arguments: call.pieces.join('') } }],
    })),
  ];
  const [firstDelta, ...laterDeltas] = deltas.length > 0 ? deltas : [{ content: '' }];
  const bodyFrames = [
    renderDataFrame(context, chunk({ role: 'assistant', ...firstDelta }, null)),
    ...laterDeltas.map((delta) => renderDataFrame(context, chunk(delta, null))),
  ];
  const endFrames = [renderDataFrame(context, chunk({}, turn.finishReason))];
  if (context.includeUsage) {
    endFrames.push(
      renderDataFrame(context, {
        id: context.completionId,
        object: 'chat.completion.chunk',
        created: context.created,
        model: context.model,
        system_fingerprint: 'fp_ollama',
        choices: [],
        usage: {
          prompt_tokens: turn.usage.prompt_tokens,
          completion_tokens: turn.usage.completion_tokens,
          total_tokens: turn.usage.prompt_tokens + turn.usage.completion_tokens,
        },
      }),
    );
  }
  endFrames.push(doneFrame);
  return { bodyFrames, endFrames };
}

/** Timings llama-server reports next to usage; the values only need to look plausible. */
export function createLlamacppTimings(promptTokens: number, completionTokens: number): Delta {
  const promptMs = Math.max(1, promptTokens * 0.25);
  const predictedMs = Math.max(1, completionTokens * 12.5);
  return {
    cache_n: 0,
    prompt_n: promptTokens,
    prompt_ms: promptMs,
    prompt_per_token_ms: promptMs / Math.max(1, promptTokens),
    prompt_per_second: (1000 * promptTokens) / promptMs,
    predicted_n: completionTokens,
    predicted_ms: predictedMs,
    predicted_per_token_ms: predictedMs / Math.max(1, completionTokens),
    predicted_per_second: (1000 * completionTokens) / predictedMs,
  };
}

/** llama-server's usage object; the prompt tokens it found in its prefix cache are left at 0 here. */
export function createLlamacppUsage(turn: PreparedTurn): Delta {
  return {
    completion_tokens: turn.usage.completion_tokens,
    prompt_tokens: turn.usage.prompt_tokens,
    total_tokens: turn.usage.prompt_tokens + turn.usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: 0 },
  };
}

/**
 * llama-server: keys `choices, created, id, model, system_fingerprint, object`; first delta
 * `content:null`; a separate finish chunk (`delta:{}`) that carries `timings`, or, with include_usage,
 * a `choices:[]` usage chunk after it that carries them instead; `[DONE]` with a blank line.
 */
function renderLlamacppStream(context: ResponseContext, turn: PreparedTurn): RenderedStream {
  const tail = (): Delta => ({
    created: context.created,
    id: context.completionId,
    model: context.model,
    system_fingerprint: context.systemFingerprint,
    object: 'chat.completion.chunk',
  });
  const chunk = (delta: Delta, finishReason: string | null): Delta => ({
    choices: [{ finish_reason: finishReason, index: 0, delta }],
    ...tail(),
  });
  const deltas: Delta[] = [
    { role: 'assistant', content: null },
    ...turn.reasoningPieces.map((piece) => ({ reasoning_content: piece })),
    ...turn.textPieces.map((piece) => ({ content: piece })),
  ];
  for (const call of turn.calls) {
    const [firstPiece, ...laterPieces] = call.pieces;
    deltas.push({
      tool_calls: [{ index: call.index, id: call.id, type: 'function', function: { name: call.name, arguments: firstPiece ?? '' } }],
    });
    for (const piece of laterPieces) deltas.push({ tool_calls: [{ index: call.index, function: { arguments: piece } }] });
  }
  const timings = createLlamacppTimings(turn.usage.prompt_tokens, turn.usage.completion_tokens);
  const finish = chunk({}, turn.finishReason);
  const endFrames = [renderDataFrame(context, context.includeUsage ? finish : { ...finish, timings })];
  if (context.includeUsage) {
    endFrames.push(renderDataFrame(context, { choices: [], ...tail(), usage: createLlamacppUsage(turn), timings }));
  }
  endFrames.push(doneFrame);
  return { bodyFrames: deltas.map((delta) => renderDataFrame(context, chunk(delta, null))), endFrames };
}

/** LM Studio [inf]: OpenAI-style chunks, header with `arguments:""`, separate finish chunk. */
function renderLmstudioStream(context: ResponseContext, turn: PreparedTurn): RenderedStream {
  const base = (): Delta => ({
    id: context.completionId,
    object: 'chat.completion.chunk',
    created: context.created,
    model: context.model,
    system_fingerprint: context.model,
  });
  const chunk = (delta: Delta, finishReason: string | null): Delta => ({
    ...base(),
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const deltas: Delta[] = [
    { role: 'assistant', content: '' },
    ...turn.reasoningPieces.map((piece) => ({ [context.reasoningKey === 'reasoning' ? 'reasoning' : 'reasoning_content']: piece })),
    ...turn.textPieces.map((piece) => ({ content: piece })),
  ];
  for (const call of turn.calls) {
    deltas.push({ tool_calls: [{ index: call.index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
    for (const piece of call.pieces) deltas.push({ tool_calls: [{ index: call.index, type: 'function', function: { arguments: piece } }] });
  }
  const endFrames = [renderDataFrame(context, chunk({}, turn.finishReason))];
  if (context.includeUsage) {
    endFrames.push(
      renderDataFrame(context, {
        ...base(),
        choices: [],
        usage: {
          prompt_tokens: turn.usage.prompt_tokens,
          completion_tokens: turn.usage.completion_tokens,
          total_tokens: turn.usage.prompt_tokens + turn.usage.completion_tokens,
        },
      }),
    );
  }
  endFrames.push(doneFrame);
  return { bodyFrames: deltas.map((delta) => renderDataFrame(context, chunk(delta, null))), endFrames };
}

export interface StreamRenderOptions {
  argumentsInFinishChunk?: boolean;
  packParallelCalls?: boolean;
}

export function renderChatStream(context: ResponseContext, turn: PreparedTurn, options: StreamRenderOptions = {}): RenderedStream {
  const family = context.traits.family;
  switch (family) {
    case 'vllm':
      return renderVllmStream(context, turn, {
        argumentsInFinishChunk: options.argumentsInFinishChunk === true,
        packParallelCalls: options.packParallelCalls === true,
      });
    case 'sglang':
      return renderSglangStream(context, turn);
    case 'ollama':
      return renderOllamaStream(context, turn);
    case 'llamacpp':
      return renderLlamacppStream(context, turn);
    case 'lmstudio':
      return renderLmstudioStream(context, turn);
    default: {
      const unreachable: never = family;
      throw new Error(`unknown engine family ${String(unreachable)}`);
    }
  }
}

export interface RenderedStreamFailure {
  frames: string[];
  /** Destroy the socket after writing (a cut mid-event) instead of ending the response cleanly. */
  cutSocket: boolean;
}

/**
 * The tail of a stream that fails after the 200. `errorBody` replaces the error JSON;
 * `nextFrame` is the frame a socket cut interrupts halfway.
 */
export function renderMidStreamError(
  kind: MidStreamErrorKind,
  context: ResponseContext,
  errorBody: unknown,
  nextFrame: string,
): RenderedStreamFailure {
  switch (kind) {
    case 'vllm': {
      // Rendered by Python's default json.dumps: spaced separators and ASCII escapes.
      const body = errorBody ?? { error: { message: 'Internal server error', type: 'InternalServerError', param: null, code: 500 } };
      return { frames: [`data: ${renderPythonJsonDumps(body, { ensureAscii: true })}\n\n`, doneFrame], cutSocket: false };
    }
    case 'sglang': {
      const body = errorBody ?? { object: 'error', message: 'Internal server error', type: 'InternalServerError', param: null, code: 500 };
      return { frames: [`data: ${JSON.stringify(body)}\n\n`, doneFrame], cutSocket: false };
    }
    case 'llamacpp-2025': {
      // A non-standard SSE field named `error:`: standard readers drop it and see an empty success.
      const body = errorBody ?? {
        code: 400,
        message: 'the request exceeds the available context size. try increasing the context size or enable context shift',
        type: 'invalid_request_error',
      };
      return { frames: [`error: ${JSON.stringify(body)}\n\n`, llamacpp2025DoneFrame], cutSocket: false };
    }
    case 'llamacpp': {
      const body = errorBody ?? { error: { code: 500, message: 'Internal server error', type: 'server_error' } };
      return { frames: [`data: ${JSON.stringify(body)}\n\n`], cutSocket: false };
    }
    case 'ollama': {
      // Ollama swallows the error into an empty delta and ends without finish chunk or [DONE] [inf].
      const chunk = {
        id: context.completionId,
        object: 'chat.completion.chunk',
        created: context.created,
        model: context.model,
        system_fingerprint: 'fp_ollama',
        choices: [{ index: 0, delta: { content: '' }, finish_reason: null }],
      };
      return { frames: [`data: ${renderWireJson('ollama', chunk)}\n\n`], cutSocket: false };
    }
    case 'socket-cut': {
      const characters = Array.from(nextFrame);
      return { frames: [characters.slice(0, Math.max(1, Math.floor(characters.length / 2))).join('')], cutSocket: true };
    }
    default: {
      const unreachable: never = kind;
      throw new Error(`unknown mid-stream error ${String(unreachable)}`);
    }
  }
}
