import { parsePythonStringDict } from '../parse-python-literal.ts';
import { peelOnce, removeCodeFence, removeJsonWrapper, splitFirstLine, takePayloadOut, type Unwrapper } from '../unwrap-payload.ts';
import { judgeAsCodex } from './apply-patch-verdict.ts';
import { normalisePatchMarkers, PATCH_BEGIN, PATCH_END } from './repair-patch-input.ts';

/*
 * Safe rescues for an `apply_patch` input Codex would refuse, applied by default. A rescue is safe when
 * the malformed text has exactly one reading: a wrapper the model put around a complete patch (JSON
 * object or Python dict literal with no key beside the patch that could change it, one Markdown fence, a
 * heredoc with no other command), decorated marker lines, or a missing
 * first marker when the text is otherwise a whole patch. Nothing here adds a line that could have been
 * lost to truncation, changes a hunk line, or decides which file is edited; those repairs stay behind
 * the opt-in grammar repair. Input Codex already accepts is never touched.
 */

export type PatchRescueKind = 'json_wrapper' | 'python_literal' | 'code_fence' | 'shell_heredoc' | 'patch_markers' | 'begin_patch';

export interface PatchRescue {
  input: string;
  /** In the order they were applied. */
  kinds: PatchRescueKind[];
}

const RESCUE_DESCRIPTIONS: Readonly<Record<PatchRescueKind, string>> = {
  json_wrapper: 'took the patch out of the JSON object it was wrapped in',
  python_literal: 'took the patch out of the Python dict literal it was written as',
  code_fence: 'removed the Markdown code fence around the patch',
  shell_heredoc: 'took the patch out of its `apply_patch <<EOF` heredoc',
  patch_markers: 'rewrote the decorated "*** Begin Patch" / "*** End Patch" line',
  begin_patch: 'added the missing "*** Begin Patch" first line',
};

/** Wrappers nest (a fence around a JSON object): a few levels are plenty and bound the work. */
const MAX_RESCUE_DEPTH = 4;
const FILE_HEADER = /^\*\*\* (?:Add|Update|Delete) File: \S/;
/** `apply_patch <<'EOF'` alone: no `cd`, no pipe, no other command, any delimiter word. */
const HEREDOC_OPENER = /^(?:apply_patch|applypatch)[ \t]*<<[ \t]*(['"]?)([A-Za-z_][\w-]*)\1[ \t]*$/;

const RESCUERS: readonly Unwrapper<PatchRescueKind>[] = [
  { kind: 'json_wrapper', apply: removeJsonWrapper },
  { kind: 'python_literal', apply: removePythonLiteral },
  { kind: 'code_fence', apply: removeCodeFence },
  { kind: 'shell_heredoc', apply: removeApplyPatchHeredoc },
  { kind: 'patch_markers', apply: normalisePatchMarkers },
  { kind: 'begin_patch', apply: addMissingBegin },
];

export function describePatchRescueKind(kind: PatchRescueKind): string {
  return RESCUE_DESCRIPTIONS[kind];
}

/** The rescued patch, or null when Codex accepts the input as it is or no safe rescue makes it acceptable. */
export function findSafePatchRescue(input: string): PatchRescue | null {
  if (input.trim() === '' || judgeAsCodex(input).accepted) return null;
  let stage: PatchRescue = { input, kinds: [] };
  for (let depth = 0; depth < MAX_RESCUE_DEPTH; depth += 1) {
    const peeled = peelOnce(stage.input, RESCUERS);
    if (peeled === null) return null;
    const next: PatchRescue = { input: peeled.text, kinds: [...stage.kinds, peeled.kind] };
    if (judgeAsCodex(next.input).accepted) return next;
    stage = next;
  }
  return null;
}

/** The heredoc body when the whole text is `apply_patch <<WORD`, the body and the `WORD` line. */
export function removeApplyPatchHeredoc(text: string): string | null {
  const split = splitFirstLine(text.trim());
  if (split === null) return null;
  const opener = HEREDOC_OPENER.exec(split.first.trim());
  if (opener === null) return null;
  const delimiter = opener[2] as string;
  const lastBreak = split.rest.lastIndexOf('\n');
  if (lastBreak < 0 || split.rest.slice(lastBreak + 1).trim() !== delimiter) return null;
  return split.rest.slice(0, lastBreak + 1);
}

/** `{'input': '*** Begin Patch\n…'}`: the patch written as a Python dict literal (parse-python-literal.ts says which). */
function removePythonLiteral(text: string): string | null {
  const dict = parsePythonStringDict(text.trim());
  // A repeated key already makes the literal unreadable there, so none is left to report here.
  return dict === null ? null : takePayloadOut(dict, []);
}

/** `*** Update File: …` … `*** End Patch` with only the first marker missing. */
function addMissingBegin(text: string): string | null {
  const trimmed = text.trim();
  if (!FILE_HEADER.test(trimmed) || !trimmed.endsWith(`\n${PATCH_END}`)) return null;
  return `${PATCH_BEGIN}\n${trimmed}\n`;
}
