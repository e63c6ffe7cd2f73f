import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { REPOSITORY_ROOT } from '../support/repository-files.ts';

/**
 * A release is one tag (RELEASING.md): the CI workflow runs .ci/run on every push and pull request,
 * and the release workflow tests, packages and publishes to every registry. Both are parsed here as
 * YAML, so a broken file or a publishing step that went missing fails before a tag finds out; and the
 * version every artefact carries is the same in package.json, the CHANGELOG's top release, the CLI's
 * `--version` and the CLI's npm manifest.
 */
interface Step {
  name?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}
interface Job {
  name?: string;
  needs?: string | string[];
  uses?: string;
  'runs-on'?: string;
  permissions?: Record<string, string>;
  steps?: Step[];
}
interface Workflow {
  name: string;
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  jobs: Record<string, Job>;
}

const manifest = JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };

function readWorkflow(name: string): Workflow {
  const path = join(REPOSITORY_ROOT, '.github', 'workflows', name);
  const workflow = load(readFileSync(path, 'utf8'), { filename: path }) as Workflow;
  assert.equal(typeof workflow.name, 'string', `${name}: no name`);
  assert.ok(workflow.on && typeof workflow.on === 'object', `${name}: no triggers`);
  assert.ok(Object.keys(workflow.jobs ?? {}).length > 0, `${name}: no jobs`);
  for (const [id, job] of Object.entries(workflow.jobs)) {
    // A job either calls a reusable workflow or runs steps on a runner, each step one action or one command.
    if (job.uses) continue;
    assert.ok(job['runs-on'], `${name}: job ${id} has no runs-on`);
    assert.ok(Array.isArray(job.steps) && job.steps.length > 0, `${name}: job ${id} has no steps`);
    for (const step of job.steps) assert.ok(Boolean(step.uses) !== Boolean(step.run), `${name}: job ${id} has a step with neither or both of uses and run: ${JSON.stringify(step)}`);
    for (const needed of [job.needs ?? []].flat()) assert.ok(needed in workflow.jobs, `${name}: job ${id} needs ${needed}, which does not exist`);
  }
  return workflow;
}

function steps(workflow: Workflow): Array<Step & { job: string }> {
  return Object.entries(workflow.jobs).flatMap(([job, { steps: jobSteps }]) => (jobSteps ?? []).map((step) => ({ ...step, job })));
}

/** The one step whose command contains `text`; its job's permissions and needs come along. */
function stepRunning(workflow: Workflow, text: string): Step & { job: string } {
  const found = steps(workflow).filter((step) => step.run?.includes(text));
  assert.equal(found.length, 1, `one step runs ${text}; found ${found.length}`);
  return found[0]!;
}

describe('the CI workflow', () => {
  const ci = readWorkflow('ci.yml');

  it('runs .ci/run on every push and pull request, and can be called by the release', () => {
    assert.deepEqual(Object.keys(ci.on).sort(), ['pull_request', 'push', 'workflow_call']);
    assert.deepEqual(ci.on.push, { branches: ['**'] }, 'every branch');
    const run = stepRunning(ci, '.ci/run');
    assert.equal(run.run, '.ci/run');
    // The engine tier's kit is not on GitHub's runners: the one tier skipped, and said so.
    assert.deepEqual(run.env, { FREEFORM_BRIDGE_SKIP_ENGINE_TIER: '1' });
  });

  it('is the only place the engine tier is skipped: .ci/run runs it unless told', () => {
    const script = readFileSync(join(REPOSITORY_ROOT, '.ci', 'run'), 'utf8');
    assert.match(script, /if \[ "\$\{FREEFORM_BRIDGE_SKIP_ENGINE_TIER:-\}" = 1 \]; then\n\s+echo "ci: real-engine tier skipped[^\n]*"\nelse\n\s+FREEFORM_BRIDGE_ENGINE_KIT=[^\n]* npm run test:engine\nfi/);
  });
});

describe('the release workflow', () => {
  const release = readWorkflow('release.yml');

  it('runs on a v* tag, after the whole CI', () => {
    assert.deepEqual(release.on, { push: { tags: ['v*'] } });
    assert.equal(release.jobs.test?.uses, './.github/workflows/ci.yml');
    assert.deepEqual(release.jobs.package?.needs, 'test');
    const packaging = stepRunning(release, 'npm run package');
    assert.equal(packaging.job, 'package');
    assert.match(packaging.run!, /--pre-release/);
  });

  it('checks the tag against package.json and a dated CHANGELOG heading before packaging', () => {
    const check = stepRunning(release, 'GITHUB_REF_NAME#v');
    assert.equal(check.job, 'package');
    assert.match(check.run!, /require\('\.\/package\.json'\)\.version/);
    assert.match(check.run!, /CHANGELOG\.md/);
  });

  it('publishes the .vsix to the Visual Studio Marketplace with VSCE_PAT, with the vsce that packed it', () => {
    const step = stepRunning(release, 'vsce');
    assert.equal(step.name, 'Publish to the Visual Studio Marketplace');
    assert.match(step.run!, new RegExp(`^npx --yes @vscode/vsce@${manifest.devDependencies['@vscode/vsce']!.replace(/\./g, '\\.')} publish --packagePath "freeform-bridge-\\$\\{\\{ needs\\.package\\.outputs\\.version \\}\\}\\.vsix" .*'--pre-release'`));
    assert.deepEqual(step.env, { VSCE_PAT: '${{ secrets.VSCE_PAT }}' });
  });

  it('publishes the same .vsix to Open VSX with OVSX_PAT, with a pinned ovsx', () => {
    const step = stepRunning(release, 'ovsx');
    assert.equal(step.name, 'Publish to Open VSX');
    assert.match(step.run!, /^npx --yes ovsx@\d+\.\d+\.\d+ publish --packagePath "freeform-bridge-\$\{\{ needs\.package\.outputs\.version \}\}\.vsix" .*'--pre-release'/);
    assert.deepEqual(step.env, { OVSX_PAT: '${{ secrets.OVSX_PAT }}' });
  });

  it('publishes the CLI tarball to npm with provenance and NPM_TOKEN; a pre-release goes to the next tag', () => {
    const step = stepRunning(release, 'npm publish');
    assert.equal(step.name, 'Publish the CLI to npm');
    assert.match(step.run!, /^npm publish "\.\/freeform-bridge-\$\{\{ needs\.package\.outputs\.version \}\}\.tgz" --provenance --access public --tag .*'next'.*'latest'/);
    assert.deepEqual(step.env, { NODE_AUTH_TOKEN: '${{ secrets.NPM_TOKEN }}' });
    assert.equal(release.jobs[step.job]?.permissions?.['id-token'], 'write', 'provenance needs the OIDC token');
  });

  it('attaches both files to a GitHub release, a pre-release for a suffixed tag, once every registry has them', () => {
    const step = stepRunning(release, 'gh release create');
    assert.equal(step.name, 'Create the GitHub release');
    assert.match(step.run!, /freeform-bridge-\$\{\{ needs\.package\.outputs\.version \}\}\.vsix/);
    assert.match(step.run!, /freeform-bridge-\$\{\{ needs\.package\.outputs\.version \}\}\.tgz/);
    assert.match(step.run!, /'--prerelease'/);
    const job = release.jobs[step.job]!;
    assert.equal(job.permissions?.contents, 'write');
    for (const publisher of ['vsce', 'ovsx', 'npm publish']) assert.ok([job.needs].flat().includes(stepRunning(release, publisher).job), `the GitHub release waits for ${publisher}`);
  });
});

describe('one version everywhere', () => {
  it("package.json, the CHANGELOG's top release, the CLI's --version and its npm manifest agree", () => {
    const changelog = readFileSync(join(REPOSITORY_ROOT, 'CHANGELOG.md'), 'utf8');
    const headings = [...changelog.matchAll(/^## \[([^\]]+)\]/gm)].map((match) => match[1]);
    assert.equal(headings[0], 'Unreleased', 'the CHANGELOG opens with an [Unreleased] section');
    assert.equal(headings[1], manifest.version, "the CHANGELOG's top release");

    const cli = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', '--version'], { cwd: REPOSITORY_ROOT, encoding: 'utf8' });
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(cli.stdout, `${manifest.version}\n`);

    const cliManifest = spawnSync(process.execPath, ['scripts/pack-npm.mjs', '--print-manifest'], { cwd: REPOSITORY_ROOT, encoding: 'utf8' });
    assert.equal(cliManifest.status, 0, cliManifest.stderr);
    assert.equal((JSON.parse(cliManifest.stdout) as { version: string }).version, manifest.version);
  });
});
