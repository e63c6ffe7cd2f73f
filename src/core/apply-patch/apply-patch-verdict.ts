/*
 * How Codex 0.171 will judge an `apply_patch` input, decided before it is delivered. The Lark grammar
 * Codex sends is stricter than the parser Codex runs (docs/APPLY-PATCH.md), so matching the grammar
 * alone raises false alarms (CRLF, padded markers, blank lines around the patch, a bare `<<'EOF'`
 * heredoc, an empty context line) and misses text that parses but can never apply (unified-diff
 * `@@ -1,3 +1,3 @@` headers, `---`/`+++` file lines, an update with no hunk). This module restates the
 * parser's rules; the files the patch touches are not known here, so context that is simply not in
 * the file is Codex's to report.
 */

export type CodexPatchJudgement =
  /** Codex parses it; no line is known to be unappliable. */
  | { accepted: true }
  /** Codex refuses it, or parses it into a change that cannot apply; `line` is 1-based in the text given. */
  | { accepted: false; reason: string; line: number | null };

export type ApplyPatchVerdict =
  | { status: 'valid' }
  /** Outside the strict grammar, but Codex's lenient parser reads it as intended: no alarm. */
  | { status: 'accepted_as_written' }
  | { status: 'rejected'; reason: string; line: number | null };

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File: ';
const DELETE = '*** Delete File: ';
const UPDATE = '*** Update File: ';
const MOVE = '*** Move to: ';
const END_OF_FILE = '*** End of File';
/** Only these three heredoc openers are unwrapped by Codex when the patch is its only content. */
const BARE_HEREDOC_OPENERS = new Set(['<<EOF', "<<'EOF'", '<<"EOF"']);
/** A unified-diff range header: Codex takes it for a context line and then cannot find it in the file. */
const UNIFIED_RANGE = /^-\d+(?:,\d+)? \+\d+(?:,\d+)? @@/;
/**
 * Unicode White_Space, what Rust's `str::trim` strips. JavaScript's `trim` differs on two characters:
 * it strips U+FEFF (a byte-order mark, which Codex keeps, so `\uFEFF*** Begin Patch` is refused) and
 * keeps U+0085 (NEL, which Codex strips, so a marker followed by NEL is accepted).
 */
const RUST_WHITE_SPACE = '\t\n\v\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000';
const LEADING_WHITE_SPACE = new RegExp(`^[${RUST_WHITE_SPACE}]+`);
const TRAILING_WHITE_SPACE = new RegExp(`[${RUST_WHITE_SPACE}]+$`);

/** `strictGrammarMatch`: whether the text matches the tool's declared grammar (the caller's matcher). */
export function judgeApplyPatchInput(text: string, strictGrammarMatch: boolean): ApplyPatchVerdict {
  const judgement = judgeAsCodex(text);
  if (!judgement.accepted) return { status: 'rejected', reason: judgement.reason, line: judgement.line };
  return strictGrammarMatch ? { status: 'valid' } : { status: 'accepted_as_written' };
}

/** Codex's own reading, independent of the Lark grammar. */
export function judgeAsCodex(text: string): CodexPatchJudgement {
  // Codex trims the whole text, then splits lines the way Rust's `lines()` does (a CR before LF goes).
  const leading = countLeadingLines(text);
  const lines = splitLines(rustTrim(text));
  let body = checkBoundaries(lines);
  let offset = leading;
  if (body === null && lines.length >= 4 && BARE_HEREDOC_OPENERS.has(lines[0] as string) && (lines.at(-1) as string).endsWith('EOF')) {
    body = checkBoundaries(lines.slice(1, -1));
    offset += 1;
  }
  if (body === null) {
    const first = lines[0] === undefined ? undefined : rustTrim(lines[0]);
    if (first !== BEGIN) return reject("the first line must be '*** Begin Patch'", leading + 1);
    return reject("the last line must be '*** End Patch'", leading + lines.length);
  }
  if (body.length === 0) return reject('the patch holds no file operation, so Codex answers "No files were modified"', offset + 1);

  let index = 0;
  while (index < body.length) {
    const lineNumber = offset + 2 + index;
    const header = rustTrim(body[index] as string);
    if (header.startsWith(ADD)) {
      index += 1;
      while (index < body.length && (body[index] as string).startsWith('+')) index += 1;
      continue;
    }
    if (header.startsWith(DELETE)) {
      index += 1;
      continue;
    }
    if (!header.startsWith(UPDATE)) {
      return reject(`'${shorten(header)}' is not a file header ('*** Add File: ', '*** Delete File: ' or '*** Update File: ')`, lineNumber);
    }
    const path = header.slice(UPDATE.length);
    index += 1;
    if (index < body.length && (body[index] as string).startsWith(MOVE)) index += 1;
    const update = readUpdate(body, index, offset + 2);
    if ('reason' in update) return reject(update.reason, update.line);
    if (update.chunks === 0) return reject(`the update of '${shorten(path)}' has no hunk`, lineNumber);
    index = update.next;
  }
  return { accepted: true };
}

type UpdateRead = { chunks: number; next: number } | { reason: string; line: number };

/** The hunks after an `*** Update File:` header, up to the next line starting with `*`. */
function readUpdate(body: readonly string[], start: number, firstLineNumber: number): UpdateRead {
  let index = start;
  let chunks = 0;
  while (index < body.length) {
    const line = body[index] as string;
    // Only an empty line separates hunks: Codex 0.171 does not trim here, so a line of spaces, a tab
    // or a NEL starts a hunk and is refused as one.
    if (line === '') {
      index += 1;
      continue;
    }
    if (line.startsWith('*')) break;
    const lineNumber = firstLineNumber + index;
    let context: string | null = null;
    if (line === '@@') {
      index += 1;
    } else if (line.startsWith('@@ ')) {
      context = line.slice(3);
      index += 1;
    } else if (chunks > 0) {
      return { reason: `expected a '@@' line to start the next hunk, got '${shorten(line)}'`, line: lineNumber };
    }
    if (context !== null && UNIFIED_RANGE.test(context)) {
      return {
        reason: `'${shorten(line)}' is a unified-diff range header; Codex reads it as a context line to find in the file and fails`,
        line: lineNumber,
      };
    }
    if (index >= body.length) return { reason: 'a hunk has no lines', line: lineNumber + 1 };
    let hunkLines = 0;
    while (index < body.length) {
      const hunkLine = body[index] as string;
      if (hunkLine === END_OF_FILE) {
        if (hunkLines === 0) return { reason: 'a hunk has no lines', line: firstLineNumber + index };
        index += 1;
        hunkLines += 1;
        break;
      }
      const marker = hunkLine.charAt(0);
      if (marker !== '' && marker !== ' ' && marker !== '+' && marker !== '-') {
        if (hunkLines === 0) {
          return {
            reason: `'${shorten(hunkLine)}' in an update hunk does not start with ' ', '+' or '-'`,
            line: firstLineNumber + index,
          };
        }
        break;
      }
      if (hunkLines === 0 && isFileLinePair(body, index)) {
        return {
          reason: `'${shorten(hunkLine)}' and the next line are unified-diff file headers; Codex reads them as a removed and an added line and fails`,
          line: firstLineNumber + index,
        };
      }
      hunkLines += 1;
      index += 1;
    }
    chunks += 1;
  }
  return { chunks, next: index };
}

/** `--- a/x` followed by `+++ b/x` at the start of a hunk. */
function isFileLinePair(body: readonly string[], index: number): boolean {
  const line = body[index] as string;
  const next = body[index + 1];
  return line.startsWith('--- ') && next !== undefined && next.startsWith('+++ ');
}

/** Body lines between the markers, or null when the first or last line is not a marker. */
function checkBoundaries(lines: readonly string[]): readonly string[] | null {
  if (lines.length < 2) return null;
  if (rustTrim(lines[0] as string) !== BEGIN || rustTrim(lines.at(-1) as string) !== END) return null;
  return lines.slice(1, -1);
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Lines removed by the leading trim, so reported line numbers count in the text as given. */
function countLeadingLines(text: string): number {
  const removed = LEADING_WHITE_SPACE.exec(text)?.[0] ?? '';
  return removed.split('\n').length - 1;
}

/** Rust's `str::trim`: Codex trims the whole text, the two marker lines and each file header so. */
export function rustTrim(text: string): string {
  return text.replace(LEADING_WHITE_SPACE, '').replace(TRAILING_WHITE_SPACE, '');
}

function reject(reason: string, line: number | null): CodexPatchJudgement {
  return { accepted: false, reason, line };
}

function shorten(line: string): string {
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}
