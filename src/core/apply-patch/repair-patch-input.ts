import { changesDirectory, type Unwrapper } from '../unwrap-payload.ts';

/*
 * The opt-in repairs that only a `*** Begin Patch … *** End Patch` grammar gets
 * (grammar/repair-grammar-input.ts offers them when the grammar is a patch envelope): decorated marker
 * lines, prose around the one patch block, a missing `*** End Patch`. Decorated markers are also one
 * of the safe rescues (rescue-apply-patch.ts).
 */

export type PatchRepairKind = 'patch_markers' | 'surrounding_prose' | 'end_patch';

export const PATCH_BEGIN = '*** Begin Patch';
export const PATCH_END = '*** End Patch';
/** A marker line longer than this is no decorated marker; keeps the line regexp cheap. */
const MAX_MARKER_LINE_LENGTH = 500;

export const PATCH_REPAIR_DESCRIPTIONS: Readonly<Record<PatchRepairKind, string>> = {
  patch_markers: 'rewrote the decorated "*** Begin Patch" / "*** End Patch" lines',
  surrounding_prose: 'dropped the text before "*** Begin Patch" and after "*** End Patch"',
  end_patch: 'appended the missing "*** End Patch" line',
};

/** The patch repairs that peel something off the payload, in the order they are tried. */
export const PATCH_UNWRAPPERS: readonly Unwrapper<PatchRepairKind>[] = [
  { kind: 'patch_markers', apply: normalisePatchMarkers },
  { kind: 'surrounding_prose', apply: removeSurroundingProse },
];

/** The text with `*** End Patch` appended (with and without its own newline); none when it already ends so. */
export function appendMissingPatchEnd(text: string): string[] {
  if (text.trimEnd().endsWith(PATCH_END)) return [];
  const base = text.endsWith('\n') ? text : `${text}\n`;
  return [`${base}${PATCH_END}`, `${base}${PATCH_END}\n`];
}

/** `*** Begin Patch ***`, `***Begin Patch:` … as the first or last line (opencodex#372: 47 failures in one session). */
export function normalisePatchMarkers(text: string): string | null {
  const firstBreak = text.indexOf('\n');
  if (firstBreak < 0) return null;
  const bodyEnd = text.trimEnd().length;
  const lastLineStart = text.lastIndexOf('\n', bodyEnd - 1) + 1;
  if (lastLineStart <= firstBreak) return null;
  const first = normaliseMarkerLine(text.slice(0, firstBreak), PATCH_BEGIN, 'Begin');
  const last = normaliseMarkerLine(text.slice(lastLineStart, bodyEnd), PATCH_END, 'End');
  if (first === null && last === null) return null;
  return `${first ?? text.slice(0, firstBreak)}${text.slice(firstBreak, lastLineStart)}${last ?? text.slice(lastLineStart, bodyEnd)}${text.slice(bodyEnd)}`;
}

function normaliseMarkerLine(line: string, marker: string, word: string): string | null {
  if (line === marker || line.length > MAX_MARKER_LINE_LENGTH) return null;
  return new RegExp(`^[ \\t]*\\*{3}[ \\t]*${word}[ \\t]*Patch[ \\t*:]*$`, 'i').test(line) ? marker : null;
}

/**
 * Prose around exactly one `*** Begin Patch` … `*** End Patch` block. Risky (the dropped text is gone
 * from what runs), so only ever offered as an opt-in repair; with two blocks there is no single reading,
 * and prose that changes directory is never dropped.
 */
export function removeSurroundingProse(text: string): string | null {
  const lines = text.split('\n');
  const begins = lines.flatMap((line, index) => (line.trim() === PATCH_BEGIN ? [index] : []));
  const ends = lines.flatMap((line, index) => (line.trim() === PATCH_END ? [index] : []));
  if (begins.length !== 1 || ends.length !== 1) return null;
  const begin = begins[0] as number;
  const end = ends[0] as number;
  if (end <= begin) return null;
  // `cd dir && apply_patch <<'EOF'` before the patch says where it applies: never dropped.
  if (changesDirectory(lines.slice(0, begin).join('\n')) || changesDirectory(lines.slice(end + 1).join('\n'))) return null;
  return `${lines.slice(begin, end + 1).join('\n')}\n`;
}
