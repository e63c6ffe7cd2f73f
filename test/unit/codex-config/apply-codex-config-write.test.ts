import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { applyCodexConfigWrite } from '../../../src/codex-config/apply-codex-config-write.ts';
import { CodexConfigFileError, type CodexConfigFileProblem } from '../../../src/codex-config/codex-config-file-error.ts';
import { formatCodexConfigPlanDiff } from '../../../src/codex-config/format-plan-diff.ts';
import { isCodexDefaultPointedAtBridge, planCodexConfigWrite, type CodexConfigWriteOptions } from '../../../src/codex-config/plan-codex-config-write.ts';
import { applyCodexConfigRestore, planCodexConfigRestore } from '../../../src/codex-config/restore-codex-config.ts';
import { RESTORE_RECORD_FILE_NAME } from '../../../src/codex-config/restore-record.ts';
import { makeTempDir } from '../../support/cleanup.ts';

const isRoot = process.getuid?.() === 0;
const onWindows = process.platform === 'win32';

function scratchHome(): string {
  return join(makeTempDir('freeform-bridge-codex-config-'), 'codex-home');
}

function writeOptions(codexHome: string, overrides: Partial<CodexConfigWriteOptions> = {}): CodexConfigWriteOptions {
  return {
    codexHome,
    profile: 'freeform-bridge',
    baseUrl: 'http://127.0.0.1:18080/v1',
    model: 'qwen3-coder',
    toolSurface: 'freeform',
    token: 'secret-token',
    contextWindow: null,
    ...overrides,
  };
}

async function write(codexHome: string, overrides: Partial<CodexConfigWriteOptions> = {}) {
  const plan = await planCodexConfigWrite(writeOptions(codexHome, overrides));
  return { plan, result: await applyCodexConfigWrite(plan) };
}

function parsePlain(text: string): Record<string, unknown> {
  return JSON.parse(JSON.stringify(parseToml(text))) as Record<string, unknown>;
}

async function assertRefused(run: () => Promise<unknown>, problem: CodexConfigFileProblem, pattern: RegExp): Promise<void> {
  await assert.rejects(run, (error: unknown) => {
    assert.ok(CodexConfigFileError.is(error), `expected a CodexConfigFileError, got ${String(error)}`);
    assert.equal(error.codexConfigFileProblem, problem);
    assert.match(error.message, pattern);
    return true;
  });
}

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

describe('planCodexConfigWrite + applyCodexConfigWrite', () => {
  it('creates CODEX_HOME (0700), the catalog and the profile (0600) and never config.toml', async () => {
    const codexHome = scratchHome();
    const { plan, result } = await write(codexHome, { contextWindow: 32768 });
    assert.equal(plan.createCodexHome, true);
    assert.deepEqual(plan.files.map((file) => file.role), ['model-catalog', 'profile']);
    assert.equal(result.createdCodexHome, true);
    assert.deepEqual(result.written, [join(codexHome, 'freeform-bridge.model_catalog.json'), join(codexHome, 'freeform-bridge.config.toml')]);
    assert.equal(plan.runCommand, 'codex -p freeform-bridge');
    if (!onWindows) {
      assert.equal(mode(codexHome), 0o700);
      assert.equal(mode(join(codexHome, 'freeform-bridge.config.toml')), 0o600);
      assert.equal(mode(join(codexHome, 'freeform-bridge.model_catalog.json')), 0o600);
    }
    assert.equal(existsSync(join(codexHome, 'config.toml')), false);
    const profile = parsePlain(readFileSync(join(codexHome, 'freeform-bridge.config.toml'), 'utf8'));
    assert.equal(profile.model_catalog_json, 'freeform-bridge.model_catalog.json');
    assert.equal(profile.model_context_window, 32768);
    assert.deepEqual(readdirSync(codexHome).sort(), ['freeform-bridge.config.toml', 'freeform-bridge.model_catalog.json']);
  });

  it('is idempotent: a second run plans no change and writes nothing', async () => {
    const codexHome = scratchHome();
    await write(codexHome, { makeDefault: true });
    const before = readdirSync(codexHome).map((name) => [name, lstatSync(join(codexHome, name)).ino, readFileSync(join(codexHome, name), 'utf8')]);
    const { plan, result } = await write(codexHome, { makeDefault: true });
    assert.ok(plan.files.every((file) => !file.changed));
    assert.equal(formatCodexConfigPlanDiff(plan, ['secret-token']), '');
    assert.deepEqual(result.written, []);
    assert.deepEqual(result.backups, []);
    assert.equal(result.unchanged.length, 3);
    const afterwards = readdirSync(codexHome).map((name) => [name, lstatSync(join(codexHome, name)).ino, readFileSync(join(codexHome, name), 'utf8')]);
    assert.deepEqual(afterwards, before);
  });

  it("keeps the user's own keys, comments and headers in an existing profile", async () => {
    const codexHome = scratchHome();
    await write(codexHome);
    const profilePath = join(codexHome, 'freeform-bridge.config.toml');
    const edited = readFileSync(profilePath, 'utf8')
      .replace('model = "qwen3-coder"\n', 'model = "qwen3-coder"\n# I like it thorough\nmodel_reasoning_effort = "high"\n')
      .replace('experimental_bearer_token = "secret-token"\n', 'experimental_bearer_token = "secret-token"\nhttp_headers = { "X-Team" = "blue" }\n');
    writeFileSync(profilePath, edited);
    await write(codexHome, { baseUrl: 'http://127.0.0.1:19999/v1', token: 'rotated-token' });
    const text = readFileSync(profilePath, 'utf8');
    assert.match(text, /# I like it thorough\nmodel_reasoning_effort = "high"\n/);
    const data = parsePlain(text) as { model_providers: Record<string, { base_url: string; http_headers: Record<string, string>; experimental_bearer_token: string; model_catalog_url: string }> };
    assert.equal(data.model_providers['freeform-bridge']!.base_url, 'http://127.0.0.1:19999/v1');
    assert.equal(data.model_providers['freeform-bridge']!.model_catalog_url, 'http://127.0.0.1:19999/v1/codex/models?tool_surface=freeform');
    assert.deepEqual(data.model_providers['freeform-bridge']!.http_headers, { 'X-Team': 'blue' });
    assert.equal(data.model_providers['freeform-bridge']!.experimental_bearer_token, 'rotated-token');
  });

  it('switching to the functions surface drops the catalog reference and writes no catalog', async () => {
    const codexHome = scratchHome();
    await write(codexHome);
    const { plan } = await write(codexHome, { toolSurface: 'functions', contextWindow: 4096 });
    assert.deepEqual(plan.files.map((file) => file.role), ['profile']);
    const data = parsePlain(readFileSync(join(codexHome, 'freeform-bridge.config.toml'), 'utf8'));
    assert.equal(data.model_catalog_json, undefined);
    assert.equal(data.model_context_window, 4096);
  });

  it('refuses a malformed profile and leaves it untouched byte for byte', async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    const profilePath = join(codexHome, 'freeform-bridge.config.toml');
    const malformed = 'model = "qwen3-coder"\r\nmodel_provider = \r\n[oops\r\n';
    writeFileSync(profilePath, malformed);
    await assertRefused(() => planCodexConfigWrite(writeOptions(codexHome)), 'malformed', /freeform-bridge\.config\.toml is not valid TOML \(line 2, column \d+/);
    assert.equal(readFileSync(profilePath, 'utf8'), malformed);
    assert.equal(existsSync(join(codexHome, 'freeform-bridge.model_catalog.json')), false);
  });

  it('refuses symlinked targets and leaves the link and its target alone', { skip: onWindows && 'symlinks need privileges on Windows' }, async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    const elsewhere = join(codexHome, '..', 'elsewhere.toml');
    writeFileSync(elsewhere, 'model = "mine"\n');
    symlinkSync(elsewhere, join(codexHome, 'freeform-bridge.config.toml'));
    await assertRefused(() => planCodexConfigWrite(writeOptions(codexHome)), 'symlink', /is a symbolic link \(to .*elsewhere\.toml\)/);
    assert.equal(readFileSync(elsewhere, 'utf8'), 'model = "mine"\n');

    const otherHome = scratchHome();
    mkdirSync(otherHome, { recursive: true });
    symlinkSync(elsewhere, join(otherHome, 'freeform-bridge.model_catalog.json'));
    await assertRefused(() => planCodexConfigWrite(writeOptions(otherHome)), 'symlink', /model_catalog\.json is a symbolic link/);
    assert.equal(readFileSync(elsewhere, 'utf8'), 'model = "mine"\n');
  });

  it('refuses an unreadable profile', { skip: (isRoot || onWindows) && 'root reads any file' }, async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    const profilePath = join(codexHome, 'freeform-bridge.config.toml');
    writeFileSync(profilePath, 'model = "x"\n');
    chmodSync(profilePath, 0o000);
    await assertRefused(() => planCodexConfigWrite(writeOptions(codexHome)), 'unreadable', /cannot read .*permission denied/);
  });

  it('refuses a target that is a folder, and a CODEX_HOME that is a file', async () => {
    const codexHome = scratchHome();
    mkdirSync(join(codexHome, 'freeform-bridge.config.toml'), { recursive: true });
    await assertRefused(() => planCodexConfigWrite(writeOptions(codexHome)), 'not-a-file', /not a regular file/);
    const fileHome = join(scratchHome(), '..', 'a-file');
    writeFileSync(fileHome, '');
    await assertRefused(() => planCodexConfigWrite(writeOptions(fileHome)), 'not-a-directory', /not a folder/);
  });

  it('writes nothing when a file changed between plan and apply', async () => {
    const codexHome = scratchHome();
    await write(codexHome);
    const plan = await planCodexConfigWrite(writeOptions(codexHome, { model: 'other-model' }));
    const profilePath = join(codexHome, 'freeform-bridge.config.toml');
    writeFileSync(profilePath, `${readFileSync(profilePath, 'utf8')}# edited meanwhile\n`);
    const catalogBefore = readFileSync(join(codexHome, 'freeform-bridge.model_catalog.json'), 'utf8');
    await assertRefused(() => applyCodexConfigWrite(plan), 'changed-since-plan', /changed since/);
    assert.equal(readFileSync(join(codexHome, 'freeform-bridge.model_catalog.json'), 'utf8'), catalogBefore);
  });

  it('narrows an existing profile readable by others to 0600 even when its content is unchanged', { skip: onWindows && 'no POSIX modes' }, async () => {
    const codexHome = scratchHome();
    await write(codexHome);
    const profilePath = join(codexHome, 'freeform-bridge.config.toml');
    chmodSync(profilePath, 0o644);
    const { plan, result } = await write(codexHome);
    assert.equal(plan.files.find((file) => file.role === 'profile')!.narrowMode, true);
    assert.deepEqual(result.written, []);
    assert.equal(mode(profilePath), 0o600);
  });

  it('leaves no temporary files behind', async () => {
    const codexHome = scratchHome();
    await write(codexHome, { makeDefault: true });
    await write(codexHome, { makeDefault: true, model: 'second' });
    assert.deepEqual(
      readdirSync(codexHome).filter((name) => name.endsWith('.tmp')),
      [],
    );
  });
});

describe('config.toml', () => {
  const tricky = [
    '\uFEFF# My Codex config',
    'model = "gpt-5.5"   # the best one',
    'approval_policy = "on-request"',
    '',
    '# providers I use',
    '[model_providers.azure]',
    'name = "Azure"',
    'base_url = "https://example.openai.azure.com/openai"',
    'env_key = "AZURE_OPENAI_API_KEY"',
    'query_params = { "api-version" = "2025-04-01-preview" }',
    '',
    '[shell_environment_policy]',
    'inherit = "core"   # keep it small',
    'exclude = [',
    '  "AWS_*",  # cloud',
    '  "AZURE_*",',
    ']',
    'big = 123456789012345678901',
    'when = 1979-05-27T07:32:00Z',
    '',
  ].join('\r\n');

  it('is only read without makeDefault, and problems that break `codex -p` become warnings', async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    const configPath = join(codexHome, 'config.toml');
    const config = 'profile = "old"\n[profiles.freeform-bridge]\nmodel = "x"\n[model_providers.freeform-bridge]\nenv_key = "NOPE"\n';
    writeFileSync(configPath, config);
    const { plan } = await write(codexHome);
    assert.equal(plan.warnings.length, 3);
    assert.match(plan.warnings[0]!, /top-level `profile = "old"`: Codex 0\.171 refuses to start/);
    assert.match(plan.warnings[1]!, /legacy \[profiles\.freeform-bridge\] table/);
    assert.match(plan.warnings[2]!, /also defines \[model_providers\.freeform-bridge\] with env_key/);
    assert.equal(readFileSync(configPath, 'utf8'), config);
  });

  it('a malformed config.toml is a warning without makeDefault and untouched', async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(join(codexHome, 'config.toml'), 'model = \n');
    const { plan } = await write(codexHome);
    assert.match(plan.warnings[0]!, /config\.toml is not valid TOML \(line 1/);
    assert.equal(readFileSync(join(codexHome, 'config.toml'), 'utf8'), 'model = \n');
  });

  it('makeDefault edits a tricky config.toml minimally (BOM, CRLF, comments, inline tables, other providers) with a byte-exact backup', async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    const configPath = join(codexHome, 'config.toml');
    writeFileSync(configPath, tricky);
    chmodSync(configPath, 0o644);
    const { plan, result } = await write(codexHome, { makeDefault: true, contextWindow: 65536, now: new Date('2025-02-03T04:05:06.789Z') });
    assert.deepEqual(result.backups, [`${configPath}.bak-20250203T040506Z`]);
    assert.deepEqual(readFileSync(`${configPath}.bak-20250203T040506Z`), Buffer.from(tricky, 'utf8'));
    const edited = readFileSync(configPath, 'utf8');
    const expected =
      tricky
        .replace('model = "gpt-5.5"   # the best one', 'model = "qwen3-coder"   # the best one')
        .replace('approval_policy = "on-request"\r\n', 'approval_policy = "on-request"\r\nmodel_provider = "freeform-bridge"\r\n') +
      [
        '',
        '[model_providers.freeform-bridge]',
        'name = "Freeform Bridge"',
        'base_url = "http://127.0.0.1:18080/v1"',
        'wire_api = "responses"',
        'experimental_bearer_token = "secret-token"',
        'model_catalog_url = "http://127.0.0.1:18080/v1/codex/models?tool_surface=freeform"',
        'request_max_retries = 2',
        'stream_max_retries = 1',
        '',
      ].join('\r\n');
    assert.equal(edited, expected);
    if (!onWindows) assert.equal(mode(configPath), 0o600);
    assert.match(formatCodexConfigPlanDiff(plan, ['secret-token']), /^-model = "gpt-5\.5" {3}# the best one\n\+model = "qwen3-coder" {3}# the best one\n/m);
    assert.doesNotMatch(formatCodexConfigPlanDiff(plan, ['secret-token']), /secret-token/);
  });

  it('makeDefault creates a missing config.toml without a backup', async () => {
    const codexHome = scratchHome();
    const { result } = await write(codexHome, { makeDefault: true, token: null });
    assert.deepEqual(result.backups, []);
    assert.deepEqual(parsePlain(readFileSync(join(codexHome, 'config.toml'), 'utf8')), {
      model: 'qwen3-coder',
      model_provider: 'freeform-bridge',
      model_providers: {
        'freeform-bridge': {
          name: 'Freeform Bridge',
          base_url: 'http://127.0.0.1:18080/v1',
          wire_api: 'responses',
          experimental_bearer_token: 'freeform-bridge-needs-no-token',
          model_catalog_url: 'http://127.0.0.1:18080/v1/codex/models?tool_surface=freeform',
          request_max_retries: 2,
          stream_max_retries: 1,
        },
      },
    });
  });

  it('makeDefault refuses a malformed config.toml and leaves it untouched', async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    const configPath = join(codexHome, 'config.toml');
    const malformed = '# mine\nmodel = "a"\nmodel = "b"\n';
    writeFileSync(configPath, malformed);
    await assertRefused(() => planCodexConfigWrite(writeOptions(codexHome, { makeDefault: true })), 'malformed', /config\.toml is not valid TOML.*\n.*left untouched/s);
    assert.equal(readFileSync(configPath, 'utf8'), malformed);
    assert.deepEqual(readdirSync(codexHome), ['config.toml']);
  });

  it('makeDefault refuses what it cannot edit safely and says what to add by hand', async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    const configPath = join(codexHome, 'config.toml');
    const inline = 'model_providers = { azure = { name = "Azure", base_url = "https://x/openai" } }\n';
    writeFileSync(configPath, inline);
    await assertRefused(
      () => planCodexConfigWrite(writeOptions(codexHome, { makeDefault: true })),
      'unsafe-edit',
      /cannot update .*config\.toml without disturbing.*inline value.*Add these settings by hand:\nmodel = "qwen3-coder"/s,
    );
    assert.equal(readFileSync(configPath, 'utf8'), inline);
  });

  it('makeDefault refuses a symlinked config.toml', { skip: onWindows && 'symlinks need privileges on Windows' }, async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    const dotfile = join(codexHome, '..', 'dotfiles-config.toml');
    writeFileSync(dotfile, 'model = "gpt-5.5"\n');
    symlinkSync(dotfile, join(codexHome, 'config.toml'));
    await assertRefused(() => planCodexConfigWrite(writeOptions(codexHome, { makeDefault: true })), 'symlink', /config\.toml is a symbolic link/);
    // Without makeDefault the link is only read, and the profile is written as usual.
    const { result } = await write(codexHome);
    assert.equal(result.written.length, 2);
    assert.equal(readFileSync(dotfile, 'utf8'), 'model = "gpt-5.5"\n');
  });
});

describe('config.toml: confirmation, foreign files and restore', () => {
  const original = '# mine\r\nmodel = "gpt-5.5"\r\nmodel_provider = "azure"   # work\r\n\r\n[model_providers.azure]\r\nname = "Azure"\r\nbase_url = "https://example.openai.azure.com/openai"\r\n';

  function homeWithConfig(context: { after: (hook: () => void) => void }, text: string | null): { codexHome: string; configPath: string } {
    const codexHome = scratchHome();
    context.after(() => rmSync(join(codexHome, '..'), { recursive: true, force: true }));
    mkdirSync(codexHome, { recursive: true });
    const configPath = join(codexHome, 'config.toml');
    if (text !== null) writeFileSync(configPath, text);
    return { codexHome, configPath };
  }

  it('asks before replacing another model_provider, and writes nothing without the confirmation', async (context) => {
    const { codexHome, configPath } = homeWithConfig(context, original);
    const plan = await planCodexConfigWrite(writeOptions(codexHome, { makeDefault: true }));
    assert.equal(plan.confirmations.length, 1);
    assert.match(plan.confirmations[0]!, /sets model_provider = "azure": this replaces it with "freeform-bridge".*--restore/);
    await assertRefused(() => applyCodexConfigWrite(plan), 'needs-confirmation', /nothing was written: .*model_provider = "azure"/);
    assert.deepEqual(readdirSync(codexHome), ['config.toml']);
    assert.equal(readFileSync(configPath, 'utf8'), original);
    const result = await applyCodexConfigWrite(plan, { confirmed: true });
    assert.equal(result.backups.length, 1);
    assert.match(readFileSync(configPath, 'utf8'), /^model_provider = "freeform-bridge" {3}# work\r$/m);
  });

  it('restore puts config.toml back byte for byte (mode too), even after a second --make-default', async (context) => {
    const { codexHome, configPath } = homeWithConfig(context, original);
    if (!onWindows) chmodSync(configPath, 0o640);
    await applyCodexConfigWrite(await planCodexConfigWrite(writeOptions(codexHome, { makeDefault: true, now: new Date('2025-01-01T00:00:00Z') })), { confirmed: true });
    // A second run (the port moved) must not make the bridge's own file the one to go back to.
    await applyCodexConfigWrite(await planCodexConfigWrite(writeOptions(codexHome, { makeDefault: true, baseUrl: 'http://127.0.0.1:18081/v1', now: new Date('2025-01-02T00:00:00Z') })));
    assert.match(readFileSync(configPath, 'utf8'), /127\.0\.0\.1:18081/);
    assert.equal(await isCodexDefaultPointedAtBridge(codexHome, 'freeform-bridge'), true);
    assert.equal(await isCodexDefaultPointedAtBridge(codexHome, 'freeform-bridge-other'), false);
    const plan = await planCodexConfigRestore(codexHome);
    assert.equal(plan.editedSinceWrite, false);
    assert.equal(plan.backupPath, `${configPath}.bak-20250101T000000Z`);
    const result = await applyCodexConfigRestore(plan);
    assert.deepEqual(result, { savedCurrentAs: null, restored: 'content' });
    assert.deepEqual(readFileSync(configPath), Buffer.from(original, 'utf8'));
    if (!onWindows) assert.equal(mode(configPath), 0o640);
    assert.equal(existsSync(join(codexHome, RESTORE_RECORD_FILE_NAME)), false);
    assert.equal(await isCodexDefaultPointedAtBridge(codexHome, 'freeform-bridge'), false);
    await assertRefused(() => planCodexConfigRestore(codexHome), 'nothing-to-restore', /nothing to restore/);
  });

  it('restore removes a config.toml that did not exist before', async (context) => {
    const { codexHome, configPath } = homeWithConfig(context, null);
    await write(codexHome, { makeDefault: true });
    assert.equal(existsSync(configPath), true);
    const result = await applyCodexConfigRestore(await planCodexConfigRestore(codexHome));
    assert.equal(result.restored, 'removed');
    assert.equal(existsSync(configPath), false);
  });

  it('restore over edits made since needs a confirmation and keeps the edited file as a backup', async (context) => {
    const { codexHome, configPath } = homeWithConfig(context, original);
    await applyCodexConfigWrite(await planCodexConfigWrite(writeOptions(codexHome, { makeDefault: true })), { confirmed: true });
    const edited = `${readFileSync(configPath, 'utf8')}approval_policy = "never"\r\n`;
    writeFileSync(configPath, edited);
    const plan = await planCodexConfigRestore(codexHome, new Date('2025-03-04T05:06:07Z'));
    assert.equal(plan.editedSinceWrite, true);
    await assertRefused(() => applyCodexConfigRestore(plan), 'needs-confirmation', /was edited after freeform-bridge changed it/);
    assert.equal(readFileSync(configPath, 'utf8'), edited);
    const result = await applyCodexConfigRestore(plan, { confirmed: true });
    assert.equal(result.savedCurrentAs, `${configPath}.bak-20250304T050607Z-before-restore`);
    assert.equal(readFileSync(result.savedCurrentAs, 'utf8'), edited);
    assert.deepEqual(readFileSync(configPath), Buffer.from(original, 'utf8'));
  });

  it('refuses a config.toml owned by another user and says what it would have added', { skip: !isRoot && 'needs root to give a file to another user' }, async (context) => {
    const { codexHome, configPath } = homeWithConfig(context, original);
    chownSync(configPath, 12345, 12345);
    await assertRefused(
      () => planCodexConfigWrite(writeOptions(codexHome, { makeDefault: true })),
      'foreign-owned',
      /belongs to another user \(uid 12345\).*left untouched.*\nThe settings it would have added to .*config\.toml:\nmodel = "qwen3-coder"/s,
    );
    assert.equal(readFileSync(configPath, 'utf8'), original);
    assert.deepEqual(readdirSync(codexHome), ['config.toml']);
  });
});

describe('--restore trusts only the files it knows', () => {
  it('a restore record pointing outside CODEX_HOME, or at other files in it, is refused and nothing is copied', async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(join(codexHome, 'config.toml'), 'model = "before"\n');
    await write(codexHome, { makeDefault: true });
    const recordPath = join(codexHome, RESTORE_RECORD_FILE_NAME);
    const record = JSON.parse(readFileSync(recordPath, 'utf8')) as { configPath: string; backupPath: string };
    const outside = join(makeTempDir('freeform-bridge-elsewhere-'), 'victim.txt');
    writeFileSync(outside, 'precious\n');
    const secret = join(codexHome, 'auth.json');
    writeFileSync(secret, '{"token":"x"}\n');
    for (const tampered of [
      { ...record, configPath: outside },
      { ...record, backupPath: secret },
      { ...record, backupPath: join(codexHome, '..', 'elsewhere', 'config.toml.bak-1') },
    ]) {
      writeFileSync(recordPath, JSON.stringify(tampered));
      await assertRefused(() => planCodexConfigRestore(codexHome), 'malformed', /restore record .* names a file freeform-bridge did not write/);
    }
    assert.equal(readFileSync(outside, 'utf8'), 'precious\n');
  });
});

describe('a read-only config.toml', () => {
  it('is replaced only when confirmed, and stays read-only', { skip: onWindows }, async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    const configPath = join(codexHome, 'config.toml');
    writeFileSync(configPath, 'model = "before"\n');
    chmodSync(configPath, 0o444);
    const plan = await planCodexConfigWrite(writeOptions(codexHome, { makeDefault: true }));
    await assertRefused(() => applyCodexConfigWrite(plan), 'needs-confirmation', /config\.toml is read-only \(mode 0444\)/);
    assert.equal(readFileSync(configPath, 'utf8'), 'model = "before"\n');
    await applyCodexConfigWrite(plan, { confirmed: true });
    assert.match(readFileSync(configPath, 'utf8'), /freeform-bridge/);
    assert.equal(mode(configPath), 0o400);
  });
});

describe('two --make-default runs at once', () => {
  it('only one writes; the other is refused, and the restore record matches the file written', async () => {
    const codexHome = scratchHome();
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(join(codexHome, 'config.toml'), 'model = "before"\n');
    const plans = await Promise.all(['first', 'second'].map((model) => planCodexConfigWrite(writeOptions(codexHome, { makeDefault: true, model }))));
    const outcomes = await Promise.allSettled(plans.map((plan) => applyCodexConfigWrite(plan)));
    assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected']);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
    assert.ok(CodexConfigFileError.is(refused.reason) && refused.reason.codexConfigFileProblem === 'changed-since-plan', String(refused.reason));
    const record = JSON.parse(readFileSync(join(codexHome, RESTORE_RECORD_FILE_NAME), 'utf8')) as { writtenSha256: string };
    assert.equal(record.writtenSha256, createHash('sha256').update(readFileSync(join(codexHome, 'config.toml'), 'utf8'), 'utf8').digest('hex'));
    assert.ok(!existsSync(join(codexHome, 'freeform-bridge.config.lock')), 'the lock is released');
  });
});
