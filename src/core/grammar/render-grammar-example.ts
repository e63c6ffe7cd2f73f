import type { ToolGrammar } from './compile-grammar.ts';
import { createGrammarCache, type GrammarCache } from './grammar-cache.ts';

/*
 * A short valid payload for a custom tool, for the lowered description (BridgeOptions.grammarExamples):
 * small models copy an example far more reliably than they read a Lark grammar. Only the two tools
 * Codex declares are known; each example is checked against the grammar actually sent, so a future
 * grammar change makes this return null instead of teaching the model something invalid.
 */

const PATCH_EXAMPLE = [
  '*** Begin Patch',
  '*** Update File: src/greet.py',
  '@@ def greet(name):',
  '-    print("Hello " + name)',
  '+    print(f"Hello, {name}!")',
  '*** Add File: docs/notes.md',
  '+# Notes',
  '*** Delete File: old.txt',
  '*** End Patch',
  '',
].join('\n');

const EXEC_EXAMPLE = [
  '// @exec: {"yield_time_ms": 10000}',
  'const result = await tools.exec_command({ cmd: "ls" });',
  'text(JSON.stringify(result));',
  '',
].join('\n');

export function renderGrammarExample(toolName: string, grammar: ToolGrammar, cache: GrammarCache = createGrammarCache({ maxEntries: 1 })): string | null {
  const example = pickExample(toolName, grammar);
  if (example === null) return null;
  const resolved = cache.resolve(grammar);
  if (!resolved.compiled || resolved.matcher.match(example).status !== 'match') return null;
  return example;
}

/** Recognised by the grammar text first, so a renamed tool gets its example; the name only picks `exec`'s. */
function pickExample(toolName: string, grammar: ToolGrammar): string | null {
  if (grammar.definition.includes('*** Begin Patch')) return PATCH_EXAMPLE;
  if (grammar.definition.includes('@exec:') || toolName === 'exec') return EXEC_EXAMPLE;
  return null;
}
