/**
 * What the mock model "says" for one request (a turn), and loading a script of turns from JSON.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { MockFailure } from './profiles.ts';

export interface MockToolCall {
  name: string;
  /** A string is sent verbatim as the `arguments` bytes (e.g. invalid JSON); an object is rendered in the profile's byte form. */
  arguments?: string | Record<string, unknown>;
  /**
   * Shorthand for the bridged `{"input": …}` payload: the raw text the model wrote. XML-parser profiles
   * apply their parameter rules to it (one-newline trim, `null` coercion, cut at `</parameter>`).
   */
  input?: string;
  /** Exact streamed `arguments` fragments (the first one rides with the call header where the parser does that). */
  argumentPieces?: readonly string[];
  id?: string;
}

export type MidStreamErrorKind = 'vllm' | 'sglang' | 'llamacpp-2025' | 'llamacpp' | 'ollama' | 'socket-cut';

export interface MockTurn {
  /** A string is split into word-sized deltas; an array gives the exact deltas. */
  reasoning?: string | readonly string[];
  text?: string | readonly string[];
  toolCalls?: MockToolCall[];
  /** The engine's own stop reason (`stop`, `length`, …); each profile maps it as its engine does. */
  finishReason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };

  /* Failure injection. */
  /** Answer with this status instead of a completion (body: `errorBody`, else the profile's envelope). */
  status?: number;
  /** Sent verbatim when a string, else as JSON; with `midStreamError` it replaces the error frame's JSON. */
  errorBody?: unknown;
  headers?: Record<string, string>;
  /** A named failure in the profile's wording (context length, overload, dead engine, unknown model). */
  failure?: MockFailure;
  /** Stream: after the content deltas, end in this engine's mid-stream error shape instead of finishing. */
  midStreamError?: MidStreamErrorKind;
  /** Cut every call's `arguments` after this many characters (code points); the engine stopped for `length`. */
  truncateArgumentsAt?: number;
  /** vLLM: the last arguments fragment rides in the finish chunk (the "remaining arguments" delta). */
  argumentsInFinishChunk?: boolean;
  /** vLLM: the last fragment of call i and the header of call i+1 share one chunk (parallel calls). */
  packParallelCalls?: boolean;

  /* Timing. */
  /** Silent gap after the stream headers (queueing, prefill); for non-stream it delays the whole body. */
  delayBeforeFirstByteMs?: number;
  delayBetweenChunksMs?: number;
  /** Delay before anything is written, headers included. */
  delayBeforeHeadersMs?: number;
}

export const defaultMockTurn: MockTurn = { text: 'mock answer' };

const stringOrPieces = z.union([z.string(), z.array(z.string())]);

/** Loose on purpose: a script file may carry fields newer than this schema. */
const mockTurnSchema = z.looseObject({
  reasoning: stringOrPieces.optional(),
  text: stringOrPieces.optional(),
  toolCalls: z
    .array(
      z.looseObject({
        name: z.string(),
        arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
        input: z.string().optional(),
        argumentPieces: z.array(z.string()).optional(),
        id: z.string().optional(),
      }),
    )
    .optional(),
  finishReason: z.string().optional(),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }).optional(),
  status: z.number().int().optional(),
  errorBody: z.unknown().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  failure: z.enum(['context-length', 'overloaded', 'engine-dead', 'model-not-found']).optional(),
  midStreamError: z.enum(['vllm', 'sglang', 'llamacpp-2025', 'llamacpp', 'ollama', 'socket-cut']).optional(),
  truncateArgumentsAt: z.number().int().nonnegative().optional(),
  argumentsInFinishChunk: z.boolean().optional(),
  packParallelCalls: z.boolean().optional(),
  delayBeforeFirstByteMs: z.number().nonnegative().optional(),
  delayBetweenChunksMs: z.number().nonnegative().optional(),
  delayBeforeHeadersMs: z.number().nonnegative().optional(),
});

export function parseMockScript(value: unknown): MockTurn[] {
  return z.array(mockTurnSchema).parse(value);
}

/** A script file is a JSON array of MockTurn played in order. */
export async function loadMockScript(path: string): Promise<MockTurn[]> {
  const text = await readFile(path, 'utf8');
  return parseMockScript(JSON.parse(text) as unknown);
}

/** Word-sized deltas: "mock answer" → ["mock", " answer"]; whitespace stays attached to the next word. */
export function splitIntoTokens(text: string): string[] {
  if (text === '') return [];
  return text.match(/\s*\S+|\s+/g) ?? [text];
}

export function toPieces(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? splitIntoTokens(value) : [...value];
}
