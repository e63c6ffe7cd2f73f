/**
 * `npm run screenshots` (scripts/screenshots.sh installs the tools, then runs this): regenerates the
 * README's pictures from a real session, so they show what the product does today.
 *
 * The session is `npm run demo`'s (scripts/demo.session.json: a fenced apply_patch the bridge repairs,
 * the clean patch, exec_command, an answer), played by the project's mock backend imitating llama.cpp's
 * llama-server serving a GGUF file, and driven by the real Codex CLI. Three pictures:
 *
 *   traffic-panel.png  the packaged extension installed in code-server (VS Code in headless Chromium,
 *                      1440×900, dark theme, Explorer open): Start, Write Codex Config and Show Live
 *                      Traffic from the command palette as a user runs them, Codex run against the
 *                      profile it wrote, then the round trip with the lifted apply_patch and its warning
 *                      opened;
 *   terminal-live-view.png  what `freeform-bridge serve` printed in its terminal (a pseudo-terminal, so
 *                      in colour) while Codex ran the same session through it;
 *   doctor.png         `freeform-bridge doctor` against the mock llama-server.
 * The terminal pictures are the captured text drawn as a terminal by the same Chromium.
 *
 * Environment: FREEFORM_BRIDGE_SCREENSHOTS_DIR (default docs/images); FREEFORM_BRIDGE_VSCODE_KEEP=1 keeps
 * the code-server folder and the scratch folder (the session's workspaces, the captured terminal text);
 * FREEFORM_BRIDGE_SCREENSHOTS_TIMEOUT_MS (default 600000) bounds the whole run. Needs CODE_SERVER_BIN / CODE_SERVER_NODE_BIN / CHROMIUM_PATH from
 * scripts/setup-code-server.sh. Everything it starts is stopped on every path, a failure or Ctrl-C included.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startMockBackend, type MockBackend } from '../mock-backend/create-mock-backend.ts';
import { isRecord } from '../mock-backend/python-text.ts';
import { loadMockScript } from '../mock-backend/script.ts';
import { checkCodexAvailability, WITHOUT_CODEX_SANDBOX } from '../harness/codex-session.ts';
import { CHROMIUM_ARGUMENTS, printLogTail, runPaletteCommand, startCodeServer, type CodeServer } from '../harness/code-server-harness.ts';

const repositoryRoot = resolve(__dirname, '..');
const output = resolve(process.env.FREEFORM_BRIDGE_SCREENSHOTS_DIR ?? join(repositoryRoot, 'docs', 'images'));
const keep = process.env.FREEFORM_BRIDGE_VSCODE_KEEP === '1';
const cli = join(repositoryRoot, 'dist', 'cli.js');
/** How llama-server names a model it serves from a file: the path it was given. */
const MODEL = '/models/Qwen3-Coder-30B-A3B-Instruct-Q4_K_M.gguf';
const CONTEXT_WINDOW = 65_536;
const PROMPT = 'Create greet.sh that prints a greeting, then run it.';
const SESSION_SCRIPT = join(repositoryRoot, 'scripts', 'demo.session.json');
/** The README's own example port for `serve`; a free one when it is taken. */
const SERVE_PORT = 18080;
const UI_TIMEOUT_MS = 90_000;
const TOTAL_TIMEOUT_MS = Number(process.env.FREEFORM_BRIDGE_SCREENSHOTS_TIMEOUT_MS ?? 600_000);

// ---------------------------------------------------------------------------------------------
// Everything started here is stopped on every path

const cleanups: Array<() => unknown> = [];
let cleaning: Promise<void> | null = null;

function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const step of cleanups.reverse()) {
      try {
        await step();
      } catch (error) {
        console.error(`cleanup: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  })();
  return cleaning;
}

// Registered for good (not once): a second Ctrl-C must not end the process before the cleanup did.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`screenshots: ${signal}, stopping what was started`);
    void cleanUp().then(() => process.exit(130));
  });
}

/** A child in a process group of its own, stopped (the whole group) by the cleanup. */
function spawnOwned(command: string, commandArguments: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ChildProcess {
  const child = spawn(command, commandArguments, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => stopGroup(child));
  return child;
}

async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Already gone.
    }
  };
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  signalGroup('SIGINT');
  const timer = setTimeout(() => signalGroup('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Runs a command to its end without blocking this process: the mock backends it may talk to answer
 * from this process's own event loop.
 */
async function run(command: string, commandArguments: string[], what: string, options: { cwd?: string; env?: NodeJS.ProcessEnv; allowFailure?: boolean } = {}): Promise<string> {
  const child = spawnOwned(command, commandArguments, options);
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const timer = setTimeout(() => void stopGroup(child), 300_000);
  const code = await new Promise<number | null>((resolveExit) => child.once('close', (exitCode) => resolveExit(exitCode)));
  clearTimeout(timer);
  if (code !== 0 && options.allowFailure !== true) throw new Error(`${what} failed (exit ${code}):\n${text.slice(-3_000)}`);
  return text;
}

async function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const probe = createServer();
    probe.once('error', () => resolveFree(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolveFree(true)));
  });
}

// ---------------------------------------------------------------------------------------------
// The session's parts

/** llama-server serving the GGUF file, playing the demo's turns in order. */
async function startSessionBackend(): Promise<MockBackend> {
  const backend = await startMockBackend({ profile: 'llamacpp', models: [MODEL], contextWindow: CONTEXT_WINDOW });
  cleanups.push(() => backend.close());
  backend.enqueue(...(await loadMockScript(SESSION_SCRIPT)));
  return backend;
}

/** A scratch git repository for Codex to edit (`codex exec` wants one); VS Code opens it too. */
async function createWorkspace(folder: string): Promise<string> {
  mkdirSync(folder);
  await run('git', ['init', '-q'], 'git init', { cwd: folder });
  writeFileSync(join(folder, 'README.md'), '# my-project\n');
  return folder;
}

/** `codex exec` with the profile a Write Codex Config (or `codex-config`) wrote into codexHome. */
async function runCodex(workspace: string, codexHome: string): Promise<void> {
  const { binary } = checkCodexAvailability();
  const environment: NodeJS.ProcessEnv = { ...process.env, CODEX_HOME: codexHome };
  delete environment.OPENAI_API_KEY;
  delete environment.OPENAI_BASE_URL;
  const transcript = await run(binary, ['exec', '-p', 'freeform-bridge', ...WITHOUT_CODEX_SANDBOX, PROMPT], 'codex exec', { cwd: workspace, env: environment, allowFailure: true });
  if (!existsSync(join(workspace, 'greet.sh'))) throw new Error(`codex exec did not finish the session (no greet.sh):\n${transcript.slice(-3_000)}`);
}

// ---------------------------------------------------------------------------------------------
// The terminal: `serve` while Codex runs through it, and the doctor

interface TerminalCapture {
  title: string;
  command: string;
  text: string;
}

const quoteForShell = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `freeform-bridge serve` in a pseudo-terminal (util-linux `script`), as a person sees it, with
 * its colours; without `script` it runs on pipes and the picture is plain.
 */
async function captureServeSession(backendUrl: string, scratch: string): Promise<TerminalCapture> {
  const port = (await isPortFree(SERVE_PORT)) ? SERVE_PORT : 0;
  const serveArguments = ['serve', '--backend', backendUrl, '--port', String(port)];
  const environment: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color', COLUMNS: '120', LINES: '40' };
  delete environment.NO_COLOR;
  const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
  const child = hasScript
    ? spawnOwned('script', ['-qfec', [process.execPath, cli, ...serveArguments].map(quoteForShell).join(' '), '/dev/null'], { env: environment })
    : spawnOwned(process.execPath, [cli, ...serveArguments], { env: environment });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const deadline = Date.now() + 30_000;
  let bridgeUrl: string | undefined;
  while (!(bridgeUrl = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1])) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`freeform-bridge serve did not start:\n${text}`);
    await new Promise((wake) => setTimeout(wake, 100));
  }
  // The quick engine check prints its line right after start; waited for, so it stays in order.
  while (!/(info|warn): backend /.test(text) && Date.now() < deadline) await new Promise((wake) => setTimeout(wake, 100));
  const codexHome = join(scratch, 'codex-home-cli');
  await run(process.execPath, [cli, 'codex-config', '--base-url', `${bridgeUrl}/v1`, '--model', MODEL, '--codex-home', codexHome], 'freeform-bridge codex-config');
  await runCodex(await createWorkspace(join(scratch, 'cli-session')), codexHome);
  // The last round trip's line is written as its answer ends; give the terminal a moment to show it.
  await new Promise((wake) => setTimeout(wake, 500));
  const shown = text.replace(/\r/g, '');
  await stopGroup(child);
  return { title: 'freeform-bridge serve', command: `freeform-bridge serve --backend ${backendUrl} --port ${port}`, text: shown };
}

async function captureDoctor(): Promise<TerminalCapture> {
  const backend = await startMockBackend({ profile: 'llamacpp', models: [MODEL], contextWindow: CONTEXT_WINDOW });
  cleanups.push(() => backend.close());
  // A model that calls the tool it is offered, as one served with a tool-calling template does.
  backend.setResponder((request) =>
    isRecord(request.body) && Array.isArray(request.body.tools)
      ? { toolCalls: [{ name: 'apply_patch', input: '*** Begin Patch\n*** Add File: probe.txt\n+ok\n*** End Patch\n' }], finishReason: 'tool_calls' }
      : { text: 'OK' },
  );
  const report = await run(process.execPath, [cli, 'doctor', '--backend', backend.url], 'freeform-bridge doctor against the mock llama-server');
  return { title: 'freeform-bridge doctor', command: `freeform-bridge doctor --backend ${backend.url}`, text: report };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (character) => ESCAPES[character] ?? character);

const ESC = '\u001b';
const BEL = '\u0007';

/** The captured text with its ANSI colours (SGR codes) as spans; every character of it escaped. */
function renderAnsi(text: string): string {
  const classes: Record<string, string> = { '1': 'bold', '2': 'dim', '31': 'red', '32': 'green', '33': 'yellow', '34': 'blue', '35': 'magenta', '36': 'cyan' };
  let html = '';
  let open = false;
  // Any other escape sequence (cursor moves, a window title) is dropped.
  const parts = text.replace(new RegExp(`${ESC}\\][^${BEL}]*${BEL}`, 'g'), '').split(new RegExp(`(${ESC}\\[[0-9;]*[A-Za-z])`));
  for (const part of parts) {
    const sgr = new RegExp(`^${ESC}\\[([0-9;]*)m$`).exec(part);
    if (sgr) {
      if (open) html += '</span>';
      const names = (sgr[1] ?? '').split(';').flatMap((code) => (classes[code] ? [classes[code]] : []));
      open = names.length > 0;
      if (open) html += `<span class="${names.join(' ')}">`;
    } else if (!part.startsWith(ESC)) {
      html += escapeHtml(part);
    }
  }
  return open ? `${html}</span>` : html;
}

const TERMINAL_STYLE = `
  body { margin: 0; padding: 24px; background: transparent; }
  .window { display: inline-block; border-radius: 8px; overflow: hidden; background: #181818; }
  .bar { display: flex; align-items: center; gap: 8px; padding: 8px 12px; background: #2b2b2b; color: #cccccc; font: 13px 'DejaVu Sans', sans-serif; }
  .dot { width: 12px; height: 12px; border-radius: 50%; background: #5a5a5a; }
  .bar .title { margin-left: 8px; }
  pre { margin: 0; padding: 12px 14px 16px; width: 120ch; white-space: pre-wrap; overflow-wrap: anywhere; color: #cccccc; font: 13px/1.45 'DejaVu Sans Mono', monospace; }
  .prompt { color: #23d18b; }
  .bold { font-weight: bold; } .dim { color: #8b8b8b; }
  .red { color: #f14c4c; } .green { color: #23d18b; } .yellow { color: #f5f543; } .blue { color: #3b8eea; } .magenta { color: #d670d6; } .cyan { color: #29b8db; }
`;

async function renderTerminal(browser: Browser, capture: TerminalCapture, file: string): Promise<void> {
  // The page is the captured text and a stylesheet; nothing in it has to run.
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 }, javaScriptEnabled: false });
  try {
    const body = `<span class="prompt">$</span> ${escapeHtml(capture.command)}\n${renderAnsi(capture.text.trimEnd())}`;
    await page.setContent(
      `<!DOCTYPE html><html><head><meta charset="utf-8"><style>${TERMINAL_STYLE}</style></head><body><div class="window"><div class="bar"><span class="dot"></span><span class="dot"></span><span class="dot"></span><span class="title">${escapeHtml(capture.title)}</span></div><pre>${body}</pre></div></body></html>`,
    );
    // Transparent outside the rounded window, so it sits on a light or a dark page alike.
    await page.locator('.window').screenshot({ path: file, omitBackground: true });
  } finally {
    await page.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The traffic panel in VS Code

/** Answers one of the extension's quick picks by the row's label, as a user clicks it. */
async function pick(page: Page, title: string, label: string): Promise<void> {
  const widget = page.locator('.quick-input-widget', { has: page.locator('.quick-input-title', { hasText: title }) });
  await widget.waitFor({ state: 'visible', timeout: 30_000 });
  await widget.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().click();
  await widget.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => undefined);
}

async function capturePanel(browser: Browser, vsix: string, scratch: string, file: string): Promise<void> {
  const backend = await startSessionBackend();
  const workspace = await createWorkspace(join(scratch, 'my-project'));
  const codexHome = join(scratch, 'codex-home-vscode');
  const server: CodeServer = await startCodeServer({
    workspace,
    keep,
    settings: {
      'freeformBridge.backendUrl': backend.url,
      'freeformBridge.codexHome': codexHome,
      'workbench.colorTheme': 'Default Dark Modern',
    },
  });
  cleanups.push(() => server.stop());
  try {
    const installed = server.cli('--install-extension', vsix);
    if (!/successfully installed/i.test(installed)) throw new Error(`code-server did not install ${vsix}: ${installed}`);
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.on('pageerror', (error) => console.error('[pageerror]', error.message));
    await page.goto(`${server.url}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.statusbar-item', { hasText: /Bridge: off/ }).first().waitFor({ timeout: UI_TIMEOUT_MS });
    await page.locator('.monaco-workbench').click({ position: { x: 900, y: 450 } });

    await runPaletteCommand(page, 'Freeform Bridge: Start');
    await page.locator('.statusbar-item', { hasText: /Bridge :\d+/ }).first().waitFor({ timeout: UI_TIMEOUT_MS });
    await runPaletteCommand(page, 'Freeform Bridge: Write Codex Config');
    await pick(page, 'Model for the Codex profile', MODEL);
    await pick(page, 'Tool surface', 'freeform');
    await pick(page, 'Where should Codex use the bridge?', 'Codex CLI only');
    await page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Write' }).first().click({ timeout: 30_000 });
    const profile = join(codexHome, 'freeform-bridge.config.toml');
    const deadline = Date.now() + 30_000;
    while (!existsSync(profile)) {
      if (Date.now() > deadline) throw new Error(`Write Codex Config wrote no ${profile}`);
      await new Promise((wake) => setTimeout(wake, 200));
    }
    console.log('  Write Codex Config wrote the profile; running Codex through the bridge');
    await runCodex(workspace, codexHome);

    // The notice that the profile was written has done its job; the picture shows the panel.
    await runPaletteCommand(page, 'Notifications: Clear All Notifications');
    await runPaletteCommand(page, 'Freeform Bridge: Show Live Traffic');
    const panel = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    await panel.locator('#list [role="option"]').nth(3).waitFor({ timeout: 30_000 });
    // The round trip whose apply_patch the bridge repaired: the lifted call and its warning.
    await panel.locator('#list [role="option"].has-warnings').first().click();
    await panel.locator('#section-warnings article.warning', { hasText: 'grammar_repaired' }).first().waitFor({ timeout: 10_000 });
    // The mouse rests where no tooltip opens (the Explorer's empty space).
    await page.mouse.move(150, 600);
    await new Promise((wake) => setTimeout(wake, 800));
    await page.screenshot({ path: file });
  } catch (error) {
    printLogTail(server);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = Date.now();
  const elapsed = (): string => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const scratch = mkdtempSync(join(tmpdir(), 'freeform-bridge-screenshots-'));
  if (!keep) cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
  mkdirSync(output, { recursive: true });

  console.log('screenshots: packaging the extension (npm run package)');
  const vsix = join(scratch, 'freeform-bridge.vsix');
  await run('npm', ['run', '--silent', 'package', '--', '--out', vsix], 'npm run package', { cwd: repositoryRoot });
  if (!existsSync(cli)) throw new Error(`${cli} is missing after npm run package`);
  checkCodexAvailability();

  console.log(`screenshots: the demo session through freeform-bridge serve [${elapsed()}]`);
  const serveBackend = await startSessionBackend();
  const serve = await captureServeSession(serveBackend.url, scratch);
  console.log(`screenshots: the doctor [${elapsed()}]`);
  const doctor = await captureDoctor();

  console.log(`screenshots: the traffic panel in code-server [${elapsed()}]`);
  // The browser is closed by the cleanup: Playwright's own signal handlers would end the process first.
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGUMENTS,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  cleanups.push(() => browser.close());
  const files = { panel: join(output, 'traffic-panel.png'), serve: join(output, 'terminal-live-view.png'), doctor: join(output, 'doctor.png') };
  await capturePanel(browser, vsix, scratch, files.panel);
  await renderTerminal(browser, serve, files.serve);
  await renderTerminal(browser, doctor, files.doctor);
  for (const path of Object.values(files)) console.log(`  ${path} (${(statSync(path).size / 1024).toFixed(0)} KB)`);
  console.log(`screenshots: done in ${elapsed()}`);
  if (keep) {
    writeFileSync(join(scratch, 'terminal.txt'), `${serve.text}\n\n${doctor.text}`);
    console.log(`  kept ${scratch} (terminal.txt: the captured text)`);
  }
}

const watchdog = setTimeout(() => {
  console.error(`screenshots: gave up after ${TOTAL_TIMEOUT_MS / 1000} s`);
  void cleanUp().then(() => process.exit(1));
}, TOTAL_TIMEOUT_MS);

main().then(
  async () => {
    clearTimeout(watchdog);
    await cleanUp();
  },
  async (error: unknown) => {
    clearTimeout(watchdog);
    console.error(`screenshots failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    await cleanUp();
    process.exitCode = 1;
  },
);
