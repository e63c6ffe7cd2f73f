import { createHash } from 'node:crypto';

/**
 * The per-request reverse tool map: lowering returns it, lifting takes it.
 * Lifting decides "custom or function?" and restores `namespace` from the returned wire name alone.
 */
export type ToolKind = 'function' | 'custom';

export interface ToolMapEntry {
  /** Name the backend sees (namespace joined with `__`, shortened past 64 characters). */
  wireName: string;
  /** Bare name as Codex declared it. */
  name: string;
  /** Namespace Codex declared the tool in, restored on lift; null for top-level tools. */
  namespace: string | null;
  kind: ToolKind;
  /** The custom tool's declared grammar, kept for grammar-aware checks at lift time. */
  grammar: { syntax: string; definition: string } | null;
  /** Code mode's `exec` declares `tools.apply_patch(input)` among its nested tools. */
  execAppliesPatches?: boolean;
  /** Set when the grammar went to the engine as a pattern to enforce: a mismatch then means the engine did not. */
  enforcedPattern?: true;
}

export type ToolMap = ReadonlyMap<string, ToolMapEntry>;

export const NAMESPACE_SEPARATOR = '__';
/** OpenAI-compatible servers and many chat templates cap function names at 64 characters. */
export const MAX_WIRE_NAME_LENGTH = 64;

/**
 * Deterministic, stateless: a replayed call in a later request maps to the same wire name as the
 * tool declared in that request, even when the name had to be shortened.
 */
export function toWireName(namespace: string | null | undefined, name: string): string {
  const joined = namespace ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
  if (joined.length <= MAX_WIRE_NAME_LENGTH) return joined;
  const hash = createHash('sha256').update(joined).digest('hex').slice(0, 8);
  return `${joined.slice(0, MAX_WIRE_NAME_LENGTH - hash.length - 1)}_${hash}`;
}
