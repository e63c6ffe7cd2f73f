/**
 * `npm run demo`: watch a scripted Codex session flow through the bridge, no GPU needed.
 *
 * Starts the project's mock Chat Completions backend playing `scripts/demo.session.json` (a fenced,
 * malformed apply_patch, the corrected patch, exec_command, an answer), the bridge on 127.0.0.1, writes
 * a scratch CODEX_HOME with our own config writer, runs the real `codex exec` in a scratch git
 * workspace and prints a live trace: what Codex sent and how it was lowered, what the backend received
 * and answered, what the bridge lifted back, every warning, and what Codex did with it.
 *
 *   npm run demo [-- --profile vllm-hermes] [-- --keep] [-- --payloads]
 *
 * CODEX_BIN=/path/to/codex runs another Codex build than the pinned devDependency.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ExchangeStartEvent, TrafficEvent } from '../src/core/traffic/traffic-event.ts';
import type { ResponsesOutputItem } from '../src/core/responses/responses-output.ts';
import type { BridgeWarning } from '../src/core/warnings.ts';
import { engineProfiles, isEngineProfile } from '../mock-backend/profiles.ts';
import { loadMockScript, type MockTurn } from '../mock-backend/script.ts';
import type { RecordedRequest } from '../mock-backend/create-mock-backend.ts';
import {
  CODEX_PROFILE,
  checkCodexAvailability,
  chatMessages,
  messageText,
  startE2eSession,
  type CodexJsonEvent,
} from '../harness/codex-session.ts';

const USAGE = `usage: npm run demo [-- --profile <${engineProfiles.join('|')}>] [-- --keep] [-- --payloads]
  --profile   engine the mock backend imitates (default vllm-qwen3coder)
  --keep      keep the scratch CODEX_HOME, workspace and exchange log afterwards
  --payloads  also list every function tool forwarded to the backend by name`;

const PROMPT = 'Create greet.sh that prints a greeting, then run it.';
const SCRIPT_PATH = resolve(__dirname, 'demo.session.json');

// ---------------------------------------------------------------------------------------------
// Output

const useColour = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
const paint = (code: string, text: string): string => (useColour ? `\u001b[${code}m${text}\u001b[0m` : text);
const dim = (text: string): string => paint('2', text);
const bold = (text: string): string => paint('1', text);
const yellow = (text: string): string => paint('33', text);
const red = (text: string): string => paint('31', text);
const green = (text: string): string => paint('32', text);

const LABELS = {
  codex: paint('36', 'codex  '),
  bridge: paint('35', 'bridge '),
  model: paint('34', 'model  '),
  demo: paint('32', 'demo   '),
} as const;

function say(who: keyof typeof LABELS, text: string): void {
  const [first = '', ...rest] = text.split('\n');
  process.stdout.write(`${LABELS[who]}${first}\n`);
  for (const line of rest) process.stdout.write(`${' '.repeat(7)}${line}\n`);
}

function shorten(text: string, limit = 100): string {
  const oneLine = JSON.stringify(text);
  return oneLine.length > limit ? `${oneLine.slice(0, limit - 1)}…"` : oneLine;
}

function indent(text: string): string {
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => dim(`  │ ${line}`))
    .join('\n');
}

// ---------------------------------------------------------------------------------------------
// The bridge's traffic events, as the panel sees them

interface TraceOptions {
  payloads: boolean;
}

function createTrafficTracer(options: TraceOptions): (event: TrafficEvent) => void {
  const numbers = new Map<string, number>();
  const printed = new WeakSet<BridgeWarning>();
  const label = (exchangeId: string): string => `#${numbers.get(exchangeId) ?? '?'}`;

  const describeTools = (tools: ExchangeStartEvent['tools']): string => {
    const bridged = tools.filter((tool) => tool.disposition === 'bridged');
    const functions = tools.filter((tool) => tool.disposition === 'lowered');
    const dropped = tools.filter((tool) => tool.disposition === 'dropped');
    const lines = [`${functions.length} function tools forwarded as they are${options.payloads ? `: ${functions.map((tool) => tool.wireName).join(', ')}` : ''}`];
    for (const tool of bridged) {
      const qualified = tool.namespace ? `${tool.namespace}.${tool.name}` : tool.name;
      lines.push(`free-form ${bold(qualified)} lowered to function ${bold(`${tool.wireName}(input: string)`)}, grammar appended to its description`);
    }
    for (const tool of dropped) lines.push(`${tool.kind === tool.name ? '' : `${tool.kind} `}${tool.name} dropped${tool.reason ? ` (${tool.reason})` : ''}`);
    return lines.map((line) => `  · ${line}`).join('\n');
  };

  const describeItem = (item: ResponsesOutputItem): string => {
    switch (item.type) {
      case 'message':
        return `message ${shorten(item.content.map((part) => ('text' in part ? part.text : '')).join(''))}`;
      case 'reasoning':
        return `reasoning ${shorten((item.content ?? []).map((part) => part.text).join(''))}`;
      case 'function_call':
        return `function_call ${bold(item.name)}${item.namespace ? ` (namespace ${item.namespace})` : ''} ${dim(item.call_id)} ${item.arguments}`;
      case 'custom_tool_call': {
        const head = `${green('custom_tool_call')} ${bold(item.name)}${item.namespace ? ` (namespace ${item.namespace})` : ''} ${dim(item.call_id)}, raw input (${item.input.replace(/\n$/, '').split('\n').length} lines):`;
        return `${head}\n${indent(item.input)}`;
      }
      default:
        return JSON.stringify(item);
    }
  };

  const printWarnings = (exchangeId: string, warnings: readonly BridgeWarning[]): void => {
    for (const warning of warnings) {
      if (printed.has(warning)) continue;
      printed.add(warning);
      const detail = `${warning.kind}${warning.tool ? ` [${warning.tool}]` : ''}: ${warning.detail}`;
      say('bridge', `${label(exchangeId)} ${yellow(`⚠ ${detail}`)}`);
    }
  };

  return (event) => {
    switch (event.type) {
      case 'exchange-start': {
        numbers.set(event.exchangeId, numbers.size + 1);
        const lowered = event.loweredRequest;
        say(
          'bridge',
          `${bold(label(event.exchangeId))} Codex → bridge: POST /v1/responses, model ${event.model}, ${event.inputItems} input items, ${(event.requestBytes / 1024).toFixed(1)} kB\n` +
            `${describeTools(event.tools)}\n` +
            `  → backend: chat request with ${lowered.messages.length} messages, ${lowered.tools?.length ?? 0} tools, tool_choice ${JSON.stringify(lowered.tool_choice ?? null)}`,
        );
        return;
      }
      case 'exchange-delta':
        for (const item of event.items) say('bridge', `${label(event.exchangeId)} lifted → Codex: ${describeItem(item)}`);
        printWarnings(event.exchangeId, event.warnings);
        return;
      case 'exchange-end': {
        printWarnings(event.exchangeId, event.warnings);
        const seconds = ((event.timings.totalMs ?? 0) / 1000).toFixed(2);
        const usage = event.usage ? `, ${event.usage.input_tokens} tokens in / ${event.usage.output_tokens} out` : '';
        const outcome = event.outcome === 'completed' ? green(`${event.outcome} ${event.httpStatus}`) : red(`${event.outcome} ${event.httpStatus}`);
        say('bridge', `${label(event.exchangeId)} ${outcome} in ${seconds} s${usage}${event.error ? red(` — ${event.error.code}: ${event.error.message}`) : ''}`);
        return;
      }
      case 'exchange-rejected':
        say('bridge', red(`rejected ${event.httpStatus}: ${event.error.message}`));
        return;
      default: {
        const unexpected: never = event;
        say('bridge', JSON.stringify(unexpected));
      }
    }
  };
}

// ---------------------------------------------------------------------------------------------
// The mock model

function describeTurn(turn: MockTurn): string {
  const parts: string[] = [];
  if (turn.reasoning !== undefined) parts.push(`reasoning ${shorten(Array.isArray(turn.reasoning) ? turn.reasoning.join('') : String(turn.reasoning), 60)}`);
  if (turn.text !== undefined) parts.push(`text ${shorten(Array.isArray(turn.text) ? turn.text.join('') : String(turn.text), 70)}`);
  for (const call of turn.toolCalls ?? []) {
    const payload = call.input !== undefined ? `{"input": <${call.input.replace(/\n$/, '').split('\n').length} lines>}` : JSON.stringify(call.arguments ?? {});
    parts.push(`call ${bold(call.name)}${payload}`);
  }
  return parts.join(' + ');
}

function createModel(turns: MockTurn[]): (request: RecordedRequest) => MockTurn {
  let next = 0;
  return (request) => {
    const messages = chatMessages(request);
    const newest = messages.at(-1);
    const newestText = newest ? `${newest.role}${newest.role === 'tool' ? ` (${newest.tool_call_id})` : ''}: ${shorten(messageText(newest.content), 110)}` : 'nothing';
    say('model', `backend received ${messages.length} messages; newest ${newestText}`);
    const turn = turns[next] ?? { text: 'The demo script has no more turns.' };
    next += 1;
    say('model', `answers ${describeTurn(turn)}`);
    return turn;
  };
}

// ---------------------------------------------------------------------------------------------
// Codex's own view (`codex exec --json`)

function describeCodexEvent(event: CodexJsonEvent, workspace: string): string | null {
  const item = event.item;
  if (event.type === 'item.completed' && item) {
    switch (item.type) {
      case 'command_execution':
        return `ran ${bold(item.command ?? '')} → exit ${item.exit_code}: ${shorten(item.aggregated_output ?? '')}`;
      case 'file_change':
        return `${item.status === 'completed' ? 'applied patch' : `patch ${item.status}`}: ${JSON.stringify(item.changes).replaceAll(`${workspace}/`, '')}`;
      case 'agent_message':
        return `says: ${bold((item.text ?? '').trimEnd())}`;
      case 'reasoning':
        return `reasoning: ${shorten(item.text ?? '')}`;
      case 'error':
        return /Model metadata/.test(item.message ?? '') ? dim(`note: ${item.message}`) : red(`error: ${item.message}`);
      default:
        return `${item.type}: ${JSON.stringify(item).slice(0, 160)}`;
    }
  }
  if (event.type === 'turn.failed') return red(`turn failed: ${event.error?.message ?? ''}`);
  if (event.type === 'error') return red(`error: ${event.message ?? ''}`);
  if (event.type === 'turn.completed') return `turn completed ${dim(JSON.stringify(event.usage ?? {}))}`;
  return null;
}

function createCodexPrinter(workspace: string): (stream: 'stdout' | 'stderr', text: string) => void {
  let pending = '';
  return (stream, text) => {
    if (stream === 'stderr') return;
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim().startsWith('{')) continue;
      try {
        const described = describeCodexEvent(JSON.parse(line) as CodexJsonEvent, workspace);
        if (described !== null) say('codex', described);
      } catch {
        // not an event line
      }
    }
  };
}

// ---------------------------------------------------------------------------------------------

function printVsCodeHowTo(profile: string): void {
  say(
    'demo',
    [
      bold('Watch the same flow in VS Code:'),
      `  1. Serve the same script from the mock backend (no GPU):`,
      `       node --import tsx mock-backend/cli.ts --profile ${profile} --port 8000 --script scripts/demo.session.json`,
      `  2. Set "freeformBridge.backendUrl" to http://127.0.0.1:8000/v1, then run the commands`,
      `     "Freeform Bridge: Start" and "Freeform Bridge: Show Live Traffic" (the traffic panel shows`,
      `     each exchange with its lowered tools, lifted calls and warnings, as printed above).`,
      `  3. "Freeform Bridge: Write Codex Config" (model qwen3-coder, tool surface freeform), then in a`,
      `     scratch git repository: codex exec -p freeform-bridge -s workspace-write "${PROMPT}"`,
      `  Without VS Code: npx freeform-bridge serve --backend http://127.0.0.1:8000/v1 --log-file exchanges.jsonl`,
    ].join('\n'),
  );
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { profile: { type: 'string' }, keep: { type: 'boolean' }, payloads: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const profile = values.profile ?? 'vllm-qwen3coder';
  if (!isEngineProfile(profile)) {
    process.stderr.write(`unknown profile '${profile}'\n${USAGE}\n`);
    return 2;
  }
  let codex;
  try {
    codex = checkCodexAvailability();
  } catch (error) {
    process.stderr.write(`cannot run the demo: ${(error as Error).message}\n`);
    return 1;
  }

  const turns = await loadMockScript(SCRIPT_PATH);
  say('demo', `${bold('Freeform Bridge demo')} — ${codex.version} against a mock ${profile} backend playing ${SCRIPT_PATH.replace(`${process.cwd()}/`, '')}`);
  const session = await startE2eSession({
    profile,
    surface: 'freeform',
    responder: createModel(turns),
    bridge: { onTraffic: createTrafficTracer({ payloads: values.payloads === true }) },
    keepScratch: values.keep === true,
  });
  let exitCode = 1;
  try {
    say('demo', `mock backend ${session.backend.url}, bridge ${session.bridge.url}, CODEX_HOME ${session.codexHome}`);
    // Codex runs here as the tests run it, without its sandbox (which containers often cannot provide), on a
    // scratch repository that is thrown away; what the user is told to run keeps the sandbox.
    say('demo', `running: codex exec -p ${CODEX_PROFILE} --json --ephemeral "${PROMPT}", without Codex's sandbox,\n  in ${session.workspace} (a scratch git repository, deleted afterwards)\n`);
    const run = await session.runCodex(PROMPT, { onOutput: createCodexPrinter(session.workspace), timeoutMs: 120_000 });
    exitCode = run.code ?? 1;
    process.stdout.write('\n');
    say('demo', `codex exited ${run.code} after ${(run.durationMs / 1000).toFixed(1)} s`);
    try {
      say('demo', `greet.sh on disk:\n${indent(readFileSync(join(session.workspace, 'greet.sh'), 'utf8'))}`);
    } catch {
      say('demo', red('greet.sh was not created'));
    }
    if (values.keep) say('demo', `kept: exchange log ${session.logFile}, workspace ${session.workspace}`);
    process.stdout.write('\n');
    printVsCodeHowTo(profile);
  } finally {
    await session.close();
  }
  return exitCode;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
