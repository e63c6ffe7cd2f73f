/**
 * Test helpers for reading what the mock (or an engine) streamed. Deliberately raw: the frames keep
 * their field names (`data`, `error`, …) so tests can assert on non-standard ones.
 */

export interface SseFrame {
  field: string;
  value: string;
}

/** Splits a complete SSE body into `field: value` frames; a last frame without a blank line still counts. */
export function readSseFrames(text: string): SseFrame[] {
  return text
    .split('\n\n')
    .map((block) => block.replace(/\n$/, ''))
    .filter((block) => block !== '')
    .map((block) => {
      const colon = block.indexOf(':');
      return { field: block.slice(0, colon), value: block.slice(colon + 1).replace(/^ /, '') };
    });
}

/** The JSON payloads of the `data:` frames, `[DONE]` excluded. */
export function readSseChunks(text: string): Array<Record<string, unknown>> {
  return readSseFrames(text)
    .filter((frame) => frame.field === 'data' && frame.value !== '[DONE]')
    .map((frame) => JSON.parse(frame.value) as Record<string, unknown>);
}

interface ToolCallDelta {
  index?: number;
  function?: { arguments?: string | null };
}

/** Concatenated `function.arguments` fragments per tool-call index, merged by index as a client must. */
export function collectStreamedArguments(chunks: ReadonlyArray<Record<string, unknown>>): Map<number, string> {
  const collected = new Map<number, string>();
  for (const chunk of chunks) {
    const choices = (chunk.choices ?? []) as Array<{ delta?: { tool_calls?: ToolCallDelta[] | null } }>;
    for (const choice of choices) {
      for (const toolCall of choice.delta?.tool_calls ?? []) {
        const index = toolCall.index ?? 0;
        collected.set(index, (collected.get(index) ?? '') + (toolCall.function?.arguments ?? ''));
      }
    }
  }
  return collected;
}

/** Replaces what differs per run (ids, timestamps, fingerprints) so bodies compare with reference files. */
export function normalizeVolatileFields(text: string): string {
  return text
    .replace(/"id":"[^"]*"/g, '"id":"<id>"')
    .replace(/"created":\d+/g, '"created":0')
    .replace(/"system_fingerprint":"[^"]*"/g, '"system_fingerprint":"<fingerprint>"');
}
