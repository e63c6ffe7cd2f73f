import { isPlainObject, parseJson } from './parse-json.ts';

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
export function removeSurroundingWhitespace(text: string): string | null {
  const trimmedEnd = text.trimEnd();
  const keepsNewline = text.slice(trimmedEnd.length).includes('\n');
  const result = `${trimmedEnd.trimStart()}${keepsNewline ? '\n' : ''}`;
  return result === text ? null : result;
}
