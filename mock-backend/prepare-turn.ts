/**
 * Turns a scripted MockTurn into what one engine profile would put on the wire for one request: ids,
 * argument bytes and fragments, `content` next to tool calls and the mapped `finish_reason`.
 */
import { randomInt } from 'node:crypto';
import {
  applyQwenXmlParameterRules,
  renderArgumentBytes,
  splitByCodePoints,
  splitIntoParameterMembers,
  splitLlamacppDiffs,
  splitModelJson,
  truncateCodePoints,
  truncatePieces,
} from './argument-bytes.ts';
import { createAlphanumeric, createHex, getProfileTraits, type EngineProfile, type ProfileTraits, type ReasoningKey } from './profiles.ts';
import { isRecord } from './python-text.ts';
import { toPieces, type MockToolCall, type MockTurn } from './script.ts';

export type ToolChoiceMode = 'auto' | 'required' | 'named' | 'none';

/**
 * vLLM field set by date: `0.10` (≤0.11.0), `interim` (0.11.1–0.15, the builds that send
 * both reasoning keys: `token_ids` but no `prompt_text` or fingerprint), `2026` (U).
 */
export type VllmEra = '0.10' | 'interim' | '2026';

export function findVllmEra(traits: ProfileTraits, reasoningKey: ReasoningKey): VllmEra | null {
  if (traits.family !== 'vllm') return null;
  if (reasoningKey === 'both') return 'interim';
  return traits.vllmBuild === '0.10' ? '0.10' : '2026';
}

/** Everything about the response that does not depend on the scripted turn. */
export interface ResponseContext {
  profile: EngineProfile;
  traits: ProfileTraits;
  reasoningKey: ReasoningKey;
  vllmEra: VllmEra | null;
  model: string;
  created: number;
  completionId: string;
  systemFingerprint: string | null;
  includeUsage: boolean;
  toolChoiceMode: ToolChoiceMode;
  parallelToolCalls: boolean;
  mistralTokenizer: boolean;
  promptTokensEstimate: number;
}

/**
 * How a call's first stream delta looks:
 * `hermes` name entry plus first arguments entry in one chunk (vLLM U); `name-only` header without
 * `arguments` (old hermes); `empty-arguments` header with `arguments:""` (qwen3_coder, harmony, SGLang);
 * `first-piece` header carrying the first fragment (named choice, llama.cpp); `whole` (Ollama).
 */
export type CallLayout = 'hermes' | 'name-only' | 'empty-arguments' | 'first-piece' | 'whole';

export interface PreparedToolCall {
  index: number;
  id: string;
  name: string;
  /** Non-stream `arguments` bytes. */
  arguments: string;
  /** Streamed fragments in order; how the first ones ride depends on `layout`. */
  pieces: string[];
  layout: CallLayout;
}

export interface PreparedTurn {
  reasoningPieces: string[];
  textPieces: string[];
  calls: PreparedToolCall[];
  /** Wire `finish_reason` after the engine's own mapping. */
  finishReason: string;
  usage: { prompt_tokens: number; completion_tokens: number };
  /** Non-stream `content` when calls are present (null / "" / "\n\n" per engine). */
  contentWithCalls: string | null;
  /** Stream: a "\n\n" content delta between the text and the first call (what the model wrote before `<tool_call>`). */
  separatorBeforeCalls: boolean;
  /** vLLM hermes non-stream: invalid JSON arguments make the whole raw output come back as content, no call. */
  hermesFallbackContent: string | null;
}

export function createCompletionId(profile: EngineProfile): string {
  const traits = getProfileTraits(profile);
  switch (traits.family) {
    case 'vllm':
      return traits.vllmBuild === '0.10' ? `chatcmpl-${createHex(32)}` : `chatcmpl-${createHex(16)}`;
    case 'sglang':
      // SGLang uses the bare request id.
      return createHex(32);
    case 'ollama':
      // Ollama's ids are `chatcmpl-<rand.Intn(999)>`: they repeat across responses.
      return `chatcmpl-${randomInt(999)}`;
    case 'llamacpp':
      return `chatcmpl-${createAlphanumeric(32)}`;
    case 'lmstudio':
      return `chatcmpl-${createAlphanumeric(22, 'abcdefghijklmnopqrstuvwxyz0123456789')}`;
    default: {
      const unreachable: never = traits.family;
      throw new Error(`unknown engine family ${String(unreachable)}`);
    }
  }
}

export function createToolCallId(profile: EngineProfile, mistralTokenizer: boolean): string {
  const traits = getProfileTraits(profile);
  if (traits.family === 'vllm') {
    if (mistralTokenizer) return createAlphanumeric(9);
    if (traits.vllmToolParser === 'qwen3coder') return `call_${createHex(24)}`;
    // 32 hex before PR #29375 (Nov 2025), 16 since.
    return `chatcmpl-tool-${createHex(traits.vllmBuild === '0.10' ? 32 : 16)}`;
  }
  if (traits.family === 'sglang') return `call_${createHex(24)}`;
  if (traits.family === 'ollama') return `call_${createAlphanumeric(8, 'abcdefghijklmnopqrstuvwxyz0123456789')}`;
  if (traits.family === 'llamacpp') return createAlphanumeric(32);
  // [inf] LM Studio has been seen with numeric ids.
  return createAlphanumeric(9, '0123456789');
}

export function describeToolChoice(toolChoice: unknown): ToolChoiceMode {
  if (toolChoice === 'none' || toolChoice === 'required') return toolChoice;
  if (isRecord(toolChoice) && isRecord(toolChoice.function)) return 'named';
  return 'auto';
}

function chooseLayout(context: ResponseContext): CallLayout {
  const traits = context.traits;
  if (traits.family === 'vllm') {
    // named/required use structured outputs and bypass the parser.
    if (context.toolChoiceMode === 'named' || context.toolChoiceMode === 'required') return 'first-piece';
    if (traits.vllmToolParser === 'hermes') return 'hermes';
    if (traits.vllmToolParser === 'hermes-legacy') return 'name-only';
    return 'empty-arguments';
  }
  if (traits.family === 'ollama') return 'whole';
  if (traits.family === 'llamacpp') return 'first-piece';
  return 'empty-arguments';
}

function resolveArgumentValue(call: MockToolCall, traits: ProfileTraits, parserBypassed: boolean): unknown {
  if (call.input !== undefined) {
    // Structured outputs (vLLM named/required) never reach the XML parser, so nothing is trimmed.
    if (traits.xmlParameterRules === null || parserBypassed) return { input: call.input };
    return { input: applyQwenXmlParameterRules(call.input, { nullCoercion: traits.xmlParameterRules === 'legacy' }) };
  }
  if (isRecord(call.arguments)) return call.arguments;
  if (call.arguments === undefined && call.argumentPieces === undefined) return {};
  return undefined;
}

function splitDefaultPieces(context: ResponseContext, layout: CallLayout, bytes: string, value: unknown): string[] {
  const traits = context.traits;
  if (layout === 'whole') return [bytes];
  if (layout === 'first-piece' && traits.family === 'llamacpp') return splitLlamacppDiffs(bytes);
  if (layout === 'first-piece') return splitModelJson(bytes, { leadingBrace: true, size: 64 });
  const memberWise = traits.vllmToolParser === 'qwen3coder' || traits.family === 'sglang';
  if (memberWise && isRecord(value)) return splitIntoParameterMembers(value);
  if (traits.family === 'lmstudio') return splitByCodePoints(bytes, 32);
  return splitModelJson(bytes, { leadingBrace: false, size: 64 });
}

function prepareToolCall(context: ResponseContext, call: MockToolCall, index: number, truncateAt: number | undefined): PreparedToolCall {
  const traits = context.traits;
  const layout = chooseLayout(context);
  // Structured outputs (named/required) emit the guided JSON verbatim: Python-spaced, raw UTF-8.
  const forced = traits.family === 'vllm' && layout === 'first-piece';
  const value = resolveArgumentValue(call, traits, forced);
  const rawText = typeof call.arguments === 'string' ? call.arguments : undefined;
  const renderIn = (form: ProfileTraits['nonStreamArgumentForm']): string =>
    rawText ?? (value !== undefined ? renderArgumentBytes(value, form) : (call.argumentPieces ?? []).join(''));
  const nonStreamBytes = renderIn(forced ? 'python-spaced' : traits.nonStreamArgumentForm);
  const streamBytes = renderIn(forced ? 'python-spaced' : traits.streamArgumentForm);
  const pieces = call.argumentPieces !== undefined ? [...call.argumentPieces] : splitDefaultPieces(context, layout, streamBytes, value);
  return {
    index,
    id: call.id ?? createToolCallId(context.profile, context.mistralTokenizer),
    name: call.name,
    arguments: truncateAt === undefined ? nonStreamBytes : truncateCodePoints(nonStreamBytes, truncateAt),
    pieces: truncateAt === undefined ? pieces : truncatePieces(pieces, truncateAt),
    layout,
  };
}

/** Each engine's rule for turning the engine stop reason into the wire `finish_reason`. */
function mapFinishReason(context: ResponseContext, engineReason: string, hasCalls: boolean): string {
  if (!hasCalls) return engineReason;
  if (context.traits.family === 'vllm') {
    if (context.toolChoiceMode === 'named') return 'stop';
    if (context.toolChoiceMode === 'required') return engineReason === 'stop' ? 'tool_calls' : engineReason;
    // The auto parser says tool_calls whenever it parsed a call, even when the engine stopped for length.
    return 'tool_calls';
  }
  // SGLang, Ollama (≥0.32.6), llama.cpp: tool_calls only when the engine stopped normally.
  return engineReason === 'stop' ? 'tool_calls' : engineReason;
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function decideContentWithCalls(context: ResponseContext, text: string, hasReasoning: boolean): string | null {
  const traits = context.traits;
  switch (traits.family) {
    case 'vllm':
      if (context.toolChoiceMode === 'named' || context.toolChoiceMode === 'required') return '';
      if (traits.vllmToolParser === 'openai') return text === '' ? null : text;
      // The raw prefix before `<tool_call>`; qwen3_coder keeps the "\n\n" left after a reasoning block.
      if (text !== '') return `${text}\n\n`;
      return traits.vllmToolParser === 'qwen3coder' && hasReasoning ? '\n\n' : null;
    case 'sglang':
      return text === '' ? '' : `${text}\n\n`;
    case 'ollama':
      return text;
    case 'llamacpp':
      return text;
    case 'lmstudio':
      return text === '' ? null : text;
    default: {
      const unreachable: never = traits.family;
      throw new Error(`unknown engine family ${String(unreachable)}`);
    }
  }
}

export function prepareTurn(context: ResponseContext, turn: MockTurn): PreparedTurn {
  const traits = context.traits;
  const reasoningPieces = toPieces(turn.reasoning);
  const textPieces = toPieces(turn.text);
  const text = textPieces.join('');
  const truncateAt = turn.truncateArgumentsAt;
  let calls = (turn.toolCalls ?? []).map((call, index) => prepareToolCall(context, call, index, truncateAt));
  // Since PR #26233 (Nov 2025) `parallel_tool_calls:false` keeps only the first call.
  if (traits.family === 'vllm' && traits.vllmBuild === '2026' && !context.parallelToolCalls) calls = calls.slice(0, 1);
  const engineReason = turn.finishReason ?? (truncateAt === undefined ? 'stop' : 'length');
  const hasCalls = calls.length > 0;

  const parsedByHermes =
    traits.family === 'vllm' &&
    (traits.vllmToolParser === 'hermes' || traits.vllmToolParser === 'hermes-legacy') &&
    context.toolChoiceMode !== 'named' &&
    context.toolChoiceMode !== 'required';
  const brokenCall = (turn.toolCalls ?? []).find((call) => typeof call.arguments === 'string' && !isJsonText(call.arguments));
  const hermesFallbackContent =
    parsedByHermes && brokenCall !== undefined && truncateAt === undefined
      ? `${text}${(turn.toolCalls ?? [])
          .map((call) => `<tool_call>\n{"name": ${JSON.stringify(call.name)}, "arguments": ${typeof call.arguments === 'string' ? call.arguments : '{}'}}\n</tool_call>`)
          .join('\n')}`
      : null;

  const separatorFamilies = traits.vllmToolParser === 'hermes' || traits.vllmToolParser === 'hermes-legacy' || traits.vllmToolParser === 'qwen3coder';
  const completionTokens =
    1 + reasoningPieces.length + textPieces.length + calls.reduce((total, call) => total + Math.max(1, call.pieces.length), 0);
  return {
    reasoningPieces,
    textPieces,
    calls,
    finishReason: mapFinishReason(context, engineReason, hasCalls),
    usage: turn.usage ?? { prompt_tokens: context.promptTokensEstimate, completion_tokens: completionTokens },
    contentWithCalls: hasCalls ? decideContentWithCalls(context, text, reasoningPieces.length > 0) : null,
    separatorBeforeCalls:
      hasCalls && separatorFamilies && context.toolChoiceMode === 'auto' && (text !== '' || reasoningPieces.length > 0),
    hermesFallbackContent,
  };
}
