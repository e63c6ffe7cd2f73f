/**
 * What the mock backend answers. The bridge forwards nothing but the lowered body, so the request
 * names its answer with a marker in the last user message; the bench's mock child reads it.
 */
import type { MockTurn } from '../mock-backend/create-mock-backend.ts';

export type AnswerName = 'short' | 'events-2000' | 'events-2000-paced';

export const ANSWER_NAMES: readonly AnswerName[] = ['short', 'events-2000', 'events-2000-paced'];

const MARKER_PATTERN = /\[\[bench-answer:([a-z0-9-]+)\]\]/;

export function encodeAnswerMarker(name: AnswerName): string {
  return `[[bench-answer:${name}]]`;
}

export function readAnswerMarker(text: string): AnswerName | null {
  const match = MARKER_PATTERN.exec(text);
  const name = match?.[1];
  return name !== undefined && (ANSWER_NAMES as readonly string[]).includes(name) ? (name as AnswerName) : null;
}

/** Events in the long answer; each delta is ` t0000` … ` t1999`, so arrivals can be matched by index. */
export const LONG_ANSWER_EVENTS = 2_000;

export function formatEventToken(index: number): string {
  return ` t${index.toString().padStart(4, '0')}`;
}

/** Finds ` t0123"` (the closing quote of a JSON string) in a frame: one delta per match. */
export const EVENT_TOKEN_PATTERN = / t(\d{4})"/g;

const SHORT_PATCH = '*** Begin Patch\n*** Add File: CHANGELOG.md\n+## Unreleased\n+- Fix the failing module test.\n*** End Patch\n';

/**
 * A typical Codex turn's answer: a sentence, then an apply_patch call (lifted back to a
 * `custom_tool_call` through the progressive input decoder and the grammar check).
 */
const shortTurn: MockTurn = {
  text: 'I will add the changelog entry now.',
  toolCalls: [{ name: 'apply_patch', input: SHORT_PATCH }],
  usage: { prompt_tokens: 12_000, completion_tokens: 60 },
};

const longPieces = Array.from({ length: LONG_ANSWER_EVENTS }, (_, index) => formatEventToken(index));

export function createAnswerTurn(name: AnswerName): MockTurn {
  switch (name) {
    case 'short':
      return shortTurn;
    case 'events-2000':
      // As fast as the mock can write: frames coalesce, which measures the per-event cost in bulk.
      return { text: longPieces, usage: { prompt_tokens: 12_000, completion_tokens: LONG_ANSWER_EVENTS } };
    case 'events-2000-paced':
      // One frame per timer tick, like a model emitting tokens: each frame crosses the bridge alone.
      return { text: longPieces, usage: { prompt_tokens: 12_000, completion_tokens: LONG_ANSWER_EVENTS }, delayBetweenChunksMs: 1 };
    default: {
      const unreachable: never = name;
      throw new Error(`unknown answer ${String(unreachable)}`);
    }
  }
}
