import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { runCodexConfigCommand } from '../../../src/cli/codex-config-command.ts';
import { makeTempDir } from '../../support/cleanup.ts';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCodexConfigCommand(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: { HOME: makeTempDir('freeform-bridge-home-'), ...env },
  });
  return { code, stdout, stderr };
}

function scratchHome(): string {
  return join(makeTempDir('freeform-bridge-codex-config-cli-'), 'codex');
}

const BASE = ['--base-url', 'http://127.0.0.1:18080/v1', '--model', 'qwen3-coder', '--offline'];

describe('freeform-bridge codex-config', () => {
  let server: Server;
  let serverUrl: string;
  const seenAuthorization: Array<string | undefined> = [];
  before(async () => {
    server = createServer((request, response) => {
      seenAuthorization.push(request.headers.authorization);
      if (request.url !== '/v1/models') return void response.writeHead(404).end();
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: [{ id: 'qwen3-coder', max_model_len: 40960 }, { id: 'gpt-oss-20b', max_model_len: 131072 }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('warns about a base URL Codex would take for Azure, and derives a provider id that is never openai or azure', async () => {
    const home = scratchHome();
    const azure = await run(['--base-url', 'https://mine.openai.azure.com/v1', '--model', 'qwen3-coder', '--offline', '--codex-home', home, '--profile', 'azure']);
    assert.equal(azure.code, 0, azure.stderr);
    assert.match(azure.stderr, /warning: the base URL https:\/\/mine\.openai\.azure\.com\/v1 contains 'openai\.azure\.', so Codex will treat this provider as Azure OpenAI/);
    const written = readFileSync(join(home, 'azure.config.toml'), 'utf8');
    assert.match(written, /^model_provider = "freeform-bridge-azure"$/m);
    assert.match(written, /^\[model_providers\.freeform-bridge-azure\]$/m);
    const loopback = await run([...BASE, '--codex-home', home, '--profile', 'OpenAI']);
    assert.equal(loopback.code, 0, loopback.stderr);
    assert.doesNotMatch(loopback.stderr, /Azure/);
    assert.match(readFileSync(join(home, 'OpenAI.config.toml'), 'utf8'), /^model_provider = "freeform-bridge-OpenAI"$/m);
  });

  it('exits 2 with a clear message on bad options', async () => {
    const home = scratchHome();
    const cases: Array<[string[], RegExp, NodeJS.ProcessEnv?]> = [
      [['--model', 'm', '--codex-home', home], /--base-url URL is required/],
      [['--base-url', 'http://127.0.0.1:1/v1', '--codex-home', home, '--offline'], /--model NAME is required/],
      [[...BASE, '--codex-home', home, '--tool-surface', 'chat'], /--tool-surface must be one of functions, freeform, code-mode, got 'chat'/],
      [[...BASE, '--codex-home', home, '--context-window', '12k'], /--context-window must be a positive integer/],
      [[...BASE, '--codex-home', home, '--context-window', '0'], /--context-window must be a positive integer/],
      [[...BASE, '--codex-home', home, '--token-env', 'NOT_SET_ANYWHERE'], /environment variable NOT_SET_ANYWHERE is not set or empty/],
      [['--base-url', 'http://127.0.0.1:18080', '--model', 'm', '--offline', '--codex-home', home], /must end in \/v1/],
      [[...BASE, '--codex-home', home, '--profile', 'a/b'], /profile name 'a\/b' is not allowed/],
      [[...BASE, '--codex-home', home, 'extra'], /unexpected argument 'extra'/],
    ];
    for (const [argv, pattern, env] of cases) {
      const result = await run(argv, env);
      assert.equal(result.code, 2, `${argv.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, pattern);
      assert.match(result.stderr, /Run `freeform-bridge codex-config --help` for usage/);
    }
    // An unknown flag is one clean line naming it and pointing at the help.
    const unknown = await run([...BASE, '--codex-home', home, '--bogus']);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, "freeform-bridge codex-config: unknown option '--bogus' (see `freeform-bridge codex-config --help`)\n");
    assert.equal(existsSync(home), false);
  });

  it('prints help, with --model optional as it is', async () => {
    const result = await run(['--help']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /--tool-surface S/);
    assert.match(result.stdout, /^ {2}freeform-bridge codex-config --base-url URL \[--model NAME\] \[options\]$/m);
    const modelOption = /^ {2}--model NAME {12}(.*\n(?: {26}.*\n)*)/m.exec(result.stdout)?.[1] ?? '';
    assert.match(modelOption, /default: the one model the\s+bridge lists/);
    assert.doesNotMatch(modelOption, /required/);
  });

  it('--dry-run prints a unified diff with the token redacted and writes nothing', async () => {
    const home = scratchHome();
    const result = await run([...BASE, '--codex-home', home, '--token-env', 'BRIDGE_TOKEN', '--dry-run'], { BRIDGE_TOKEN: 'super-secret-token' });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`^--- /dev/null\\n\\+\\+\\+ ${join(home, 'freeform-bridge.config.toml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    assert.match(result.stdout, /^\+experimental_bearer_token = "\[redacted\]"$/m);
    assert.doesNotMatch(result.stdout + result.stderr, /super-secret-token/);
    assert.match(result.stderr, /dry run: nothing written/);
    assert.equal(existsSync(home), false);
  });

  it('writes the profile with the token, reports it, and a second run changes nothing', async () => {
    const home = scratchHome();
    const argv = [...BASE, '--codex-home', home, '--token-env', 'BRIDGE_TOKEN', '--tool-surface', 'code-mode', '--context-window', '32768'];
    const first = await run(argv, { BRIDGE_TOKEN: 'super-secret-token' });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /wrote {3}.*freeform-bridge\.config\.toml/);
    assert.match(first.stdout, new RegExp(`CODEX_HOME=${home.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} codex -p freeform-bridge`));
    assert.doesNotMatch(first.stdout + first.stderr, /super-secret-token/);
    const profile = parseToml(readFileSync(join(home, 'freeform-bridge.config.toml'), 'utf8')) as {
      model_providers: Record<string, { experimental_bearer_token: string; model_catalog_url: string }>;
    };
    assert.equal(profile.model_providers['freeform-bridge']!.experimental_bearer_token, 'super-secret-token');
    assert.equal(profile.model_providers['freeform-bridge']!.model_catalog_url, 'http://127.0.0.1:18080/v1/codex/models?tool_surface=code-mode');
    const catalog = JSON.parse(readFileSync(join(home, 'freeform-bridge.model_catalog.json'), 'utf8')) as { models: Array<Record<string, unknown>> };
    assert.equal(catalog.models[0]!.tool_mode, 'code_mode_only');
    if (process.platform !== 'win32') assert.equal(statSync(join(home, 'freeform-bridge.config.toml')).mode & 0o777, 0o600);

    const second = await run(argv, { BRIDGE_TOKEN: 'super-secret-token' });
    assert.equal(second.code, 0);
    assert.match(second.stdout, /already up to date; nothing written/);
    const dryRun = await run([...argv, '--dry-run'], { BRIDGE_TOKEN: 'super-secret-token' });
    assert.match(dryRun.stdout, /^No changes/);
  });

  it('defaults --codex-home to $CODEX_HOME and prints the plain command then', async () => {
    const home = scratchHome();
    const result = await run(BASE, { CODEX_HOME: home });
    assert.equal(result.code, 0, result.stderr);
    // How Codex must be run for a patch to land: in a git repository, with a sandbox that may write.
    assert.match(result.stdout, /\nRun Codex through the bridge in a git repository:\n {2}codex -p freeform-bridge\n {2}codex exec -p freeform-bridge -s workspace-write "your task"\n/);
    assert.ok(existsSync(join(home, 'freeform-bridge.config.toml')));
  });

  it('takes the context window from GET /v1/models and sends the token there', async () => {
    const home = scratchHome();
    const result = await run(['--base-url', serverUrl, '--model', 'qwen3-coder', '--codex-home', home, '--token-env', 'T'], { T: 'list-token' });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /context window 40960 tokens, as reported by the server \(max_model_len\)/);
    assert.equal(seenAuthorization.at(-1), 'Bearer list-token');
    const profile = parseToml(readFileSync(join(home, 'freeform-bridge.config.toml'), 'utf8')) as Record<string, unknown>;
    assert.equal(profile.model_context_window, 40960);
  });

  it('lists the served models when --model is missing or unknown', async () => {
    const home = scratchHome();
    const missing = await run(['--base-url', serverUrl, '--codex-home', home]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--model NAME is required.*The bridge lists: qwen3-coder, gpt-oss-20b\./);
    const unknown = await run(['--base-url', serverUrl, '--model', 'typo', '--codex-home', home]);
    assert.equal(unknown.code, 0);
    assert.match(unknown.stderr, /warning: the bridge does not list model 'typo' \(it lists: qwen3-coder, gpt-oss-20b\); writing it anyway/);
  });

  it('carries on with a note when the models cannot be listed', async () => {
    const home = scratchHome();
    const result = await run(['--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--codex-home', home]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /note: could not list the bridge's models \(no bridge answers at http:\/\/127\.0\.0\.1:9\/v1 \(bad port\); start it with `freeform-bridge serve`, or pass --offline\)/);
    assert.doesNotMatch(result.stderr, /backend/, 'the stopped process is the bridge, not the backend');
  });

  it('exits 1 and leaves a malformed profile untouched', async () => {
    const home = scratchHome();
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'freeform-bridge.config.toml'), 'model = "x"\r\n[broken\r\n');
    const result = await run([...BASE, '--codex-home', home]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /freeform-bridge\.config\.toml is not valid TOML \(line 2/);
    assert.equal(readFileSync(join(home, 'freeform-bridge.config.toml'), 'utf8'), 'model = "x"\r\n[broken\r\n');
    assert.deepEqual(readdirSync(home), ['freeform-bridge.config.toml']);
  });

  it('--make-default edits config.toml with a backup and says what plain codex gets', async () => {
    const home = scratchHome();
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'config.toml'), '# mine\nmodel = "gpt-5.5"\n');
    const result = await run([...BASE, '--codex-home', home, '--make-default']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /backup {2}.*config\.toml\.bak-\d{8}T\d{6}Z/);
    assert.match(result.stdout, /Plain `CODEX_HOME=.* codex` and the Codex extension in VS Code now use the bridge too \(freeform surface, from the bridge's model catalog\)/);
    assert.match(result.stdout, /Developer: Reload Window/);
    assert.match(result.stdout, /Undo with: freeform-bridge codex-config --restore --codex-home /);
    assert.match(readFileSync(join(home, 'config.toml'), 'utf8'), /^# mine\nmodel = "qwen3-coder"\nmodel_provider = "freeform-bridge"\n\n\[model_providers\.freeform-bridge\]\n/);
  });

  it('--make-default over another model_provider prints the diff and refuses without --yes; --restore undoes it byte for byte', async () => {
    const home = scratchHome();
    mkdirSync(home, { recursive: true });
    const original = '# mine\nmodel = "gpt-5.5"\nmodel_provider = "azure"\n';
    writeFileSync(join(home, 'config.toml'), original);
    const refused = await run([...BASE, '--codex-home', home, '--make-default']);
    assert.equal(refused.code, 1);
    assert.match(refused.stdout, /^-model_provider = "azure"$/m);
    assert.match(refused.stdout, /^\+model_provider = "freeform-bridge"$/m);
    assert.match(refused.stderr, /needs confirmation: .*model_provider = "azure"/);
    assert.match(refused.stderr, /Nothing was written\. Run again with --yes/);
    assert.equal(readFileSync(join(home, 'config.toml'), 'utf8'), original);
    assert.deepEqual(readdirSync(home), ['config.toml']);

    const applied = await run([...BASE, '--codex-home', home, '--make-default', '--yes']);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(readFileSync(join(home, 'config.toml'), 'utf8'), /^model_provider = "freeform-bridge"$/m);

    const dryRun = await run(['--restore', '--codex-home', home, '--dry-run']);
    assert.equal(dryRun.code, 0, dryRun.stderr);
    assert.match(dryRun.stdout, /^-model_provider = "freeform-bridge"$/m);
    assert.match(dryRun.stdout, /^\+model_provider = "azure"$/m);
    assert.notEqual(readFileSync(join(home, 'config.toml'), 'utf8'), original);

    const restored = await run(['--restore', '--codex-home', home]);
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stdout, /restored .*config\.toml from .*config\.toml\.bak-/);
    assert.equal(readFileSync(join(home, 'config.toml'), 'utf8'), original);
    const again = await run(['--restore', '--codex-home', home]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /nothing to restore/);
    assert.equal((await run(['--restore', '--model', 'x', '--codex-home', home])).code, 2);
  });
});

describe('freeform-bridge codex-config through a running bridge', () => {
  it('takes the model id the engine serves and the context window the bridge\'s engine check read (Ollama: none on /v1/models)', async () => {
    const { startMockBackend } = await import('../../../mock-backend/create-mock-backend.ts');
    const { startTestBridge } = await import('../../support/bridge-harness.ts');
    const backend = await startMockBackend({ profile: 'ollama', models: ['qwen3-coder:30b'], contextWindow: 16_384 });
    const bridge = await startTestBridge({ backendUrl: backend.url });
    try {
      const home = scratchHome();
      const result = await run(['--base-url', `${bridge.url}/v1`, '--codex-home', home]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /note: model 'qwen3-coder:30b', the one the bridge serves/);
      assert.match(result.stderr, /context window 16384 tokens, as reported by the server \(the bridge's engine check\)/);
      const profile = parseToml(readFileSync(join(home, 'freeform-bridge.config.toml'), 'utf8')) as Record<string, unknown>;
      assert.deepEqual([profile.model, profile.model_context_window], ['qwen3-coder:30b', 16_384]);
    } finally {
      await bridge.close();
      await backend.close();
    }
  });
});
