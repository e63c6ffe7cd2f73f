import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { listRepositoryFiles, REPOSITORY_ROOT } from '../support/repository-files.ts';

/**
 * Comments say why in words that stand on their own inside this repository. A comment that sends the
 * reader to a section of a document the repository does not hold (the team's reference pack: `§5.5`,
 * `bridge-rules.md`, `codex-wire.md` …) or to an issue number of a tracker it does not hold
 * (`issue #7`, `#5`) explains nothing to whoever reads it next; what the code relies on is written in
 * docs/ instead. Upstream projects' own trackers (`opencodex#372`, `vLLM PR #36166`) are public and
 * named, so they may stay.
 */
const repositoryRoot = REPOSITORY_ROOT;
const SCANNED_FOLDERS = ['src', 'test', 'harness', 'bench', 'scripts', 'media'];
const SKIPPED_FOLDERS = new Set([join('test', 'fixtures'), join('bench', 'results'), 'node_modules']);
const SHELL_EXTENSIONS = /\.sh$/;
const SCANNED_NAMES = /\.(ts|mts|cts|js|mjs|cjs|sh)$/;

const CITATIONS: ReadonlyArray<{ pattern: RegExp; what: string }> = [
  { pattern: /§/, what: 'a section number of a document outside the repository' },
  { pattern: /\b(?:bridge-rules|backends|codex-wire|style|peers)\.md\b|captures\/INDEX\.md/, what: 'a document of the reference pack' },
  { pattern: /\bissues?\s+#?\d+\b/i, what: 'an issue number' },
  // A bare `#12`, but not `project#12` (an upstream tracker, named) and not `PR #12` (likewise, when named).
  { pattern: /(?<![\w/.-])(?<!\bPR )#\d+\b/, what: 'an issue number' },
];

/**
 * The comments of a TypeScript or JavaScript text, found through the compiler's own parse tree (so
 * strings, templates and regular expressions are never taken for comments).
 */
function scriptComments(text: string): Array<{ line: number; text: string }> {
  const source = ts.createSourceFile('scanned.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found = new Map<number, string>();
  const collect = (position: number): void => {
    for (const range of [...(ts.getLeadingCommentRanges(text, position) ?? []), ...(ts.getTrailingCommentRanges(text, position) ?? [])]) {
      found.set(range.pos, text.slice(range.pos, range.end));
    }
  };
  const visit = (node: ts.Node): void => {
    collect(node.pos);
    collect(node.end);
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found].flatMap(([start, comment]) => {
    const firstLine = source.getLineAndCharacterOfPosition(start).line + 1;
    return comment.split('\n').map((commentLine, index) => ({ line: firstLine + index, text: commentLine }));
  });
}

function shellComments(text: string): Array<{ line: number; text: string }> {
  return text.split('\n').flatMap((line, index) => (/^\s*#/.test(line) ? [{ line: index + 1, text: line }] : []));
}

export function findCitations(text: string, kind: 'script' | 'shell' = 'script'): string[] {
  const comments = kind === 'shell' ? shellComments(text) : scriptComments(text);
  return comments.flatMap(({ line, text: comment }) => {
    const match = CITATIONS.find(({ pattern }) => pattern.test(comment));
    return match ? [`line ${line}: ${match.what}: ${comment.trim()}`] : [];
  });
}

describe('comments stand on their own', () => {
  it('recognises each kind of citation, in comments only (the check itself can fail)', () => {
    assert.equal(findCitations('// The lowering rules (bridge-rules.md §5.5).\nexport const a = 1;\n').length, 1);
    assert.equal(findCitations('/**\n * See codex-wire.md for the event order.\n */\nexport const a = 1;\n').length, 1);
    assert.equal(findCitations('/** Found by the fuzz suite (issue #8). */\nexport const a = 1;\n').length, 1);
    assert.equal(findCitations('// The panel (#5) keeps its rows.\nexport const a = 1;\n').length, 1);
    assert.equal(findCitations('// Issue 6, scenario 2.\nexport const a = 1;\n').length, 1);
    assert.equal(findCitations('# see backends.md\necho hi\n', 'shell').length, 1);
    assert.deepEqual(findCitations("// Reported upstream as opencodex#372 and fixed in vLLM PR #36166.\nexport const a = '§ #5 issue 7';\n"), []);
    assert.deepEqual(findCitations('export const pattern = /#\\d+ § /;\nexport const b = `${1}§`;\n'), []);
  });

  it('no comment under src/, test/, bench/, scripts/ or media/ cites the reference pack or an issue number', () => {
    const files = listRepositoryFiles(SCANNED_FOLDERS, SCANNED_NAMES, SKIPPED_FOLDERS);
    assert.ok(files.length > 100, `expected the sources and tests, found ${files.length}`);
    // This file names what it looks for, so it is the one file not held to it.
    const self = relative(repositoryRoot, __filename);
    const offenders = files
      .filter((file) => file !== self)
      .flatMap((file) => findCitations(readFileSync(join(repositoryRoot, file), 'utf8'), SHELL_EXTENSIONS.test(file) ? 'shell' : 'script').map((finding) => `${file} ${finding}`));
    assert.deepEqual(offenders, []);
  });
});
