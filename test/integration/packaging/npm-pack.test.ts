import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { startMockBackend, type MockBackend } from '../../../mock-backend/create-mock-backend.ts';
import { itemsDone, postResponses, readCapture, readSseEvents } from '../../support/bridge-harness.ts';

/**
 * The npm CLI as a user gets it: the tarball scripts/pack-npm.mjs packs (with the CLI's own
 * manifest), installed with `npm install -g --prefix …` and served with `npx ./freeform-bridge-<version>.tgz
 * serve …` from another folder, each with an empty npm cache and --offline. That the install needs
 * nothing from a registry proves the tarball is self-contained (dist/cli.js bundles express, undici,
 * zod, smol-toml; its manifest declares no runtime dependencies).
 *
 * The tarball is packed with --no-build: a build would rewrite dist/ while other test files run the
 * CLI bundle. `npm test` builds first; alone, run `npm run build` before this file.
 */
// The test runners start in the repository root.
const root = process.cwd();
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string; dependencies?: Record<string, string> };

describe('the npm tarball', { timeout: 180_000 }, () => {
  let folder: string;
  let tarball: string;
  let packedFiles: string[];
  let packedManifest: Record<string, unknown>;
  let backend: MockBackend;

  before(async () => {
    assert.ok(existsSync(join(root, 'dist', 'cli.js')), 'dist/cli.js is missing: run `npm run build` first');
    folder = mkdtempSync(join(tmpdir(), 'freeform-bridge-npm-pack-'));
    const packed = spawnSync(process.execPath, ['scripts/pack-npm.mjs', '--no-build', '--out-dir', folder], { cwd: root, encoding: 'utf8' });
    assert.equal(packed.status, 0, `scripts/pack-npm.mjs failed: ${packed.stderr}`);
    tarball = basename(packed.stdout.trim().split('\n').at(-1)!);
    const listing = spawnSync('tar', ['-tzf', join(folder, tarball)], { encoding: 'utf8' });
    packedFiles = listing.stdout.trim().split('\n').map((path) => path.replace(/^package\//, '')).sort();
    packedManifest = JSON.parse(spawnSync('tar', ['-xzOf', join(folder, tarball), 'package/package.json'], { encoding: 'utf8' }).stdout) as Record<string, unknown>;
    backend = await startMockBackend({ profile: 'vllm-qwen3coder' });
  });

  after(async () => {
    await backend?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('holds only the CLI bundle, package.json, README, CHANGELOG and LICENSE, and declares no runtime dependencies', () => {
    assert.equal(tarball, `${manifest.name}-${manifest.version}.tgz`);
    assert.deepEqual(packedFiles, ['CHANGELOG.md', 'LICENSE', 'README.md', 'dist/cli.js', 'package.json']);
    assert.deepEqual(manifest.dependencies ?? {}, {});
  });

  it('declares no scripts, so installing it runs nothing and npm warns about no install script', () => {
    assert.equal(packedManifest.scripts, undefined);
    assert.equal(packedManifest.devDependencies, undefined);
    assert.equal(packedManifest.dependencies, undefined);
    assert.deepEqual(packedManifest.bin, { 'freeform-bridge': './dist/cli.js' });
    assert.equal(packedManifest.version, manifest.version);
  });

  it('installs with npm install -g into a prefix of its own, offline, and its freeform-bridge prints the version', () => {
    const prefix = join(folder, 'global');
    const cache = join(folder, 'npm-cache-global');
    const installed = spawnSync('npm', ['install', '--global', '--offline', '--prefix', prefix, `./${tarball}`], {
      cwd: folder,
      env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
      encoding: 'utf8',
    });
    assert.equal(installed.status, 0, `npm install -g failed: ${installed.stderr}`);
    const version = spawnSync(join(prefix, 'bin', 'freeform-bridge'), ['--version'], { encoding: 'utf8' });
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout, `${manifest.version}\n`);
  });

  it('npx ./<tarball> serve installs offline from an empty cache and serves /healthz, /v1/models and a Codex turn', async () => {
    const cache = join(folder, 'npm-cache');
    mkdirSync(cache);
    const child: ChildProcess = spawn('npx', ['--yes', '--offline', `./${tarball}`, 'serve', '--backend', backend.url, '--port', '0'], {
      cwd: folder,
      env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // npm runs the bin through `sh -c`, which does not pass signals on: stop the whole group.
      detached: true,
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
    try {
      const line = await new Promise<string>((resolveLine, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolveLine);
        child.once('exit', (code) => reject(new Error(`npx exited with ${code} before the ready line:\n${stderr}`)));
      });
      const match = /^freeform-bridge listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
      assert.ok(match, `unexpected ready line: ${line}`);
      const url = match[1]!;

      const health = await fetch(`${url}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: 'ok', name: 'freeform-bridge', version: manifest.version, backend: backend.url });

      const listModels = async (base: string): Promise<string[]> => ((await (await fetch(`${base}/models`)).json()) as { data: Array<{ id: string }> }).data.map((model) => model.id);
      const served = await listModels(backend.url);
      assert.ok(served.length > 0);
      assert.deepEqual(await listModels(`${url}/v1`), served);

      backend.enqueue({ toolCalls: [{ name: 'apply_patch', input: '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n' }] });
      const exchange = await readSseEvents(await postResponses(url, readCapture('b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json')));
      const [item] = itemsDone(exchange.events);
      assert.equal(item?.type, 'custom_tool_call');
      assert.equal(item?.name, 'apply_patch');
    } finally {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      await exited;
    }
  });
});
