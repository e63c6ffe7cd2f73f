import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { REPOSITORY_ROOT } from '../support/repository-files.ts';
import { ESLint } from 'eslint';

/**
 * The layer rules and the webview's markup rules live in eslint.config.mjs; `npm run lint` enforces
 * them on the real sources. This file proves each rule fires: a snippet that breaks it, linted as if
 * it stood in the folder the rule guards, must be reported, and a snippet that keeps it must not.
 */
const repositoryRoot = REPOSITORY_ROOT;
const eslint = new ESLint({ cwd: repositoryRoot });

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: resolve(repositoryRoot, filePath) });
  return (result?.messages ?? []).filter((message) => message.severity === 2).map((message) => `${message.ruleId}: ${message.message}`);
}

async function assertRefused(filePath: string, code: string, pattern: RegExp): Promise<void> {
  const found = await problems(filePath, code);
  assert.ok(found.some((problem) => pattern.test(problem)), `${filePath}: expected a problem matching ${pattern} for:\n${code}\nfound: ${found.join('\n') || '(none)'}`);
}

async function assertAccepted(filePath: string, code: string): Promise<void> {
  assert.deepEqual(await problems(filePath, code), [], `${filePath}:\n${code}`);
}

describe('lint: layer rules', () => {
  it('src/core imports only zod\'s functional API, itself and Node built-ins that do no I/O', async () => {
    await assertRefused('src/core/x.ts', "import { readFileSync } from 'node:fs';\nexport const a = readFileSync;\n", /src\/core is pure/);
    await assertRefused('src/core/x.ts', "import { request } from 'undici';\nexport const a = request;\n", /src\/core is pure/);
    await assertRefused('src/core/lower/x.ts', "import { startBridgeServer } from '../../server/start-server.ts';\nexport const a = startBridgeServer;\n", /must not reach into the layers/);
    await assertAccepted('src/core/x.ts', "import * as z from 'zod/mini';\nimport { createHash } from 'node:crypto';\nexport const a = [z, createHash];\n");
  });

  it('src builds its schemas with zod\'s functional API (src/core/schema/zod.ts), never zod\'s default API', async () => {
    for (const folder of ['core', 'server', 'cli', 'codex-config', 'shared', 'extension']) {
      await assertRefused(`src/${folder}/x.ts`, "import { z } from 'zod';\nexport const a = z;\n", /Import z from src\/core\/schema\/zod\.ts/);
    }
    await assertAccepted('src/server/x.ts', "import * as z from '../core/schema/zod.ts';\nexport const a = z;\n");
  });

  it('src/server never imports vscode, src/extension or src/cli', async () => {
    await assertRefused('src/server/x.ts', "import * as vscode from 'vscode';\nexport const a = vscode;\n", /Only src\/extension may import vscode/);
    await assertRefused('src/server/x.ts', "import { activate } from '../extension/extension.ts';\nexport const a = activate;\n", /src\/server must not import src\/extension or src\/cli/);
    await assertRefused('src/server/x.ts', "import { main } from '../cli/main.ts';\nexport const a = main;\n", /src\/server must not import src\/extension or src\/cli/);
    await assertAccepted('src/server/x.ts', "import { parseJson } from '../core/parse-json.ts';\nexport const a = parseJson;\n");
  });

  it('src/server never imports Codex configuration; src/codex-config imports only src/core', async () => {
    await assertRefused('src/server/x.ts', "import { planCodexConfigWrite } from '../codex-config/plan-codex-config-write.ts';\nexport const a = planCodexConfigWrite;\n", /src\/server must not import Codex configuration/);
    await assertRefused('src/server/x.ts', "import { editTomlText } from '../core/codex-config/toml-edit.ts';\nexport const a = editTomlText;\n", /src\/server must not import Codex configuration/);
    await assertAccepted('src/server/x.ts', "import { renderLiveModelCatalog } from '../core/model-catalog/render-live-model-catalog.ts';\nexport const a = renderLiveModelCatalog;\n");
    await assertAccepted('src/cli/x.ts', "import { planCodexConfigWrite } from '../codex-config/plan-codex-config-write.ts';\nexport const a = planCodexConfigWrite;\n");
    await assertRefused('src/codex-config/x.ts', "import { startBridgeServer } from '../server/start-server.ts';\nexport const a = startBridgeServer;\n", /src\/codex-config may import only src\/core/);
    await assertRefused('src/codex-config/x.ts', "import * as vscode from 'vscode';\nexport const a = vscode;\n", /Only src\/extension may import vscode/);
  });

  it('src/cli never imports vscode or src/extension; src/shared imports only src/core', async () => {
    await assertRefused('src/cli/x.ts', "import { activate } from '../extension/extension.ts';\nexport const a = activate;\n", /src\/cli must not import src\/extension/);
    await assertRefused('src/cli/x.ts', "import * as vscode from 'vscode';\nexport const a = vscode;\n", /Only src\/extension may import vscode/);
    await assertRefused('src/shared/x.ts', "import { startBridgeServer } from '../server/start-server.ts';\nexport const a = startBridgeServer;\n", /src\/shared may import only src\/core/);
  });

  it('bench/, scripts/ and harness/ never import the tests', async () => {
    for (const filePath of ['bench/x.ts', 'bench/children/x.ts', 'scripts/x.ts', 'harness/x.ts']) {
      const up = filePath.split('/').length === 3 ? '../../' : '../';
      await assertRefused(filePath, `import { trackChild } from '${up}test/support/cleanup.ts';\nexport const a = trackChild;\n`, /must not import the tests/);
    }
    await assertRefused('scripts/x.mjs', "import { trackChild } from '../test/support/cleanup.ts';\nexport const a = trackChild;\n", /must not import the tests/);
    await assertAccepted('bench/x.ts', "import { startScriptedBackend } from '../mock-backend/scripted-backend.ts';\nimport { createRandom } from '../harness/deterministic-random.ts';\nexport const a = [startScriptedBackend, createRandom];\n");
  });

  it('media/ imports nothing of the host but the protocol, as types', async () => {
    await assertRefused('media/x.ts', "import { startBridgeServer } from '../src/server/start-server.ts';\nexport const a = startBridgeServer;\n", /media\/ may import only the webview protocol/);
    await assertRefused('media/x.ts', "import { hostMessageSchema } from '../src/shared/webview-protocol.ts';\nexport const a = hostMessageSchema;\n", /as types only/);
    await assertAccepted('media/x.ts', "import type { HostMessage } from '../src/shared/webview-protocol.ts';\nexport type A = HostMessage;\n");
  });
});

describe('lint: the webview never turns text into markup', () => {
  const cases: Array<[string, string]> = [
    ['innerHTML', 'export function f(element: HTMLElement, text: string): void {\n  element.innerHTML = text;\n}\n'],
    ['outerHTML', 'export function f(element: HTMLElement): string {\n  return element.outerHTML;\n}\n'],
    ['insertAdjacentHTML', "export function f(element: HTMLElement, text: string): void {\n  element.insertAdjacentHTML('beforeend', text);\n}\n"],
    ['document.write', 'export function f(text: string): void {\n  document.write(text);\n}\n'],
    ['DOMParser', "export function f(text: string): Document {\n  return new DOMParser().parseFromString(text, 'text/html');\n}\n"],
    ['eval', 'export function f(text: string): unknown {\n  return eval(text);\n}\n'],
    ['new Function', 'export function f(text: string): unknown {\n  return new Function(text);\n}\n'],
    ['setAttribute href', "export function f(element: HTMLElement, url: string): void {\n  element.setAttribute('href', url);\n}\n"],
    ['setAttribute onclick', "export function f(element: HTMLElement, code: string): void {\n  element.setAttribute('onclick', code);\n}\n"],
    ['attributes: { src }', 'export const node = { tag: "img", attributes: { src: "x" } };\n'],
  ];
  for (const [name, code] of cases) {
    it(`refuses ${name} in media/`, async () => {
      const found = await problems('media/x.ts', code);
      assert.ok(found.length > 0, `${name} passed lint:\n${code}`);
    });
  }

  it('accepts building nodes with textContent and harmless attributes', async () => {
    await assertAccepted(
      'media/x.ts',
      "export function f(text: string): HTMLElement {\n  const element = document.createElement('span');\n  element.textContent = text;\n  element.setAttribute('title', text);\n  element.setAttribute('aria-label', text);\n  return element;\n}\n",
    );
  });
});
