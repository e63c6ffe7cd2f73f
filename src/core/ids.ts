import { randomBytes } from 'node:crypto';

/** Ids in the shapes OpenAI uses; Codex only needs them unique (codex-wire.md §8 rule 4). */
export type ItemIdPrefix = 'resp' | 'msg' | 'rs' | 'fc' | 'ctc';

export function createItemId(prefix: ItemIdPrefix): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/** Synthesised when an engine sends no tool-call id (bridge-rules.md §5.2). */
export function createCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}
