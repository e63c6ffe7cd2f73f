import { compileGrammar, type ToolGrammar } from './compile-grammar.ts';
import type { GrammarMatcher } from './grammar-matcher.ts';

/*
 * Compiled matchers per grammar text. Codex resends the same two or three grammars on every
 * request, so the owner (the server, once per process; a translator, once per response when given
 * none) keeps one cache and passes it in: core itself holds no module-level state. The cache also
 * remembers which uncompilable grammars it has already reported, so the warning comes once.
 */

export type ResolvedGrammar =
  | { compiled: true; matcher: GrammarMatcher }
  /** `firstReport` is true only the first time this grammar is resolved: warn then, stay quiet after. */
  | { compiled: false; reason: string; firstReport: boolean };

export interface GrammarCache {
  resolve(grammar: ToolGrammar): ResolvedGrammar;
}

type CacheEntry = { compiled: true; matcher: GrammarMatcher } | { compiled: false; reason: string };

/** A few tools per request, a handful of Codex versions per process: small, and evicting is cheap. */
export const DEFAULT_GRAMMAR_CACHE_ENTRIES = 32;

export function createGrammarCache(options: { maxEntries?: number } = {}): GrammarCache {
  const maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_GRAMMAR_CACHE_ENTRIES);
  // Map iteration order is insertion order: re-inserting on use makes the first key the least recently used.
  const entries = new Map<string, CacheEntry>();
  return {
    resolve(grammar) {
      const key = `${grammar.syntax}\u0000${grammar.definition}`;
      const cached = entries.get(key);
      if (cached !== undefined) {
        entries.delete(key);
        entries.set(key, cached);
        return cached.compiled ? cached : { compiled: false, reason: cached.reason, firstReport: false };
      }
      const result = compileGrammar(grammar);
      const entry: CacheEntry = result.success ? { compiled: true, matcher: result.matcher } : { compiled: false, reason: result.reason };
      entries.set(key, entry);
      if (entries.size > maxEntries) {
        const [oldest] = entries.keys();
        if (oldest !== undefined) entries.delete(oldest);
      }
      return entry.compiled ? entry : { compiled: false, reason: entry.reason, firstReport: true };
    },
  };
}
