import { isPlainObject, parseJson } from '../parse-json.ts';

/*
 * Opt-in repairs for free-form inputs that miss their grammar in the ways function-calling models
 * are known to: the payload wrapped in JSON or a JSON string, a shell heredoc, a
 * Markdown fence, a missing final newline or `*** End Patch`, `*** Begin Patch ***`. A repair is
 * only ever proposed when its result matches the grammar; the caller decides whether to apply it.
 */

export type GrammarRepairKind =
  | 'code_fence'
  | 'shell_heredoc'
  | 'json_wrapper'
  | 'json_string'
  | 'surrounding_whitespace'
  | 'patch_markers'
  | 'surrounding_prose'
  | 'final_newline'
  | 'end_patch';

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

const PATCH_BEGIN = '*** Begin Patch';
const PATCH_END = '*** End Patch';
/** Wrappers nest (a fence around a JSON object): a few levels are plenty and bound the work. */
const MAX_UNWRAP_DEPTH = 4;
/** First lines longer than this are no heredoc or fence opener; keeps the line regexps cheap. */
const MAX_OPENER_LENGTH = 500;

const REPAIR_DESCRIPTIONS: Readonly<Record<GrammarRepairKind, string>> = {
  code_fence: 'removed the Markdown code fence around the payload',
  shell_heredoc: 'took the payload out of the shell heredoc',
  json_wrapper: 'took the payload out of the JSON object it was wrapped in',
  json_string: 'decoded the payload from the JSON string it was quoted as',
  surrounding_whitespace: 'removed whitespace around the payload',
  patch_markers: 'rewrote the decorated "*** Begin Patch" / "*** End Patch" lines',
  surrounding_prose: 'dropped the text before "*** Begin Patch" and after "*** End Patch"',
  final_newline: 'added the missing final newline',
  end_patch: 'appended the missing "*** End Patch" line',
};

export function describeGrammarRepairKind(kind: GrammarRepairKind): string {
  return REPAIR_DESCRIPTIONS[kind];
}

type Unwrapper = { kind: GrammarRepairKind; apply: (text: string) => string | null };

export function findGrammarRepair(input: string, options: FindGrammarRepairOptions): GrammarRepair | null {
  // An empty payload has nothing to repair; a newline that happens to satisfy the grammar is no fix.
  if (input.trim() === '') return null;
  const unwrappers: Unwrapper[] = [
    { kind: 'code_fence', apply: removeCodeFence },
    { kind: 'shell_heredoc', apply: removeShellHeredoc },
    { kind: 'json_wrapper', apply: removeJsonWrapper },
    { kind: 'json_string', apply: decodeJsonString },
    { kind: 'surrounding_whitespace', apply: removeSurroundingWhitespace },
  ];
  if (options.patchEnvelope) {
    unwrappers.push({ kind: 'patch_markers', apply: normalisePatchMarkers }, { kind: 'surrounding_prose', apply: removeSurroundingProse });
  }

  // Peel one wrapper at a time, keeping every stage: the fewest repairs that make it match win.
  const stages: GrammarRepair[] = [{ input, kinds: [] }];
  for (let depth = 0; depth < MAX_UNWRAP_DEPTH; depth += 1) {
    const last = stages[stages.length - 1] as GrammarRepair;
    let peeled: GrammarRepair | null = null;
    for (const unwrapper of unwrappers) {
      const result = unwrapper.apply(last.input);
      if (result !== null && result !== last.input) {
        peeled = { input: result, kinds: [...last.kinds, unwrapper.kind] };
        break;
      }
    }
    if (peeled === null) break;
    stages.push(peeled);
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
  if (patchEnvelope && !text.trimEnd().endsWith(PATCH_END)) {
    const base = text.endsWith('\n') ? text : `${text}\n`;
    candidates.push({ input: `${base}${PATCH_END}`, kinds: [...stage.kinds, 'end_patch'] });
    candidates.push({ input: `${base}${PATCH_END}\n`, kinds: [...stage.kinds, 'end_patch'] });
  }
  return candidates;
}

export function splitFirstLine(text: string): { first: string; rest: string } | null {
  const end = text.indexOf('\n');
  if (end < 0 || end > MAX_OPENER_LENGTH) return null;
  return { first: text.slice(0, end), rest: text.slice(end + 1) };
}

/** ```` ```lang … ``` ```` (or `~~~`) around the whole payload; the body keeps its final newline. */
export function removeCodeFence(text: string): string | null {
  const trimmed = text.trim();
  const split = splitFirstLine(trimmed);
  if (split === null) return null;
  const opener = /^(`{3,}|~{3,})[\w.+-]*[ \t]*$/.exec(split.first);
  if (opener === null) return null;
  const fence = opener[1] as string;
  const lastBreak = split.rest.lastIndexOf('\n');
  const closing = split.rest.slice(lastBreak + 1).trim();
  if (closing.length < fence.length || closing !== (fence[0] as string).repeat(closing.length)) return null;
  return split.rest.slice(0, lastBreak + 1);
}

/** `apply_patch <<'EOF'` … `EOF` (any delimiter word, quoted or not, a command before it or a pipe after it). */
function removeShellHeredoc(text: string): string | null {
  const trimmed = text.trim();
  const split = splitFirstLine(trimmed);
  if (split === null) return null;
  // The classes on either side of each repetition are disjoint, so this cannot backtrack badly (and the line is short).
  const opener = /^(?:[\w./-]+[ \t]+)*(?:[\w./-]+)?[ \t]*<<-?[ \t]*(['"]?)([A-Za-z_][\w-]*)\1[ \t]*(?:\|[^\n]*)?$/.exec(split.first);
  if (opener === null) return null;
  const delimiter = opener[2] as string;
  const lastBreak = split.rest.lastIndexOf('\n');
  if (lastBreak < 0 || split.rest.slice(lastBreak + 1).trim() !== delimiter) return null;
  return split.rest.slice(0, lastBreak + 1);
}

/** `{"input": "…"}`, `{"patch": "…"}` or `{"command": ["apply_patch", "…"]}` written inside the string. */
export function removeJsonWrapper(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') || !trimmed.endsWith('}')) return null;
  const parsed = parseJson(trimmed);
  if (!parsed.success || !isPlainObject(parsed.value)) return null;
  const value = parsed.value;
  for (const key of ['input', 'patch']) {
    const candidate = value[key];
    if (typeof candidate === 'string') return candidate;
  }
  const command = value.command;
  // Exactly the command and its one argument: anything more would be dropped unseen.
  if (Array.isArray(command) && command.length === 2 && command[0] === 'apply_patch' && typeof command[1] === 'string') return command[1];
  return null;
}

/** `"*** Begin Patch\n…"`: the payload JSON-quoted once more inside the string. */
export function decodeJsonString(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed.length < 2 || !trimmed.startsWith('"') || !trimmed.endsWith('"')) return null;
  const parsed = parseJson(trimmed);
  return parsed.success && typeof parsed.value === 'string' ? parsed.value : null;
}

/** Leading blank lines and trailing whitespace (one final newline is kept when there was one). */
function removeSurroundingWhitespace(text: string): string | null {
  const trimmedEnd = text.trimEnd();
  const keepsNewline = text.slice(trimmedEnd.length).includes('\n');
  const result = `${trimmedEnd.trimStart()}${keepsNewline ? '\n' : ''}`;
  return result === text ? null : result;
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
  if (line === marker || line.length > MAX_OPENER_LENGTH) return null;
  return new RegExp(`^[ \\t]*\\*{3}[ \\t]*${word}[ \\t]*Patch[ \\t*:]*$`, 'i').test(line) ? marker : null;
}

/**
 * Prose around exactly one `*** Begin Patch` … `*** End Patch` block. Risky (the dropped text is gone
 * from what runs), so only ever offered as an opt-in repair; with two blocks there is no single reading.
 */
function removeSurroundingProse(text: string): string | null {
  const lines = text.split('\n');
  const begins = lines.flatMap((line, index) => (line.trim() === PATCH_BEGIN ? [index] : []));
  const ends = lines.flatMap((line, index) => (line.trim() === PATCH_END ? [index] : []));
  if (begins.length !== 1 || ends.length !== 1) return null;
  const begin = begins[0] as number;
  const end = ends[0] as number;
  if (end <= begin) return null;
  return `${lines.slice(begin, end + 1).join('\n')}\n`;
}
