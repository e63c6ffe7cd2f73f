import { randomUUID } from 'node:crypto';

/** Ids in the shapes OpenAI uses; Codex only needs them unique. */
export type ItemIdPrefix = 'resp' | 'msg' | 'rs' | 'fc' | 'ctc';

/**
 * 24 hex digits of a random UUID (90 random bits). Node hands out UUIDs from a buffer of entropy
 * it refills in batches, about a tenth of the cost of a `randomBytes` call per id.
 */
function createRandomHex(): string {
  return randomUUID().replaceAll('-', '').slice(0, 24);
}

export function createItemId(prefix: ItemIdPrefix): string {
  return `${prefix}_${createRandomHex()}`;
}

/** Synthesised when an engine sends no tool-call id. */
export function createCallId(): string {
  return `call_${createRandomHex()}`;
}
