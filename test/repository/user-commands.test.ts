import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listRepositoryFiles, REPOSITORY_ROOT } from '../support/repository-files.ts';

/**
 * What the product tells a user to run must exist where they are and keep them safe. The VS Code
 * walkthrough speaks to someone who installed the extension: the extension's own commands do the job
 * there, and a command line (`npx freeform-bridge …`) they may not have, or that fetches whatever npm
 * holds under that name, has no place. No text a user reads, and no hint the product prints, suggests
 * running Codex without its sandbox. The README says how to get the `freeform-bridge` command before
 * its first run uses it.
 */
const read = (path: string): string => readFileSync(join(REPOSITORY_ROOT, path), 'utf8');

describe('commands the product tells a user to run', () => {
  it('the walkthrough sends nobody to a command line', () => {
    const pages = listRepositoryFiles([join('media', 'walkthrough')], /\.md$/, new Set());
    assert.ok(pages.length >= 5, pages.join(', '));
    const manifest = JSON.parse(read('package.json')) as { contributes: { walkthroughs: Array<{ steps: Array<{ id: string; description: string }> }> } };
    const texts = [...pages.map((page) => ({ where: page, text: read(page) })), ...manifest.contributes.walkthroughs.flatMap((walkthrough) => walkthrough.steps.map((step) => ({ where: `package.json step ${step.id}`, text: step.description })))];
    for (const { where, text } of texts) {
      assert.doesNotMatch(text, /npx\s+freeform-bridge|\bfreeform-bridge\s+(doctor|serve|codex-config)\b/, `${where} names a freeform-bridge command line`);
    }
  });

  it('nothing a user reads or the product prints suggests running Codex without its sandbox', () => {
    const files = [
      'README.md',
      'CHANGELOG.md',
      ...listRepositoryFiles(['docs', 'media', 'src', 'scripts'], /\.(md|ts|mjs|json)$/, new Set()),
    ];
    for (const path of files) assert.ok(!read(path).includes('--dangerously-bypass-approvals-and-sandbox'), path);
  });

  it('the README says how to get the freeform-bridge command before the first run uses it', () => {
    const readme = read('README.md');
    const install = readme.indexOf('\n## Install\n');
    const firstRun = readme.indexOf('\n## First run: command line\n');
    assert.ok(install > 0 && firstRun > install);
    const installSection = readme.slice(install, firstRun);
    // Until the first release, the way in is a clone: both files are built and installed from it.
    assert.match(installSection, /npm ci && npm run package/);
    const { version } = JSON.parse(read('package.json')) as { version: string };
    assert.ok(installSection.includes(`code --install-extension freeform-bridge-${version}.vsix`), `the .vsix of version ${version}`);
    assert.ok(installSection.includes(`npm install -g ./freeform-bridge-${version}.tgz`), `the .tgz of version ${version}`);
    const beforeFirstCommand = readme.slice(firstRun, readme.indexOf('`freeform-bridge ', firstRun));
    assert.match(beforeFirstCommand, /\[npm package\]\(#install\)/, 'the first run points at where the command comes from');
  });
});
