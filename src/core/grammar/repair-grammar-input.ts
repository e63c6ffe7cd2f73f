import { appendMissingPatchEnd, PATCH_REPAIR_DESCRIPTIONS, PATCH_UNWRAPPERS, type PatchRepairKind } from '../apply-patch/repair-patch-input.ts';
import { decodeJsonString, peelOnce, removeCodeFence, removeJsonWrapper, removeShellHeredoc, removeSurroundingWhitespace, type Unwrapper } from '../unwrap-payload.ts';

/*
 * Opt-in repairs for free-form inputs that miss their grammar in the ways function-calling models
 * are known to: the payload wrapped in JSON or a JSON string, a shell heredoc, a
 * Markdown fence, a missing final newline or `*** End Patch`, `*** Begin Patch ***`. A repair is
 * only ever proposed when its result matches the grammar; the caller decides whether to apply it.
 * The repairs only a patch envelope gets are apply_patch's (apply-patch/repair-patch-input.ts).
 */

export type GrammarRepairKind =
  | 'code_fence'
  | 'shell_heredoc'
  | 'json_wrapper'
  | 'json_string'
  | 'surrounding_whitespace'
  | 'final_newline'
  | PatchRepairKind;

export interface GrammarRepair {
  input: string;
  /** In the order they were applied. */
  kinds: GrammarRepairKind[];
}

export interface FindGrammarRepairOptions {
  /** Whether the input matches the grammar (the repair is verified with it). */
  matches: (text: string) => boolean;
  /** The grammar is a `*** Begin Patch … *** End Patch` grammar: patch-specific repairs apply. */
  patchEnvelope: boolean;
}

/** Wrappers nest (a fence around a JSON object): a few levels are plenty and bound the work. */
const MAX_UNWRAP_DEPTH = 4;

const REPAIR_DESCRIPTIONS: Readonly<Record<GrammarRepairKind, string>> = {
  code_fence: 'removed the Markdown code fence around the payload',
  shell_heredoc: 'took the payload out of the shell heredoc',
  json_wrapper: 'took the payload out of the JSON object it was wrapped in',
  json_string: 'decoded the payload from the JSON string it was quoted as',
  surrounding_whitespace: 'removed whitespace around the payload',
  final_newline: 'added the missing final newline',
  ...PATCH_REPAIR_DESCRIPTIONS,
};

export function describeGrammarRepairKind(kind: GrammarRepairKind): string {
  return REPAIR_DESCRIPTIONS[kind];
}

export function findGrammarRepair(input: string, options: FindGrammarRepairOptions): GrammarRepair | null {
  // An empty payload has nothing to repair; a newline that happens to satisfy the grammar is no fix.
  if (input.trim() === '') return null;
  const unwrappers: Array<Unwrapper<GrammarRepairKind>> = [
    { kind: 'code_fence', apply: removeCodeFence },
    { kind: 'shell_heredoc', apply: removeShellHeredoc },
    { kind: 'json_wrapper', apply: removeJsonWrapper },
    { kind: 'json_string', apply: decodeJsonString },
    { kind: 'surrounding_whitespace', apply: removeSurroundingWhitespace },
  ];
  if (options.patchEnvelope) unwrappers.push(...PATCH_UNWRAPPERS);

  // Peel one wrapper at a time, keeping every stage: the fewest repairs that make it match win.
  const stages: GrammarRepair[] = [{ input, kinds: [] }];
  for (let depth = 0; depth < MAX_UNWRAP_DEPTH; depth += 1) {
    const last = stages[stages.length - 1] as GrammarRepair;
    const peeled = peelOnce(last.input, unwrappers);
    if (peeled === null) break;
    stages.push({ input: peeled.text, kinds: [...last.kinds, peeled.kind] });
  }

  for (const [index, stage] of stages.entries()) {
    if (index > 0 && options.matches(stage.input)) return stage;
    for (const ending of completeEnding(stage, options.patchEnvelope)) if (options.matches(ending.input)) return ending;
  }
  return null;
}

/** Endings to try on one stage: a final newline, then `*** End Patch` (with and without its own newline). */
function completeEnding(stage: GrammarRepair, patchEnvelope: boolean): GrammarRepair[] {
  const candidates: GrammarRepair[] = [];
  const text = stage.input;
  if (!text.endsWith('\n')) candidates.push({ input: `${text}\n`, kinds: [...stage.kinds, 'final_newline'] });
  if (patchEnvelope) for (const ended of appendMissingPatchEnd(text)) candidates.push({ input: ended, kinds: [...stage.kinds, 'end_patch'] });
  return candidates;
}

