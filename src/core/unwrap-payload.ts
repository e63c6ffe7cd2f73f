import { findDuplicateTopLevelKeys, isPlainObject, parseJson } from './parse-json.ts';

/*
 * Wrappers function-calling models put around a free-form payload: a Markdown fence, a shell heredoc,
 * a JSON object or a JSON string, whitespace. Each unwrapper gives the payload inside, or null when
 * the text is not wrapped so. Used by the opt-in grammar repairs (grammar/repair-grammar-input.ts)
 * and by the safe apply_patch rescues (apply-patch/rescue-apply-patch.ts).
 */

/** An unwrapper and the name its repair goes by. */
export interface Unwrapper<Kind extends string> {
  kind: Kind;
  apply: (text: string) => string | null;
}

/** What the first unwrapper that changes the text gives, tried in order; null when none does. */
export function peelOnce<Kind extends string>(text: string, unwrappers: readonly Unwrapper<Kind>[]): { kind: Kind; text: string } | null {
  for (const unwrapper of unwrappers) {
    const result = unwrapper.apply(text);
    if (result !== null && result !== text) return { kind: unwrapper.kind, text: result };
  }
  return null;
}

/**
 * Keys that name a directory or file the payload is meant for: beside a patch they change which files
 * it edits (`{"input": <update a.txt>, "workdir": "dir"}` means dir/a.txt), so the payload cannot be
 * taken out of the object without them. Compared in lower case with `_`, `-` and spaces removed.
 */
const LOCATION_KEYS = new Set([
  'workdir', 'workingdir', 'workingdirectory', 'cwd', 'dir', 'directory', 'cd', 'chdir', 'path', 'paths', 'root', 'rootdir',
  'base', 'basedir', 'basepath', 'folder', 'file', 'files', 'filename', 'filepath', 'target', 'targetdir', 'targetfile',
  'repo', 'repository', 'project', 'projectdir', 'projectroot', 'workspace', 'workspacedir',
]);
const PATCH_MARKER = '*** Begin Patch';

/**
 * Why taking `payloadKey`'s value out of this parsed object could change what the payload does, or null
 * when no other key can: a key naming a directory or file, another key holding a patch, or a key the
 * text repeats (`repeated`: JSON.parse kept only the last one, so which was meant is unknown).
 */
export function findMeaningfulSibling(object: Readonly<Record<string, unknown>>, payloadKey: string, repeated: readonly string[]): string | null {
  if (repeated.length > 0) return `the key ${JSON.stringify(repeated[0])} appears twice and JSON keeps only the last value`;
  for (const [key, value] of Object.entries(object)) {
    if (key === payloadKey) continue;
    if (LOCATION_KEYS.has(key.toLowerCase().replace(/[\s_-]/g, ''))) return `the key ${JSON.stringify(key)} beside it could change which files it edits`;
    if (typeof value === 'string' && value.includes(PATCH_MARKER)) return `the key ${JSON.stringify(key)} beside it holds a second patch`;
  }
  return null;
}

/**
 * A shell word that moves to another directory before the command runs (`cd dir &&`, `env -C dir`,
 * `git -C dir`, `--workdir dir`): text carrying one is never stripped from a payload, since the patch
 * would then edit files relative to the wrong directory.
 */
const DIRECTORY_CHANGE = /(?:^|[\s;&|(])(?:cd|pushd|chdir)[ \t]+\S|(?:^|\s)(?:-C|--chdir|--workdir|--work-dir|--cwd|--directory)(?:[ \t=]|$)/m;

export function changesDirectory(text: string): boolean {
  return DIRECTORY_CHANGE.test(text);
}

/** First lines longer than this are no heredoc or fence opener; keeps the line regexps cheap. */
const MAX_OPENER_LENGTH = 500;

export function splitFirstLine(text: string): { first: string; rest: string } | null {
  const end = text.indexOf('\n');
  if (end < 0 || end > MAX_OPENER_LENGTH) return null;
  return { first: text.slice(0, end), rest: text.slice(end + 1) };
}

/** A Markdown code fence (three or more backticks or tildes, an optional language) around the whole payload; the body keeps its final newline. */
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
export function removeShellHeredoc(text: string): string | null {
  const trimmed = text.trim();
  const split = splitFirstLine(trimmed);
  if (split === null) return null;
  // The classes on either side of each repetition are disjoint, so this cannot backtrack badly (and the line is short).
  const opener = /^(?:[\w./-]+[ \t]+)*(?:[\w./-]+)?[ \t]*<<-?[ \t]*(['"]?)([A-Za-z_][\w-]*)\1[ \t]*(?:\|[^\n]*)?$/.exec(split.first);
  if (opener === null) return null;
  if (changesDirectory(split.first)) return null;
  const delimiter = opener[2] as string;
  const lastBreak = split.rest.lastIndexOf('\n');
  if (lastBreak < 0 || split.rest.slice(lastBreak + 1).trim() !== delimiter) return null;
  return split.rest.slice(0, lastBreak + 1);
}

/**
 * `{"input": "…"}`, `{"patch": "…"}` or `{"command": ["apply_patch", "…"]}` written inside the string,
 * when no other key could change what the payload does (findMeaningfulSibling).
 */
export function removeJsonWrapper(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') || !trimmed.endsWith('}')) return null;
  const parsed = parseJson(trimmed);
  if (!parsed.success || !isPlainObject(parsed.value)) return null;
  return takePayloadOut(parsed.value, findDuplicateTopLevelKeys(trimmed));
}

/** The payload of a wrapper object already parsed (JSON, or a Python literal), by the rules of removeJsonWrapper. */
export function takePayloadOut(value: Readonly<Record<string, unknown>>, repeated: readonly string[]): string | null {
  const key = ['input', 'patch', 'command'].find((candidate) => Object.hasOwn(value, candidate));
  if (key === undefined || findMeaningfulSibling(value, key, repeated) !== null) return null;
  const candidate = value[key];
  if (key !== 'command') return typeof candidate === 'string' ? candidate : null;
  // Exactly the command and its one argument: anything more would be dropped unseen.
  if (Array.isArray(candidate) && candidate.length === 2 && candidate[0] === 'apply_patch' && typeof candidate[1] === 'string') return candidate[1];
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
export function removeSurroundingWhitespace(text: string): string | null {
  const trimmedEnd = text.trimEnd();
  const keepsNewline = text.slice(trimmedEnd.length).includes('\n');
  const result = `${trimmedEnd.trimStart()}${keepsNewline ? '\n' : ''}`;
  return result === text ? null : result;
}
