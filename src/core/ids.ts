import { randomUUID } from 'node:crypto';

/** Ids in the shapes OpenAI uses; Codex only needs them unique. */
export type ItemIdPrefix = 'resp' | 'msg' | 'rs' | 'fc' | 'ctc';

/**
 * 24 random hex digits (96 bits). Taken from a v4 UUID's fully random groups rather than
 * `randomBytes(12)`: Node serves `randomUUID` from a cached batch of entropy, so an id costs no call
 * into OpenSSL (≈1 µs instead of ≈12 µs here, several ids per request).
 */
function createRandomHex(): string {
  const uuid = randomUUID();
  // xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx: groups 1, 2 and 5 carry no version or variant bits.
  return `${uuid.slice(0, 8)}${uuid.slice(9, 13)}${uuid.slice(24)}`;
}

export function createItemId(prefix: ItemIdPrefix): string {
  return `${prefix}_${createRandomHex()}`;
}

/** Synthesised when an engine sends no tool-call id. */
export function createCallId(): string {
  return `call_${createRandomHex()}`;
}
