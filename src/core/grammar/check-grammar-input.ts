import { createWarning, type BridgeWarning } from '../warnings.ts';
import type { ToolGrammar } from './compile-grammar.ts';
import type { GrammarCache } from './grammar-cache.ts';
import { describeGrammarMismatch } from './grammar-matcher.ts';
import { describeGrammarRepairKind, findGrammarRepair, type GrammarRepair } from './repair-grammar-input.ts';
import { judgeAsCodex, judgeApplyPatchInput } from '../apply-patch/apply-patch-verdict.ts';
import { describePatchRescueKind, findSafePatchRescue } from '../apply-patch/rescue-apply-patch.ts';

/*
 * The lift-time check: a function-only backend cannot enforce a custom
 * tool's grammar, so the lifted input is matched here. A mismatch is a warning naming where the
 * input stops matching; the input is still delivered unchanged (Codex's own parser then tells the
 * model what is wrong) unless repair is switched on and a repair makes it match.
 *
 * A `*** Begin Patch` grammar is judged the way Codex's own parser will judge the text
 * (apply-patch/apply-patch-verdict.ts): no alarm on what Codex applies as written, a warning on grammar-valid
 * text Codex cannot apply, and the safe rescues (apply-patch/rescue-apply-patch.ts) applied whatever the
 * repair setting.
 */

export interface CheckGrammarInputOptions {
  /** Tool name as Codex knows it. */
  tool: string;
  callId: string;
  input: string;
  grammar: ToolGrammar;
  cache: GrammarCache;
  /** Apply a repair when one makes the input match (BridgeOptions.grammarRepair). */
  repair: boolean;
  /**
   * The engine's value could have been cut without saying so (no clean finish): a missing
   * `*** End Patch` is then never appended, since an omission and a truncation look the same.
   */
  mayBeCut?: boolean;
}

export interface CheckedGrammarInput {
  /** The input to deliver: unchanged, or repaired. */
  input: string;
  warnings: BridgeWarning[];
  repaired: boolean;
}

const EXCERPT_HEAD = 120;
const EXCERPT_TAIL = 60;

export function checkGrammarInput(options: CheckGrammarInputOptions): CheckedGrammarInput {
  const { tool, callId, input, grammar } = options;
  const unchanged = (warnings: BridgeWarning[]): CheckedGrammarInput => ({ input, warnings, repaired: false });
  const resolved = options.cache.resolve(grammar);
  if (!resolved.compiled) {
    if (!resolved.firstReport) return unchanged([]);
    return unchanged([
      createWarning(
        'grammar_uncompilable',
        `the ${describeSyntax(grammar)} of custom tool '${tool}' cannot be checked (${resolved.reason}); its inputs are delivered unchecked`,
        { tool, raw: grammar.definition },
      ),
    ]);
  }

  const matcher = resolved.matcher;
  const result = matcher.match(input);
  if (isPatchEnvelope(grammar)) {
    return checkPatchInput(options, result.status === 'match', (text) => matcher.match(text).status === 'match');
  }
  switch (result.status) {
    case 'match':
      return unchanged([]);
    case 'inconclusive':
      return unchanged([createWarning('grammar_check_skipped', `the ${tool} input was not checked against its grammar: ${result.reason}`, { tool, callId })]);
    case 'mismatch':
      break;
    default: {
      const unreachable: never = result;
      return unreachable;
    }
  }

  const where = describeGrammarMismatch(result.mismatch);
  const repair = findGrammarRepair(input, {
    matches: (text) => matcher.match(text).status === 'match',
    patchEnvelope: false,
  });
  if (repair !== null && options.repair) {
    return {
      input: repair.input,
      repaired: true,
      warnings: [
        createWarning(
          'grammar_repaired',
          `the ${tool} input did not match its grammar (${where}); delivered it repaired: ${describeRepair(repair)}. Before: ${excerpt(input)}. After: ${excerpt(repair.input)}`,
          { tool, callId, raw: input },
        ),
      ],
    };
  }
  // Said even with repair off: it tells the user which setting would have saved this call.
  const hint = repair !== null ? `; grammar repair (off) would fix it: ${describeRepair(repair)}` : '';
  return unchanged([createWarning('grammar_mismatch', `input does not match the ${tool} grammar at ${where}${hint}`, { tool, callId, raw: input })]);
}

function isPatchEnvelope(grammar: ToolGrammar): boolean {
  return grammar.definition.includes('*** Begin Patch') && grammar.definition.includes('*** End Patch');
}

function checkPatchInput(options: CheckGrammarInputOptions, matchesGrammar: boolean, matches: (text: string) => boolean): CheckedGrammarInput {
  const { tool, callId, input } = options;
  const verdict = judgeApplyPatchInput(input, matchesGrammar);
  if (verdict.status !== 'rejected') return { input, warnings: [], repaired: false };
  const where = verdict.line === null ? verdict.reason : `line ${verdict.line}: ${verdict.reason}`;

  const repaired = (output: string, how: string): CheckedGrammarInput => ({
    input: output,
    repaired: true,
    warnings: [
      createWarning(
        'grammar_repaired',
        `Codex would reject this ${tool} input (${where}); delivered it repaired: ${how}. Before: ${excerpt(input)}. After: ${excerpt(output)}`,
        { tool, callId, raw: input },
      ),
    ],
  });

  const rescue = findSafePatchRescue(input);
  if (rescue !== null) return repaired(rescue.input, rescue.kinds.map(describePatchRescueKind).join(', then '));

  const risky = findGrammarRepair(input, {
    matches: (text) => matches(text) && judgeAsCodex(text).accepted,
    patchEnvelope: true,
  });
  // Appending the end marker cannot tell an omission from a cut the engine did not report.
  const usable = risky !== null && !(options.mayBeCut === true && risky.kinds.includes('end_patch')) ? risky : null;
  if (usable !== null && options.repair) return repaired(usable.input, describeRepair(usable));
  const hint = usable !== null ? `; grammar repair (off) would fix it: ${describeRepair(usable)}` : '';
  return {
    input,
    repaired: false,
    warnings: [createWarning('grammar_mismatch', `Codex will reject this ${tool} input: ${where}${hint}`, { tool, callId, raw: input })],
  };
}

function describeSyntax(grammar: ToolGrammar): string {
  return grammar.syntax === '' ? 'grammar' : `${grammar.syntax} grammar`;
}

function describeRepair(repair: GrammarRepair): string {
  return repair.kinds.map(describeGrammarRepairKind).join(', then ');
}

/** Long payloads are shown by their ends: that is where wrappers and missing endings are. */
function excerpt(text: string): string {
  if (text.length <= EXCERPT_HEAD + EXCERPT_TAIL) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, EXCERPT_HEAD))} … ${JSON.stringify(text.slice(-EXCERPT_TAIL))} (${text.length} characters)`;
}

/**
 * A lifted input that misses a grammar the engine was asked to enforce as a pattern: the engine
 * ignored or broke the pattern, which the user should hear about on its own (the setting, or the
 * self-test's verdict, is then wrong for this engine). Matched against the grammar itself, whatever
 * the check above made of the input (Codex's own parser accepts patches the grammar does not).
 */
export function findPatternViolation(options: { enforcedPattern: boolean; tool: string; callId: string; input: string; grammar: ToolGrammar | null; cache: GrammarCache }): BridgeWarning[] {
  if (!options.enforcedPattern || options.grammar === null) return [];
  const resolved = options.cache.resolve(options.grammar);
  if (!resolved.compiled || resolved.matcher.match(options.input).status !== 'mismatch') return [];
  return [
    createWarning('grammar_pattern_violated', `the engine was asked to enforce the ${options.tool} grammar as a pattern, yet the call does not match it: the engine does not enforce it as the self-test or the setting said`, {
      tool: options.tool,
      callId: options.callId,
    }),
  ];
}
