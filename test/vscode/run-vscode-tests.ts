/**
 * Runs the extension's mocha suites inside a real VS Code extension host, offline: code-server's
 * Node extension host, with headless Debian Chromium as the workbench window. It is the same
 * contract as @vscode/test-electron's runTests({ extensionDevelopmentPath, extensionTestsPath })
 * (see run-test-electron.ts for machines that can download VS Code), per
 * test/vscode/README.md.
 *
 * Usage: node --import tsx test/vscode/run-vscode-tests.ts [extensionDevelopmentPath] [extensionTestsPath] [workspace]
 * Needs CODE_SERVER_BIN / CODE_SERVER_NODE_BIN / CHROMIUM_PATH from scripts/setup-code-server.sh.
 * Prints a closing `N passed, N failed` line; exits non-zero on any failure, crash or timeout.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { format } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGUMENTS, printLogTail, startCodeServer, type CodeServer } from '../../harness/code-server-harness.ts';
import { startFakeBackend, type FakeBackend } from './suite/fake-backend.ts';
import { HOSTILE_BACKEND_VARIABLE } from './suite/hostile-workspace.ts';
import { RESULT_MARKER } from './suite/result-marker.ts';

const [extensionPath = '.', testsPath = 'out/test/vscode/suite/index.js', fixtureWorkspace = 'test/vscode/fixtures/workspace'] = process.argv.slice(2);
const timeoutMs = Number(process.env.FREEFORM_BRIDGE_VSCODE_TIMEOUT_MS ?? 180_000);
const verbose = process.env.FREEFORM_BRIDGE_VSCODE_VERBOSE === '1';
const keep = process.env.FREEFORM_BRIDGE_VSCODE_KEEP === '1';

/** Offline noise from the workbench (gallery, telemetry, auth, agent host) that says nothing about our tests. */
const NOISE = /^Creation of workbench contribution|^Aborted onWillSaveTextDocument-event|^\[(AgentHost|ChatModelSelection|AccountPolicyGate|reconnection-grace-time)|^(Resolving|Resolved) connection token|^Creating a socket|^Updating additional builtin|^\[Service Worker\]|getaddrinfo ENOTFOUND|Timed out waiting for authentication provider/;

const startedAt = Date.now();
const elapsed = (): string => `${((Date.now() - startedAt) / 1000).toFixed(1)}s`;

let result: { passed: number; failed: number; skipped: number } | null = null;
/** Every text the extension's status bar item showed in the workbench's DOM while the suites ran. */
const statusBarTexts = new Set<string>();

/**
 * The suites see the status bar item through the extension's API; this checks, from the browser
 * side, that VS Code really renders it. Polled while the tests run, so it costs no extra start.
 */
async function recordStatusBarTexts(page: Page): Promise<void> {
  const texts = await page
    // A string, because this project type-checks without the DOM library; it runs in the page.
    .evaluate<string[]>("Array.from(document.querySelectorAll('.statusbar-item'), (element) => (element.textContent || '').replace(/\\s+/g, ' ').trim())")
    .catch(() => [] as string[]);
  for (const text of texts) if (text.startsWith('Bridge')) statusBarTexts.add(text);
}

/** What the runner did in the workbench on the suite's behalf, printed at the end. */
const userActions: string[] = [];

/**
 * Plays the user for the suite's interactive test (which runs only with FREEFORM_BRIDGE_VSCODE_UI_DRIVER=1):
 * takes the first item of each of the extension's quick picks. Modal dialogs cannot be answered
 * this way: the workbench refuses to show them while extension tests run.
 */
async function answerExtensionQuickPicks(page: Page): Promise<void> {
  try {
    const quickInput = page.locator('.quick-input-widget');
    if (!(await quickInput.isVisible())) return;
    const title = (await quickInput.locator('.quick-input-title').innerText({ timeout: 500 })).trim();
    if (!title.startsWith('Freeform Bridge:')) return;
    const firstRow = quickInput.locator('.quick-input-list .monaco-list-row').first();
    await firstRow.waitFor({ timeout: 2_000 });
    const label = (await firstRow.locator('.label-name').first().innerText({ timeout: 500 })).trim();
    // Focus may sit elsewhere (ignoreFocusOut keeps the pick open), so Enter alone can land in an
    // editor: focus the pick's own input first, then accept its active (first) item.
    await quickInput.locator('.quick-input-box input').focus({ timeout: 500 });
    await page.keyboard.press('Enter');
    userActions.push(`picked "${label}" in "${title}"`);
    await quickInput.waitFor({ state: 'hidden', timeout: 2_000 }).catch(() => undefined);
  } catch {
    // The workbench re-rendered between two steps; the next round looks again.
  }
}

function checkStatusBarRendered(): boolean {
  const seen = [...statusBarTexts];
  const passed = seen.some((text) => /^Bridge: off$/.test(text)) && seen.some((text) => /^Bridge :\d+ \d+/.test(text));
  console.log(`    ${passed ? '✔' : '✗'} (workbench DOM) the status bar item rendered off and on :PORT states; seen: ${JSON.stringify(seen)}`);
  return passed;
}
/**
 * The suites run in a copy of the fixture workspace whose own `.vscode/settings.json` points the
 * bridge at a backend of the repository's choosing and asks it to start on its own: the settings a
 * repository must not decide. Nothing may ever reach that backend; the runner, which owns it,
 * checks after the suites (the trusted folder: this profile turns workspace trust off, so every
 * folder is trusted).
 */
async function createHostileWorkspace(): Promise<{ folder: string; backend: FakeBackend }> {
  const backend = await startFakeBackend('answer from the backend the repository chose');
  const folder = mkdtempSync(join(tmpdir(), 'freeform-bridge-workspace-'));
  cpSync(fixtureWorkspace, folder, { recursive: true });
  mkdirSync(join(folder, '.vscode'), { recursive: true });
  const settings = {
    'freeformBridge.backendUrl': backend.url,
    'freeformBridge.autoStart': true,
    'freeformBridge.codexHome': join(folder, 'codex-home-from-the-repository'),
    'freeformBridge.model': 'model-from-the-repository',
  };
  writeFileSync(join(folder, '.vscode', 'settings.json'), `// Written by run-vscode-tests.ts: a repository trying to redirect the bridge.\n${JSON.stringify(settings, null, 2)}\n`);
  return { folder, backend };
}

function checkHostileBackendUntouched(backend: FakeBackend): boolean {
  const passed = backend.requests.length === 0;
  const seen = backend.requests.map((request) => `${request.method} ${request.path}${request.headers.authorization ? ' (with an Authorization header)' : ''}`);
  console.log(`    ${passed ? '✔' : '✗'} (runner) the backend the workspace's settings named received nothing; received: ${JSON.stringify(seen)}`);
  return passed;
}

let exitCode: number | null = null;
let server: CodeServer | null = null;
let browser: Browser | null = null;
let hostile: { folder: string; backend: FakeBackend } | null = null;

async function cleanUp(): Promise<void> {
  await browser?.close().catch(() => undefined);
  await server?.stop();
  await hostile?.backend.close();
  if (hostile && !keep) rmSync(hostile.folder, { recursive: true, force: true });
}

function finish(code: number, reason: string | null): never {
  const passed = result?.passed ?? 0;
  // A crash or timeout after the last reported test is a failure too, even if mocha counted none.
  const failed = Math.max(result?.failed ?? 0, code === 0 ? 0 : 1);
  if (reason) console.log(reason);
  console.log(`vscode tier finished in ${elapsed()}`);
  console.log(`${passed} passed, ${failed} failed${result ? `, ${result.skipped} skipped` : ''}`);
  process.exit(failed > 0 ? Math.max(code, 1) : 0);
}

process.once('SIGINT', () => {
  void cleanUp().then(() => finish(130, 'interrupted'));
});

async function main(): Promise<never> {
  try {
    hostile = await createHostileWorkspace();
    const workspace = hostile.folder;
    // The extension host inherits code-server's environment: this tells the suite a user is being
    // played, and which backend the workspace's own settings name.
    server = await startCodeServer({ workspace, keep, environment: { FREEFORM_BRIDGE_VSCODE_UI_DRIVER: '1', [HOSTILE_BACKEND_VARIABLE]: hostile.backend.url } });
    console.log(`code-server ${server.url} up after ${elapsed()}`);
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGUMENTS });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // Both must exist before the workbench script runs, so expose them before goto.
    await page.exposeFunction('codeAutomationLog', (type: string, parts: unknown[]) => {
      // The workbench forwards console calls with their arguments: mocha's reporter uses printf-style formats.
      const line = format(...parts);
      if (line.startsWith(RESULT_MARKER)) {
        result = JSON.parse(line.slice(RESULT_MARKER.length)) as typeof result;
        return;
      }
      if (!verbose && NOISE.test(line)) return;
      if (process.env.FREEFORM_BRIDGE_VSCODE_TIMING === '1') process.stdout.write(`[${elapsed()}] `);
      if (type === 'error' || type === 'warn') console.error(line);
      else console.log(line);
    });
    await page.exposeFunction('codeAutomationExit', (code: number) => {
      exitCode = code;
    });
    page.on('pageerror', (error) => console.error('[pageerror]', error.message));
    const host = new URL(server.url).host;
    // vscode-remote:// makes the workbench load the extension and its tests in the Node extension host.
    const remote = (path: string): string => `vscode-remote://${host}${resolve(path)}`;
    const payload = JSON.stringify([
      ['extensionDevelopmentPath', remote(extensionPath)],
      ['extensionTestsPath', remote(testsPath)],
      ['skipWelcome', 'true'],
    ]);
    await page.goto(`${server.url}/?folder=${encodeURIComponent(resolve(workspace))}&payload=${encodeURIComponent(payload)}`);
    const deadline = Date.now() + timeoutMs;
    while (exitCode === null && Date.now() < deadline) {
      await recordStatusBarTexts(page);
      await answerExtensionQuickPicks(page);
      await new Promise((wake) => setTimeout(wake, 200));
    }
  } catch (error) {
    console.error(error);
    exitCode ??= 1;
  }

  const timedOut = exitCode === null;
  for (const action of userActions) console.log(`    (workbench) ${action}`);
  if (!timedOut && result) {
    for (const passed of [checkStatusBarRendered(), hostile ? checkHostileBackendUntouched(hostile.backend) : false]) {
      if (passed) result.passed += 1;
      else {
        result.failed += 1;
        exitCode = exitCode === 0 ? 1 : exitCode;
      }
    }
  }
  if (exitCode !== 0 && server) printLogTail(server);
  const cleanUpStartedAt = Date.now();
  await cleanUp();
  if (process.env.FREEFORM_BRIDGE_VSCODE_TIMING === '1') console.log(`clean-up took ${Date.now() - cleanUpStartedAt} ms`);
  finish(timedOut ? 124 : (exitCode ?? 1), timedOut ? `TIMEOUT: the extension host did not finish the tests within ${timeoutMs / 1000} s` : `extension host exited with code ${exitCode}`);
}

void main();
