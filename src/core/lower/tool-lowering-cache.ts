import type { BridgeOptions } from '../bridge-options.ts';
import type { ChatTool } from '../chat/chat-completions-api.ts';
import { createJsonText, type JsonText } from '../chat-request-fragments.ts';
import { isSameJsonValue } from '../parse-json.ts';
import type { ToolMap, ToolMapEntry } from '../tool-map.ts';
import { collectChatTools, createToolMap, lowerTools, type GrammarExampleRenderer, type LowerToolsResult, type ToolDeclaration } from './lower-tools.ts';

/*
 * Codex sends the same tool list on every turn of a session (17 kB of it in the bench's code-mode
 * request), and lowering it is a pure function of the declarations and the options. The owner (the
 * server, once per bridge) keeps one cache and passes it in through the lowering context, so core holds
 * no module-level state. A hit skips lowering the tools, building their map and serialising them:
 * their JSON text is kept with the entry and written into the request's bytes (serialise-chat-request.ts).
 *
 * A hit needs declarations equal to the cached ones value for value and key for key, in the same
 * order (the lowered parameters keep the declared key order, so a reordered schema is a different
 * result), and the very same options object (settings that change make a new one). Everything an
 * entry hands out is frozen: a request that tried to change the shared lowering would throw, not
 * leak into the next one.
 *
 * A tool list with U+0000 in any string is lowered but never kept. Every placeholder of a large body's
 * long strings (large-json-strings.ts) starts with one and names a nonce drawn for that body alone, so
 * such a list could never be met again: kept, it would only push out lists that can.
 */

/** A tool list lowered once, with what every request that declares it again can share. */
export interface CachedToolLowering extends LowerToolsResult {
  /** Every tool that goes upstream, in order, when tool_choice keeps them all. */
  readonly chatTools: readonly ChatTool[];
  /** `JSON.stringify(chatTools)`. */
  readonly chatToolsJson: JsonText;
  /** Wire name → tool, for `chatTools`. */
  readonly toolMap: ToolMap;
}

export interface ToolLoweringCache {
  lower(declarations: readonly ToolDeclaration[], options: BridgeOptions, renderExample: GrammarExampleRenderer | null): CachedToolLowering;
}

/** A main session, its sub-agents (other tool lists) and a few Codex versions; evicting is cheap. */
export const DEFAULT_TOOL_LOWERING_CACHE_ENTRIES = 8;

interface Entry {
  declarations: readonly ToolDeclaration[];
  options: BridgeOptions;
  withExamples: boolean;
  lowering: CachedToolLowering;
}

function isSameDeclarationList(left: readonly ToolDeclaration[], right: readonly ToolDeclaration[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) {
    const a = left[index] as ToolDeclaration;
    const b = right[index] as ToolDeclaration;
    if (a.source !== b.source || a.path !== b.path || !isSameJsonValue(a.tool, b.tool)) return false;
  }
  return true;
}

/** Lowered tools and parsed JSON hold no cycles; a constant frozen already (a shared empty schema) still has its children frozen. */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}

/** A Map whose writers throw: Object.freeze does not reach a Map's entries. */
function freezeMap<K, V>(map: Map<K, V>): ReadonlyMap<K, V> {
  const refuse = (): never => {
    throw new TypeError('the cached tool map is shared between requests and cannot change');
  };
  return Object.freeze(Object.assign(map, { set: refuse, delete: refuse, clear: refuse }));
}

function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (typeof value !== 'object' || value === null) return false;
  for (const child of Object.values(value)) if (holdsNul(child)) return true;
  return false;
}

function lowerForCache(declarations: readonly ToolDeclaration[], options: BridgeOptions, renderExample: GrammarExampleRenderer | null): CachedToolLowering {
  const result = lowerTools(declarations, options, renderExample);
  const chatTools = collectChatTools(result.value);
  return { ...result, chatTools, chatToolsJson: createJsonText(chatTools), toolMap: createToolMap(result.value) };
}

/** The lowering made shareable: it and the declarations it was made from can no longer change. */
function freezeEntry(entry: Entry): Entry {
  deepFreeze(entry.declarations);
  const { lowering } = entry;
  deepFreeze([lowering.value, lowering.warnings, lowering.chatTools, lowering.chatToolsJson]);
  for (const mapEntry of lowering.toolMap.values()) deepFreeze(mapEntry);
  return Object.freeze({ ...entry, lowering: Object.freeze({ ...lowering, toolMap: freezeMap(lowering.toolMap as Map<string, ToolMapEntry>) }) });
}

export function createToolLoweringCache(settings: { maxEntries?: number } = {}): ToolLoweringCache {
  const maxEntries = Math.max(1, settings.maxEntries ?? DEFAULT_TOOL_LOWERING_CACHE_ENTRIES);
  // Most recently used first: a session's next turn usually matches the first entry it compares.
  const entries: Entry[] = [];
  return {
    lower(declarations, options, renderExample) {
      const withExamples = renderExample !== null;
      const at = entries.findIndex((entry) => entry.options === options && entry.withExamples === withExamples && isSameDeclarationList(entry.declarations, declarations));
      if (at !== -1) {
        const [entry] = entries.splice(at, 1) as [Entry];
        entries.unshift(entry);
        return entry.lowering;
      }
      // Thrown refusals (a name collision, defer_loading) are not kept: the next request is lowered afresh.
      const lowering = lowerForCache(declarations, options, renderExample);
      if (holdsNul(declarations)) return lowering;
      // The declarations are this request's own parsed tools: the entry compares later requests against them.
      const entry = freezeEntry({ declarations: declarations.map((declaration) => ({ ...declaration })), options, withExamples, lowering });
      entries.unshift(entry);
      if (entries.length > maxEntries) entries.pop();
      return entry.lowering;
    },
  };
}
