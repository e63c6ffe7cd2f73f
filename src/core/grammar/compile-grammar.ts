import type { ToolMapEntry } from '../tool-map.ts';
import { AutomatonBuilder, IGNORED_TOKEN, type Fragment, type GrammarAutomaton, type TokenLabel } from './grammar-automaton.ts';
import { createGrammarMatcher, type GrammarMatcher } from './grammar-matcher.ts';
import { LARK_COMMON_TERMINALS } from './lark-common-terminals.ts';
import { isTerminalName, parseLarkGrammar, type GrammarExpression, type LarkGrammar } from './parse-lark-grammar.ts';
import { parseGrammarRegexp } from './parse-grammar-regexp.ts';

/*
 * Grammar text → matcher. Rules are inlined into one automaton, which is possible exactly when the
 * grammar is regular (no rule reaches itself); Codex's grammars are. What we check is the language
 * the grammar generates with each terminal read as a regular set — an Earley parser's view, which
 * is also how the model-side constrained decoding reads these grammars — not what a LALR lexer
 * that commits to the longest token would accept.
 */

export type ToolGrammar = NonNullable<ToolMapEntry['grammar']>;

export type CompileGrammarResult = { success: true; matcher: GrammarMatcher } | { success: false; reason: string };

export function compileGrammar(grammar: ToolGrammar): CompileGrammarResult {
  try {
    return { success: true, matcher: createGrammarMatcher(buildGrammarAutomaton(grammar)) };
  } catch (error) {
    // Whatever goes wrong, the grammar is reported and skipped: checking is an aid, never a reason to fail a call.
    return { success: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

export function buildGrammarAutomaton(grammar: ToolGrammar): GrammarAutomaton {
  switch (grammar.syntax) {
    case 'lark':
      return new LarkCompiler(parseLarkGrammar(grammar.definition)).compile();
    case 'regex': {
      const builder = new AutomatonBuilder();
      const pattern = parseGrammarRegexp(grammar.definition, { ignoreCase: false, dotAll: false, verbose: false });
      return builder.finish(builder.pattern(pattern, null, null));
    }
    default:
      throw new Error(`grammar syntax '${grammar.syntax}' is not supported (only lark and regex are)`);
  }
}

type Scope = 'grammar' | 'common';

interface CompileContext {
  scope: Scope;
  /** Innermost rule being expanded, for mismatch messages. */
  rule: string | null;
  /** Set inside a terminal: every character is labelled with the outermost terminal's name. */
  terminalLabel: TokenLabel | null;
  /** Names being expanded right now: meeting one again means recursion, which is not regular. */
  expanding: readonly string[];
}

class LarkCompiler {
  private readonly builder = new AutomatonBuilder();
  private common: LarkGrammar | null = null;

  constructor(private readonly grammar: LarkGrammar) {}

  compile(): GrammarAutomaton {
    if (!this.grammar.definitions.has('start')) throw new Error("the grammar has no 'start' rule");
    const context: CompileContext = { scope: 'grammar', rule: null, terminalLabel: null, expanding: [] };
    const start = this.builder.sequence([() => this.compileSymbol('start', context), () => this.ignored()]);
    return this.builder.finish(start);
  }

  private commonGrammar(): LarkGrammar {
    this.common ??= parseLarkGrammar(LARK_COMMON_TERMINALS);
    return this.common;
  }

  /** `%ignore` text may stand before any token and at the end (none of Codex's grammars use it). */
  private ignored(): Fragment {
    const ignored = this.grammar.ignored;
    if (ignored.length === 0) return this.builder.empty();
    const context: CompileContext = { scope: 'grammar', rule: null, terminalLabel: { token: IGNORED_TOKEN, offset: -1, rule: null }, expanding: [] };
    return this.builder.repeat(() => this.builder.choice(ignored.map((expression) => () => this.compileExpression(expression, context))), 0, Infinity);
  }

  /** A token at rule level: ignored text may precede it. */
  private token(build: () => Fragment, context: CompileContext): Fragment {
    if (context.terminalLabel !== null || this.grammar.ignored.length === 0) return build();
    return this.builder.sequence([() => this.ignored(), build]);
  }

  private compileExpression(expression: GrammarExpression, context: CompileContext): Fragment {
    const builder = this.builder;
    switch (expression.kind) {
      case 'literal':
        return this.token(() => builder.literal(expression.text, expression.ignoreCase, context.terminalLabel, context.rule), context);
      case 'range': {
        const set = { ranges: [[expression.low, expression.high] as const], classes: [], negated: false, ignoreCase: false, source: expression.source };
        const label = context.terminalLabel ?? { token: expression.source, offset: -1, rule: context.rule };
        return this.token(() => builder.character(set, label), context);
      }
      case 'regexp': {
        const label = context.terminalLabel ?? { token: expression.source, offset: -1, rule: context.rule };
        return this.token(() => builder.pattern(expression.pattern, label, context.rule), context);
      }
      case 'symbol':
        return this.compileSymbol(expression.name, context);
      case 'sequence':
        return builder.sequence(expression.items.map((item) => () => this.compileExpression(item, context)));
      case 'choice':
        return builder.choice(expression.options.map((option) => () => this.compileExpression(option, context)));
      case 'repeat':
        return builder.repeat(() => this.compileExpression(expression.item, context), expression.min, expression.max);
      default: {
        const unreachable: never = expression;
        return unreachable;
      }
    }
  }

  private compileSymbol(name: string, context: CompileContext): Fragment {
    const resolved = this.resolve(name, context.scope);
    const key = `${resolved.scope}:${resolved.name}`;
    if (context.expanding.includes(key)) {
      throw new Error(`'${name}' refers to itself (directly or through other rules); only grammars without recursion can be checked`);
    }
    const terminal = isTerminalName(resolved.name);
    if (!terminal && context.terminalLabel !== null) throw new Error(`terminal ${context.terminalLabel.token} refers to rule '${name}'`);
    const inner: CompileContext = {
      scope: resolved.scope,
      rule: terminal ? context.rule : resolved.name,
      // The outermost terminal names the token: `NEWLINE`, not the `CR`/`LF` it is made of.
      terminalLabel: terminal ? (context.terminalLabel ?? { token: name, offset: -1, rule: context.rule }) : null,
      expanding: [...context.expanding, key],
    };
    const build = (): Fragment => this.compileExpression(resolved.expression, inner);
    return terminal ? this.token(build, context) : build();
  }

  private resolve(name: string, scope: Scope): { scope: Scope; name: string; expression: GrammarExpression } {
    if (scope === 'grammar') {
      const expression = this.grammar.definitions.get(name);
      if (expression !== undefined) return { scope, name, expression };
      const imported = this.grammar.imports.get(name);
      if (imported !== undefined) return this.resolve(imported, 'common');
      throw new Error(`'${name}' is used but not defined`);
    }
    const expression = this.commonGrammar().definitions.get(name);
    if (expression === undefined) throw new Error(`'${name}' is not in Lark's common library`);
    return { scope, name, expression };
  }
}
