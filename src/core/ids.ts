import { randomBytes } from 'node:crypto';

/** Ids in the shapes OpenAI uses; Codex only needs them unique. */
export type ItemIdPrefix = 'resp' | 'msg' | 'rs' | 'fc' | 'ctc';

/** 24 random hex digits (96 bits). */
function createRandomHex(): string {
  return randomBytes(12).toString('hex');
}

export function createItemId(prefix: ItemIdPrefix): string {
  return `${prefix}_${createRandomHex()}`;
}

/** Synthesised when an engine sends no tool-call id. */
export function createCallId(): string {
  return `call_${createRandomHex()}`;
}
