import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runCodexConfigCommand } from '../../../src/cli/codex-config-command.ts';
import { checkCodexAvailability } from '../../../harness/codex-session.ts';
import { makeTempDir } from '../../support/cleanup.ts';

/**
 * The written files against the real Codex CLI (the pinned `@openai/codex` devDependency), with
 * `--strict-config` so any key Codex does not know fails the run. Codex talks to a loopback mock
 * Responses server that records each request and answers the minimal stream Codex accepts (docs/WIRE.md).
 */


// The real Codex CLI is a prerequisite (npm ci installs it); missing, this file fails at once naming it.
const codexBinary = checkCodexAvailability().binary;

const MINIMAL_STREAM =
  'data: {"type":"response.output_item.done","item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi from the mock"}]}}\n\n' +
  'data: {"type":"response.completed","response":{"id":"resp_1"}}\n\n';

interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

interface Tool {
  type: string;
  name?: string;
  tools?: Tool[];
}

function describeTools(tools: readonly Tool[] | undefined): string[] {
  return (tools ?? []).map((tool) => (tool.type === 'namespace' ? `namespace:${tool.name}{${describeTools(tool.tools).join(',')}}` : `${tool.type}:${tool.name ?? ''}`));
}

async function writeConfig(codexHome: string, baseUrl: string, extraArguments: string[]): Promise<void> {
  let stderr = '';
  const code = await runCodexConfigCommand(
    ['--codex-home', codexHome, '--base-url', baseUrl, '--model', 'qwen3-coder', '--token-env', 'BRIDGE_TOKEN_FOR_TEST', '--offline', ...extraArguments],
    {
      stdout: () => undefined,
      stderr: (text) => {
        stderr += text;
      },
      env: { BRIDGE_TOKEN_FOR_TEST: 'real-codex-token', HOME: codexHome },
    },
  );
  assert.equal(code, 0, stderr);
}

function runCodex(codexHome: string, profile: string | null): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const workspace = makeTempDir('freeform-bridge-codex-workspace-');
  const environment: NodeJS.ProcessEnv = { ...process.env, CODEX_HOME: codexHome };
  // The profile must work on its own: no token or OpenAI key from the environment.
  delete environment.BRIDGE_TOKEN_FOR_TEST;
  delete environment.OPENAI_API_KEY;
  const profileArguments = profile === null ? [] : ['-p', profile];
  const child = spawn(
    codexBinary,
    ['exec', '--strict-config', ...profileArguments, '--skip-git-repo-check', '--ephemeral', '-s', 'read-only', 'say hi'],
    // stdin closed: `codex exec` waits for EOF on a piped stdin.
    { cwd: workspace, env: environment, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('Codex config accepted by the real Codex CLI', () => {
  let server: Server;
  let baseUrl: string;
  const requests: RecordedRequest[] = [];

  before(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      request.on('end', () => {
        requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: body ? (JSON.parse(body) as Record<string, unknown>) : {} });
        if (request.method !== 'POST' || !request.url?.startsWith('/v1/responses')) {
          response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not here"}}');
          return;
        }
        response.writeHead(200, { 'content-type': 'text/event-stream' }).end(MINIMAL_STREAM);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  /** The provider's `model_catalog_url`, fetched with the bridge token (this mock answers 404: a bridge that is down). */
  function assertCatalogFetched(made: readonly RecordedRequest[], surface: string): void {
    const fetches = made.filter((request) => request.method === 'GET');
    assert.ok(fetches.length >= 1, `Codex did not fetch the model catalog: ${made.map((request) => `${request.method} ${request.url}`).join(', ')}`);
    assert.match(fetches[0]!.url, new RegExp(`^/v1/codex/models\\?tool_surface=${surface}&client_version=\\d+\\.\\d+\\.\\d+$`));
    assert.equal(fetches[0]!.headers.authorization, 'Bearer real-codex-token');
  }

  async function runSurface(surface: string): Promise<RecordedRequest> {
    const codexHome = join(makeTempDir(`freeform-bridge-real-codex-${surface}-`), 'codex-home');
    await writeConfig(codexHome, baseUrl, ['--tool-surface', surface, '--context-window', '32768']);
    const before = requests.length;
    const result = await runCodex(codexHome, 'freeform-bridge');
    assert.equal(result.code, 0, `codex exited ${result.code}\n${result.stderr}`);
    assert.match(result.stdout, /Hi from the mock/);
    assert.doesNotMatch(result.stderr, /unknown configuration field|Error loading config/);
    const made = requests.slice(before);
    // A profile's model_catalog_json replaces every catalog, the provider's URL included; without one
    // (the functions surface) Codex fetches the live catalog.
    if (surface === 'functions') assertCatalogFetched(made, surface);
    else assert.deepEqual(made.filter((request) => request.method === 'GET'), []);
    const first = made.find((request) => request.method === 'POST');
    assert.ok(first, 'Codex sent no request to the mock');
    assert.equal(first.url, '/v1/responses');
    assert.equal(first.headers.authorization, 'Bearer real-codex-token');
    assert.equal(first.body.model, 'qwen3-coder');
    return first;
  }

  it('functions: fallback metadata, only function-style tools', async () => {
    const request = await runSurface('functions');
    const tools = describeTools(request.body.tools as Tool[]);
    assert.ok(tools.includes('function:exec_command'), tools.join(' '));
    assert.equal(tools.filter((tool) => tool.startsWith('custom:')).length, 0, tools.join(' '));
  });

  it('freeform: the catalog entry adds the custom apply_patch tool', async () => {
    const request = await runSurface('freeform');
    const tools = request.body.tools as Tool[];
    const applyPatch = tools.find((tool) => tool.name === 'apply_patch');
    assert.equal(applyPatch?.type, 'custom');
    assert.ok(describeTools(tools).includes('function:exec_command'));
  });

  it('code-mode: no top-level tools, an additional_tools carrier with the custom exec tool', async () => {
    const request = await runSurface('code-mode');
    assert.equal(request.body.tools, undefined);
    assert.equal(request.body.parallel_tool_calls, false);
    const carrier = (request.body.input as Array<{ type: string; tools?: Tool[] }>).find((item) => item.type === 'additional_tools');
    assert.ok(carrier, 'no additional_tools input item');
    const functions = carrier.tools?.find((tool) => tool.type === 'namespace' && tool.name === 'functions');
    assert.equal(functions?.tools?.find((tool) => tool.name === 'exec')?.type, 'custom');
  });

  it('--make-default: plain `codex` (no -p) goes through the bridge and the edited config.toml passes --strict-config', async () => {
    const codexHome = join(makeTempDir('freeform-bridge-real-codex-default-'), 'codex-home');
    mkdirSync(codexHome, { recursive: true });
    const original = [
      '# My Codex config',
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
      '',
    ].join('\r\n');
    writeFileSync(join(codexHome, 'config.toml'), original);
    await writeConfig(codexHome, baseUrl, ['--make-default']);
    assert.match(readFileSync(join(codexHome, 'config.toml'), 'utf8'), /\r\n\[model_providers\.freeform-bridge\]\r\n/);
    const before = requests.length;
    const result = await runCodex(codexHome, null);
    assert.equal(result.code, 0, `codex exited ${result.code}\n${result.stderr}`);
    assert.match(result.stdout, /Hi from the mock/);
    assertCatalogFetched(requests.slice(before), 'freeform');
    const request = requests.slice(before).find((candidate) => candidate.method === 'POST');
    assert.ok(request, 'Codex sent no request to the mock');
    assert.equal(request.headers.authorization, 'Bearer real-codex-token');
    assert.equal(request.body.model, 'qwen3-coder');
  });
});
