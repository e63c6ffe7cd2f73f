/**
 * The live traffic panel in a real VS Code (code-server + headless Chromium),
 * driven like a user: the command palette opens it, the mouse and keyboard work it, and what it shows
 * is read from the webview's inner iframe.
 *
 * The extension-host half (traffic-panel-ui/driver.ts, loaded as extensionTestsPath) runs a scripted
 * session through the real bridge against a mock vLLM backend started here. This half checks that the
 * panel shows the round trips (from the snapshot and as appends), the lifted apply_patch call with its
 * hostile HTML/script input verbatim as text, and its grammar_mismatch warning with the call id; that
 * nothing in the payload became markup or ran; then it saves test-results/traffic-panel.png.
 *
 * Usage: node --import tsx test/vscode/run-traffic-panel-ui-test.ts (npm run test:vscode runs it).
 * Needs CODE_SERVER_BIN / CODE_SERVER_NODE_BIN / CHROMIUM_PATH from scripts/setup-code-server.sh, and a
 * built extension (npm run build). Environment: FREEFORM_BRIDGE_VSCODE_KEEP=1 keeps the code-server
 * folder; FREEFORM_BRIDGE_VSCODE_SCREENSHOTS=DIR puts the screenshots there (default test-results/).
 * Prints a closing `N passed, N failed`; exits non-zero on any failure.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { format } from 'node:util';
import * as esbuild from 'esbuild';
import { chromium, type Browser, type FrameLocator, type Page } from 'playwright-core';
import { startMockBackend, type MockBackend } from '../../mock-backend/create-mock-backend.ts';
import { assertThat, createCheckRecorder, runPhase } from './check-recorder.ts';
import { CHROMIUM_ARGUMENTS, printLogTail, runPaletteCommand, startCodeServer, type CodeServer } from '../../harness/code-server-harness.ts';
import { CAPTURE_VARIABLE, CONTROL_DIRECTORY_VARIABLE, DONE_FILE, HOSTILE_PATCH, SNAPSHOT_CHECKED_FILE, UI_MARKER, type DriverPhase } from './traffic-panel-ui/markers.ts';
import { fixturePath } from '../support/fixtures.ts';

const workspace = 'test/vscode/fixtures/workspace';
const keep = process.env.FREEFORM_BRIDGE_VSCODE_KEEP === '1';
const screenshotFolder = resolve(process.env.FREEFORM_BRIDGE_VSCODE_SCREENSHOTS ?? 'test-results');
const UI_TIMEOUT_MS = Number(process.env.FREEFORM_BRIDGE_VSIX_UI_TIMEOUT_MS ?? 90_000);
const TOTAL_TIMEOUT_MS = Number(process.env.FREEFORM_BRIDGE_VSCODE_TIMEOUT_MS ?? 300_000);
/** Codex 0.171 with the freeform apply_patch tool (lark grammar), from the reference pack beside the repository. */
const CAPTURE = fixturePath('captures/b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req1.json');
const NOISE = /^Creation of workbench contribution|^\[(AgentHost|ChatModelSelection|AccountPolicyGate|reconnection-grace-time)|^(Resolving|Resolved) connection token|^Creating a socket|^Updating additional builtin|^\[Service Worker\]|getaddrinfo ENOTFOUND|Timed out waiting for authentication provider/;

const recorder = createCheckRecorder();
const { tally, elapsed, check } = recorder;


async function bundleDriver(): Promise<string> {
  const outfile = resolve('out/test/vscode/traffic-panel-ui/driver.js');
  await esbuild.build({
    entryPoints: ['test/vscode/traffic-panel-ui/driver.ts'],
    outfile,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    bundle: true,
    sourcemap: 'inline',
    external: ['vscode'],
    logLevel: 'warning',
  });
  return outfile;
}

/** Driver phases as they arrive through codeAutomationLog. */
class PhaseInbox {
  private readonly seen = new Map<string, DriverPhase>();
  private readonly waiters = new Set<() => void>();

  push(phase: DriverPhase): void {
    this.seen.set(phase.phase, phase);
    for (const wake of this.waiters) wake();
  }

  async next<P extends DriverPhase['phase']>(name: P, timeoutMs: number): Promise<Extract<DriverPhase, { phase: P }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const failure = this.seen.get('failed');
      if (failure?.phase === 'failed') throw new Error(`the extension-host driver failed: ${failure.message}`);
      const found = this.seen.get(name);
      if (found) return found as Extract<DriverPhase, { phase: P }>;
      if (Date.now() > deadline) throw new Error(`timed out waiting for the driver's "${name}"`);
      await new Promise<void>((wake) => {
        const timer = setTimeout(wake, 500);
        this.waiters.add(() => {
          clearTimeout(timer);
          wake();
        });
      });
      this.waiters.clear();
    }
  }
}

async function rowCount(panel: FrameLocator): Promise<number> {
  return panel.locator('#list [role="option"]').count();
}

async function waitForRows(panel: FrameLocator, accept: (count: number) => boolean, what: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const count = await rowCount(panel);
    if (accept(count)) return count;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the list has ${count} rows`);
    await new Promise((wake) => setTimeout(wake, 200));
  }
}

async function main(): Promise<number> {
  let backend: MockBackend | null = null;
  let server: CodeServer | null = null;
  let browser: Browser | null = null;
  let page: Page | null = null;
  const control = mkdtempSync(join(tmpdir(), 'freeform-bridge-traffic-ui-'));
  const inbox = new PhaseInbox();
  let exitCode: number | null = null;
  const finishDriver = (verdict: { ok: boolean; message?: string }): void => writeFileSync(join(control, DONE_FILE), JSON.stringify(verdict));
  const watchdog = setTimeout(() => {
    console.error(`TIMEOUT after ${TOTAL_TIMEOUT_MS / 1000} s`);
    finishDriver({ ok: false, message: 'timeout' });
  }, TOTAL_TIMEOUT_MS);
  try {
    const driver = await bundleDriver();
    backend = await startMockBackend({ profile: 'vllm-hermes' });
    backend.enqueue(
      // 1: a patch the grammar rejects, carrying markup and script, and an exec_command cut mid-JSON.
      { text: 'Patching index.html.', toolCalls: [{ name: 'apply_patch', input: HOSTILE_PATCH }, { name: 'exec_command', arguments: '{"cmd": "cat index.ht' }], usage: { prompt_tokens: 5120, completion_tokens: 96 } },
      // 2: a good patch and a function call.
      { toolCalls: [{ name: 'apply_patch', input: '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n' }, { name: 'exec_command', arguments: { cmd: 'ls -la' } }], usage: { prompt_tokens: 5300, completion_tokens: 40 } },
      // 3: the backend is overloaded.
      { failure: 'overloaded' },
    );
    server = await startCodeServer({
      workspace,
      keep,
      settings: { 'freeformBridge.backendUrl': backend.url, 'workbench.colorTheme': 'Default Dark Modern' },
      environment: { [CONTROL_DIRECTORY_VARIABLE]: control, [CAPTURE_VARIABLE]: CAPTURE },
    });
    console.log(`code-server ${server.url} up after ${elapsed()}`);
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGUMENTS });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const workbench = page;
    const dialogs: string[] = [];
    // An alert() from a payload would surface here (dialogs of every frame belong to the page).
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => console.error('[pageerror]', error.message));
    await page.exposeFunction('codeAutomationLog', (type: string, parts: unknown[]) => {
      const line = format(...parts);
      if (line.startsWith(UI_MARKER)) {
        inbox.push(JSON.parse(line.slice(UI_MARKER.length)) as DriverPhase);
        return;
      }
      if (NOISE.test(line)) return;
      if (type === 'error' || type === 'warn') console.error(line);
      else console.log(line);
    });
    await page.exposeFunction('codeAutomationExit', (code: number) => {
      exitCode = code;
    });
    const host = new URL(server.url).host;
    const remote = (path: string): string => `vscode-remote://${host}${resolve(path)}`;
    const payload = JSON.stringify([
      ['extensionDevelopmentPath', remote('.')],
      ['extensionTestsPath', remote(driver)],
      ['skipWelcome', 'true'],
    ]);
    await page.goto(`${server.url}/?folder=${encodeURIComponent(resolve(workspace))}&payload=${encodeURIComponent(payload)}`);

    const first = await check('the driver ran the first scripted exchange through the bridge (malformed apply_patch with HTML and script)', async () => {
      const phase = await inbox.next('first-exchange-done', UI_TIMEOUT_MS + 60_000);
      assertThat(phase.payload === HOSTILE_PATCH, `the bridge delivered the input unchanged; got ${JSON.stringify(phase.payload)}`);
      return phase;
    });

    const panel = workbench.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    await check('"Freeform Bridge: Show Live Traffic" from the command palette opens the panel with the earlier round trip (snapshot)', async () => {
      await workbench.locator('.monaco-workbench').click({ position: { x: 720, y: 450 } });
      await runPaletteCommand(workbench, 'Freeform Bridge: Show Live Traffic');
      await workbench.locator('.tabs-container .tab', { hasText: 'Freeform Bridge Traffic' }).first().waitFor({ timeout: 20_000 });
      await panel.locator('#title', { hasText: 'Live traffic' }).waitFor({ timeout: 30_000 });
      await waitForRows(panel, (count) => count === 1, 'the snapshot row');
      // Marks the row's element: an update that rebuilt the list would lose the mark.
      await panel.locator('#list [role="option"]').first().evaluate((row) => row.setAttribute('data-snapshot-row', 'kept'));
      writeFileSync(join(control, SNAPSHOT_CHECKED_FILE), '');
    });

    await check('the round trips made while the panel is open are appended live', async () => {
      await inbox.next('traffic-done', 90_000);
      await waitForRows(panel, (count) => count === 3, 'three rows');
      const labels = await panel.locator('#list [role="option"]').evaluateAll((rows) => rows.map((row) => row.getAttribute('aria-label') ?? ''));
      assertThat(/failed|incomplete/.test(labels[0] ?? '') && /503|failed/.test(labels[0] ?? ''), `newest first: the overload error on top; labels ${JSON.stringify(labels)}`);
      assertThat(/1 lifted call/.test(labels[2] ?? '') && /warnings?/.test(labels[2] ?? ''), `the first exchange at the bottom with its call and warnings: ${labels[2]}`);
      const marks = await panel.locator('#list [role="option"]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-snapshot-row') ?? ''));
      assertThat(JSON.stringify(marks) === JSON.stringify(['', '', 'kept']), `the new rows are added and the snapshot row is kept, not redrawn: marks ${JSON.stringify(marks)}`);
    });

    await check('the list is keyboard navigable: End then Enter opens the first round trip', async () => {
      await panel.locator('#list').focus();
      await panel.locator('#list').press('End');
      await panel.locator('#list').press('Enter');
      await panel.locator('#detail-title').waitFor({ timeout: 10_000 });
      const selected = await panel.locator('#list [role="option"][aria-selected="true"]').getAttribute('aria-label');
      assertThat(/1 lifted call/.test(selected ?? ''), `the selected row is the first exchange: ${selected}`);
    });

    await check('the lifted custom_tool_call shows its input verbatim, as text', async () => {
      const input = panel.locator('#section-lifted .lifted-input pre');
      await input.waitFor({ timeout: 10_000 });
      const text = await input.textContent();
      assertThat(text === HOSTILE_PATCH, `the input differs: ${JSON.stringify(text)}`);
      const callIds = await panel.locator('#section-lifted .call-id').allTextContents();
      assertThat(callIds.includes(first.callId), `the call id ${first.callId} is shown: ${JSON.stringify(callIds)}`);
      assertThat((await panel.locator('#section-lifted .lifted-input .ws-newline').count()) === 4, 'four line breaks are marked');
      assertThat((await panel.locator('#section-lifted .lifted-input .ws-trailing').count()) >= 1, 'the trailing blanks are marked');
    });

    await check('its grammar_mismatch warning shows with the call id, the raw payload as text, and what was delivered', async () => {
      const warning = panel.locator('#section-warnings article.warning', { hasText: 'grammar_mismatch' });
      await warning.first().waitFor({ timeout: 10_000 });
      const text = (await warning.first().textContent()) ?? '';
      assertThat(text.includes(first.callId), `the warning names the call: ${text}`);
      const raw = await warning.first().locator('pre').first().textContent();
      assertThat(raw === HOSTILE_PATCH, `the raw payload is verbatim: ${JSON.stringify(raw)}`);
      assertThat(/Delivered\s+unchanged/.test(text), `what was delivered is said: ${text}`);
      const truncated = panel.locator('#section-warnings article.warning', { hasText: 'truncated' });
      assertThat((await truncated.count()) === 1, 'the truncated exec_command call is a warning too');
      assertThat(((await truncated.first().textContent()) ?? '').includes('Nothing was delivered'), 'and says nothing was delivered for it');
    });

    await check('nothing in the payloads became markup or ran (no <img>, no <b>, no <script> in the content, only our script loaded, no dialog)', async () => {
      assertThat((await panel.locator('img').count()) === 0, 'an <img> element exists in the panel');
      assertThat((await panel.locator('b').count()) === 0, 'a <b> element exists in the panel');
      assertThat((await panel.locator('#app script').count()) === 0, 'a <script> element exists in the rendered content');
      // Besides ours, the page holds only what VS Code injects into every webview (inline, no src).
      const sources = await panel.locator('script[src]').evaluateAll((scripts) => scripts.map((script) => script.getAttribute('src') ?? ''));
      assertThat(sources.length === 1 && /\/dist\/media\/traffic-panel\.js$/.test(sources[0] ?? ''), `scripts loaded from: ${JSON.stringify(sources)}`);
      await new Promise((wake) => setTimeout(wake, 500));
      assertThat(dialogs.length === 0, `dialogs were opened: ${JSON.stringify(dialogs)}`);
    });

    await check('the lowered request opens on demand, with the bridged apply_patch tool and tool_choice marked', async () => {
      await panel.locator('#section-lowered button').click();
      const mark = panel.locator('#section-lowered .badge.mark', { hasText: 'bridged: custom tool apply_patch sent as function apply_patch' });
      await mark.first().waitFor({ timeout: 10_000 });
      const json = (await panel.locator('#section-lowered figure.payload pre').last().textContent()) ?? '';
      assertThat(json.includes('"messages"') && json.includes('"apply_patch"'), 'the request JSON is shown');
    });

    await check('filters: warnings only, by tool, by status; search in payloads', async () => {
      await panel.locator('#warnings-only').check();
      const withWarnings = await waitForRows(panel, (count) => count >= 1 && count < 3, 'fewer rows with warnings only');
      await panel.locator('#warnings-only').uncheck();
      await panel.locator('#status-filter').selectOption('failed');
      await waitForRows(panel, (count) => count === 1, 'one failed row');
      await panel.locator('#status-filter').selectOption('all');
      await panel.locator('#tool-filter').selectOption('exec_command');
      await waitForRows(panel, (count) => count === 2, 'two rows with exec_command');
      await panel.locator('#tool-filter').selectOption('');
      await panel.locator('#search').fill('onmouseover');
      await panel.locator('#search').press('Enter');
      await waitForRows(panel, (count) => count === 1, 'one row whose payloads contain "onmouseover"');
      await panel.locator('#search').fill('');
      await panel.locator('#search').press('Enter');
      await waitForRows(panel, (count) => count === 3, 'all rows again');
      console.log(`      warnings only: ${withWarnings} rows`);
    });

    await check('a screenshot of the panel with the lifted call and its warning is saved', async () => {
      await panel.locator('#section-lifted').evaluate((element) => element.scrollIntoView({ block: 'start' }));
      mkdirSync(screenshotFolder, { recursive: true });
      const file = join(screenshotFolder, 'traffic-panel.png');
      await workbench.screenshot({ path: file });
      console.log(`      ${file}`);
    });

    await check('"Copy as curl" answers in the panel\'s status line (copied, or why the clipboard refused)', async () => {
      await panel.locator('.detail-actions button', { hasText: 'Copy as curl' }).click();
      await panel.locator('#notice', { hasText: /curl command|clipboard/ }).waitFor({ timeout: 10_000 });
      console.log(`      "${(await panel.locator('#notice').textContent()) ?? ''}"`);
    });

    await check('"Open as JSON" on the lifted call opens it as a JSON document in an editor', async () => {
      await panel.locator('#section-lifted figure.payload button', { hasText: 'Open as JSON' }).first().click();
      const editor = workbench.locator('.editor-instance .view-lines', { hasText: 'custom_tool_call' });
      await editor.first().waitFor({ timeout: 20_000 });
    });

    finishDriver({ ok: true });
    const exitDeadline = Date.now() + 60_000;
    while (exitCode === null && Date.now() < exitDeadline) await new Promise((wake) => setTimeout(wake, 200));
    await check('the extension-host driver finished cleanly', async () => {
      assertThat(exitCode === 0, `the extension host exited with ${String(exitCode)}`);
    });
    return 0;
  } catch (error) {
    console.error(error);
    finishDriver({ ok: false, message: error instanceof Error ? error.message : String(error) });
    if (page) {
      mkdirSync(screenshotFolder, { recursive: true });
      await page.screenshot({ path: join(screenshotFolder, 'traffic-panel-failure.png') }).catch(() => undefined);
      console.error(`screenshot: ${join(screenshotFolder, 'traffic-panel-failure.png')}`);
    }
    if (server) printLogTail(server);
    tally.failed = Math.max(tally.failed, 1);
    return 1;
  } finally {
    clearTimeout(watchdog);
    await browser?.close().catch(() => undefined);
    await server?.stop();
    await backend?.close();
    rmSync(control, { recursive: true, force: true });
  }
}

runPhase('traffic panel UI: a scripted session through the bridge, seen in the live traffic panel', 'traffic panel UI', recorder, main);
