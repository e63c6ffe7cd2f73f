import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * What the .vsix holds: `vsce ls` at the repository root, as `npx @vscode/vsce package` (and so
 * `npm run package`) packs it with package.json and .vscodeignore, and the marketplace fields and
 * walkthrough it declares. The vsix phase of `npm run test:vscode` installs the real package into VS
 * Code; the suites check there that every contributed command is registered.
 *
 * Listing, not packing: `vsce package` runs the build (vscode:prepublish), which would rewrite dist/
 * while other test files run its bundles. The files the listing names are copied into the .vsix as
 * they are, so their contents are checked here. `npm test` builds first; alone, run `npm run build`.
 */
// The test runners start in the repository root.
const root = process.cwd();

interface Command {
  command: string;
  title: string;
}
interface Step {
  id: string;
  title: string;
  description: string;
  media: { markdown?: string; image?: string };
  completionEvents: string[];
}
interface Manifest {
  name: string;
  publisher: string;
  version: string;
  main: string;
  icon: string;
  categories: string[];
  keywords: string[];
  galleryBanner: { color: string; theme: string };
  repository: { type: string; url: string };
  engines: { vscode: string };
  devDependencies: Record<string, string>;
  contributes: {
    commands: Command[];
    configuration: { properties: Record<string, unknown> };
    walkthroughs: Array<{ id: string; title: string; steps: Step[] }>;
  };
}

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;

/** VS Code's marketplace categories (vsce passes them through; the gallery drops unknown ones). */
const MARKETPLACE_CATEGORIES = new Set([
  'AI', 'Azure', 'Chat', 'Data Science', 'Debuggers', 'Education', 'Extension Packs', 'Formatters', 'Keymaps', 'Language Packs',
  'Linters', 'Machine Learning', 'Notebooks', 'Other', 'Programming Languages', 'SCM Providers', 'Snippets', 'Testing', 'Themes', 'Visualization',
]);

function pngSize(path: string): { width: number; height: number } {
  const bytes = readFileSync(path);
  assert.equal(bytes.subarray(1, 4).toString('latin1'), 'PNG', `${path} is not a PNG`);
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe('the .vsix', { timeout: 120_000 }, () => {
  let files: string[];

  before(() => {
    assert.ok(existsSync(join(root, manifest.main)), `${manifest.main} is missing: run \`npm run build\` first`);
    const vsce = join(dirname(require.resolve('@vscode/vsce/package.json')), 'vsce');
    const listed = spawnSync(process.execPath, [vsce, 'ls'], { cwd: root, encoding: 'utf8' });
    assert.equal(listed.status, 0, `vsce ls failed: ${listed.stderr}`);
    files = listed.stdout.split('\n').map((line) => line.trim()).filter((line) => line !== '').sort();
  });

  it('holds exactly the extension, its worker thread, the built webview, the icon, the walkthrough and the documents', () => {
    const walkthroughPages = manifest.contributes.walkthroughs.flatMap((walkthrough) => walkthrough.steps.map((step) => step.media.markdown ?? step.media.image ?? ''));
    const expected = [
      'package.json',
      'README.md',
      'CHANGELOG.md',
      'LICENSE',
      manifest.main.replace(/^\.\//, ''),
      // The bridge's worker thread is started from the file beside the extension's bundle.
      'dist/bridge-worker.js',
      'dist/media/traffic-panel.js',
      'dist/media/traffic-panel.css',
      manifest.icon,
      ...walkthroughPages,
    ];
    // No sources, tests, bench, scripts, mock backend, docs, node_modules, source maps or the CLI bundle.
    assert.deepEqual(files, [...new Set(expected)].sort());
  });

  it('references no source map it does not ship', () => {
    for (const path of files.filter((file) => /\.(js|css)$/.test(file))) {
      for (const [, target] of readFileSync(join(root, path), 'utf8').matchAll(/[#@] sourceMappingURL=(\S+)/g)) {
        assert.ok(target!.startsWith('data:') || files.includes(join(dirname(path), target!)), `${path} points at ${target}, which is not in the .vsix`);
      }
    }
  });

  it('declares the marketplace fields: publisher, icon (128×128 PNG), categories, keywords, repository, engine, banner', () => {
    assert.match(manifest.publisher, /^[a-z0-9][a-z0-9-]*$/);
    assert.deepEqual(pngSize(join(root, manifest.icon)), { width: 128, height: 128 });
    assert.ok(manifest.categories.length > 0);
    for (const category of manifest.categories) assert.ok(MARKETPLACE_CATEGORIES.has(category), `unknown category ${category}`);
    for (const keyword of ['codex', 'vllm', 'ollama', 'tools']) assert.ok(manifest.keywords.includes(keyword), `keyword ${keyword}`);
    assert.ok(manifest.keywords.length <= 30, 'the marketplace takes at most 30 keywords');
    assert.match(manifest.repository.url, /^https:\/\/github\.com\/[^/]+\/[^/]+\.git$/);
    assert.match(manifest.galleryBanner.color, /^#[0-9a-f]{6}$/i);
    assert.ok(['dark', 'light'].includes(manifest.galleryBanner.theme));
    // The API the extension is compiled against must not be newer than the engines it claims.
    assert.equal(manifest.engines.vscode, `^${manifest.devDependencies['@types/vscode']}`);
  });

  it('has a walkthrough whose steps show packaged markdown and complete on contributed commands and settings', () => {
    const commands = new Set(manifest.contributes.commands.map((command) => command.command));
    const settings = new Set(Object.keys(manifest.contributes.configuration.properties));
    const [walkthrough] = manifest.contributes.walkthroughs;
    assert.ok(walkthrough);
    assert.deepEqual(
      walkthrough.steps.map((step) => step.completionEvents),
      [
        ['onCommand:freeformBridge.checkBackend', 'onSettingChanged:freeformBridge.backendUrl'],
        ['onCommand:freeformBridge.setBackendApiKey'],
        ['onCommand:freeformBridge.writeCodexConfig'],
        ['onCommand:freeformBridge.copyCodexCommand'],
        ['onCommand:freeformBridge.showTraffic'],
      ],
    );
    for (const step of walkthrough.steps) {
      assert.ok(step.media.markdown && files.includes(step.media.markdown), `${step.id}: ${step.media.markdown} is not in the .vsix`);
      for (const event of step.completionEvents) {
        const [kind, target] = event.split(':') as [string, string];
        assert.ok(kind === 'onCommand' ? commands.has(target) : kind === 'onSettingChanged' && settings.has(target), `${step.id}: ${event} names nothing contributed`);
      }
      // Each step's buttons are command links: to a contributed command, or to the settings editor on a contributed setting.
      const links = [...step.description.matchAll(/\]\(command:([\w.]+)(?:\?([^)]*))?\)/g)];
      assert.ok(links.length > 0, `${step.id} has no button`);
      for (const [, command, query] of links) {
        if (command === 'workbench.action.openSettings') assert.ok(settings.has((JSON.parse(decodeURIComponent(query ?? '')) as string[])[0] ?? ''), `${step.id}: ${query}`);
        else assert.ok(commands.has(command ?? ''), `${step.id}: ${command} is not contributed`);
      }
      // Walkthrough descriptions render links and plain text only: backticks would show literally.
      assert.ok(!step.description.includes('`'), `${step.id}: backticks in a step description`);
    }
  });
});
