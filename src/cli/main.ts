import { parseArgs } from 'node:util';
import { CUSTOM_TOOL_STRATEGIES, type CustomToolStrategy } from '../core/bridge-options.ts';
import type { Logger } from '../core/logger.ts';
import { suggestVersionedBaseUrl } from '../core/backend-url.ts';
import { endsInVersionSegment } from '../core/engine-error.ts';
import { runCodexConfigCommand } from './codex-config-command.ts';
import { reportBackendAtStart, runDoctorCommand } from './doctor-command.ts';
import { createLiveView } from './live-view.ts';
import { createTerminalWriter, type TerminalWriter } from './terminal-writer.ts';
import { createCallTallyListener } from './call-tally.ts';
import type { TrafficListener } from '../core/traffic/traffic-event.ts';
import { formatClockTime } from './round-trip-line.ts';
import { describeUsageProblem, isArgumentParseError, UsageError } from './usage-error.ts';
import { DEFAULT_KEEPALIVE_SECONDS, DEFAULT_UPSTREAM_IDLE_TIMEOUT_SECONDS, MAX_KEEPALIVE_SECONDS, MAX_UPSTREAM_IDLE_TIMEOUT_SECONDS, MIN_UPSTREAM_IDLE_TIMEOUT_SECONDS } from '../core/defaults.ts';
import { BRIDGE_VERSION, startBridgeServer } from '../server/start-server.ts';
import { GRAMMAR_ENFORCEMENT_SETTINGS, type GrammarEnforcementSetting } from '../server/grammar-enforcement.ts';

const USAGE = `freeform-bridge ${BRIDGE_VERSION} — lets Codex's free-form tools work with function-only Chat Completions backends

Usage:
  freeform-bridge serve --backend URL [options]
  freeform-bridge codex-config --base-url URL --model NAME [options]   (run with --help for its options)
  freeform-bridge doctor [--backend URL] [options]   checks the engine before Codex meets it (--help)

Options for serve:
  --backend URL                 OpenAI-compatible base URL of the backend, ending in /v1 (required)
  --host HOST                   address to listen on (default 127.0.0.1)
  --port N                      port to listen on; 0 picks a free one (default 0)
  --backend-api-key-env NAME    environment variable holding the backend's API key
  --token-env NAME              environment variable holding a token every client must send as Bearer
  --strategy S                  function_bridge (default) or passthrough
  --keepalive-seconds N         response.in_progress every N silent seconds; 0 disables (default ${DEFAULT_KEEPALIVE_SECONDS})
  --backend-timeout-seconds N   give up on a backend silent this long (prompt processing included) (default ${DEFAULT_UPSTREAM_IDLE_TIMEOUT_SECONDS})
  --model NAME                  model name sent to the backend instead of Codex's
  --log-file PATH               append one JSON line per exchange
  --log-level LEVEL             what stderr shows: error (errors only), warn (also each warning and failed
                                round trip), info (default: also one line per round trip), debug (also
                                exchange ids, backend timings and the bridge's internals)
  -q, --quiet                   no line per round trip: the same as --log-level warn
  --grammar-repair              also apply the risky patch repairs (a missing *** End Patch, prose around it); safe ones are always on (warned)
  --no-recover-text-calls       deliver a tool call the engine left as assistant text as text (still warned);
                                by default a text that is only complete calls of offered tools becomes those calls
  --grammar-examples            add a compact valid example payload to each bridged tool's description
  --grammar-enforcement MODE    off (default), auto (a self-test on the engine decides per model), escaped
                                or value (send the grammar as a pattern in that form without testing)
  -h, --help                    show this help
  -V, --version                 print the version
`;

// The CLI's only ways to its streams: every line it prints carries text from engines and clients.
const stdout = createTerminalWriter(process.stdout, process.env);
const stderr = createTerminalWriter(process.stderr, process.env);

const LEVELS = ['error', 'warn', 'info', 'debug'] as const;
type Level = (typeof LEVELS)[number];

function createStderrLogger(level: Level, print: TerminalWriter): Logger {
  const threshold = LEVELS.indexOf(level);
  const write = (at: Level) => (message: string, details?: Record<string, unknown>) => {
    if (LEVELS.indexOf(at) > threshold) return;
    const suffix = details && Object.keys(details).length > 0 ? ` ${JSON.stringify(details)}` : '';
    // The same clock as the round-trip lines beside it; the log file keeps full ISO times.
    print(`${formatClockTime(new Date())} ${at}: ${message}${suffix}\n`);
  };
  return { error: write('error'), warn: write('warn'), info: write('info'), debug: write('debug') };
}

function readEnvironmentSecret(optionName: string, variable: string | undefined): string | null {
  if (variable === undefined) return null;
  const value = process.env[variable];
  if (!value) throw new UsageError(`${optionName} ${variable}: the environment variable ${variable} is not set or empty`);
  return value;
}

function parseNonNegativeInteger(optionName: string, text: string | undefined, fallback: number, maximum: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) > maximum) throw new UsageError(`${optionName} must be an integer from 0 to ${maximum}, got '${text}'`);
  return Number(text);
}

async function serve(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      backend: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'backend-api-key-env': { type: 'string' },
      'token-env': { type: 'string' },
      strategy: { type: 'string' },
      'keepalive-seconds': { type: 'string' },
      'backend-timeout-seconds': { type: 'string' },
      model: { type: 'string' },
      'log-file': { type: 'string' },
      'log-level': { type: 'string' },
      quiet: { type: 'boolean', short: 'q' },
      'grammar-repair': { type: 'boolean' },
      'grammar-examples': { type: 'boolean' },
      'no-recover-text-calls': { type: 'boolean' },
      'grammar-enforcement': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'V' },
    },
  });
  if (values.help) {
    stdout(USAGE);
    return;
  }
  if (values.version) {
    stdout(`${BRIDGE_VERSION}\n`);
    return;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  if (!values.backend) throw new UsageError('--backend URL is required (e.g. --backend http://127.0.0.1:8000/v1)');
  const strategy = (values.strategy ?? 'function_bridge') as CustomToolStrategy;
  if (!CUSTOM_TOOL_STRATEGIES.includes(strategy)) throw new UsageError(`--strategy must be one of ${CUSTOM_TOOL_STRATEGIES.join(', ')}, got '${values.strategy}'`);
  if (values.quiet && values['log-level'] !== undefined && values['log-level'] !== 'warn') {
    throw new UsageError(`--quiet means --log-level warn; it cannot go with --log-level ${values['log-level']}`);
  }
  const level = (values['log-level'] ?? (values.quiet ? 'warn' : 'info')) as Level;
  if (!LEVELS.includes(level)) throw new UsageError(`--log-level must be one of ${LEVELS.join(', ')}, got '${values['log-level']}'`);
  const grammarEnforcement = (values['grammar-enforcement'] ?? 'off') as GrammarEnforcementSetting;
  if (!GRAMMAR_ENFORCEMENT_SETTINGS.includes(grammarEnforcement)) {
    throw new UsageError(`--grammar-enforcement must be one of ${GRAMMAR_ENFORCEMENT_SETTINGS.join(', ')}, got '${values['grammar-enforcement']}'`);
  }
  const port = parseNonNegativeInteger('--port', values.port, 0, 65535);
  const keepaliveSeconds = parseNonNegativeInteger('--keepalive-seconds', values['keepalive-seconds'], DEFAULT_KEEPALIVE_SECONDS, MAX_KEEPALIVE_SECONDS);
  const backendTimeoutSeconds = parseNonNegativeInteger('--backend-timeout-seconds', values['backend-timeout-seconds'], DEFAULT_UPSTREAM_IDLE_TIMEOUT_SECONDS, MAX_UPSTREAM_IDLE_TIMEOUT_SECONDS);
  if (backendTimeoutSeconds < MIN_UPSTREAM_IDLE_TIMEOUT_SECONDS) throw new UsageError(`--backend-timeout-seconds must be at least ${MIN_UPSTREAM_IDLE_TIMEOUT_SECONDS}, got ${backendTimeoutSeconds}`);
  const backendApiKey = readEnvironmentSecret('--backend-api-key-env', values['backend-api-key-env']);
  const token = readEnvironmentSecret('--token-env', values['token-env']);
  const logger = createStderrLogger(level, stderr);
  if (!endsInVersionSegment(values.backend)) {
    logger.warn(`the backend URL ${values.backend} does not end in /v1; OpenAI-compatible servers answer 404 without it (e.g. ${suggestVersionedBaseUrl(values.backend)})`);
  }

  const roundTrips = LEVELS.indexOf(level) >= LEVELS.indexOf('info');
  const roundTripLines = createLiveView({
    write: (line) => stderr([...line, '\n']),
    roundTrips,
    warnings: LEVELS.indexOf(level) >= LEVELS.indexOf('warn'),
    detailed: level === 'debug',
  });
  // Beside each round trip with tool calls, its model's running tally (valid, repaired, warned,
  // refused), so a user comparing models or --grammar-repair sees how the calls land.
  const callTally = createCallTallyListener((line) => stderr(`${formatClockTime(new Date())}    ${line}`));
  const liveView: TrafficListener = roundTrips
    ? (event) => {
        roundTripLines(event);
        callTally(event);
      }
    : roundTripLines;

  let bridge;
  try {
    bridge = await startBridgeServer({
      backendUrl: values.backend,
      host: values.host ?? '127.0.0.1',
      port,
      getBackendApiKey: () => backendApiKey,
      getToken: () => token,
      options: {
        strategy,
        modelOverride: values.model ?? null,
        grammarRepair: values['grammar-repair'] ?? false,
        grammarExamples: values['grammar-examples'] ?? false,
        recoverTextToolCalls: values['no-recover-text-calls'] !== true,
      },
      grammarEnforcement,
      keepaliveSeconds,
      upstreamIdleTimeoutSeconds: backendTimeoutSeconds,
      logger,
      onTraffic: liveView,
      logFile: values['log-file'],
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.host && values.host !== '127.0.0.1' && values.host !== 'localhost' && values.host !== '::1') {
    logger.warn(`listening on ${values.host}: other machines may reach this bridge${token ? '' : ' and no --token-env is set'}`);
  }

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received, stopping`);
    bridge.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('error while stopping', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Printed once the handlers are in place: whatever starts `serve` may stop it as soon as it reads this
  // line, and a SIGTERM before the handler would end the process without closing the bridge.
  stdout(`freeform-bridge listening on ${bridge.url}\n`);
  // The doctor's quick part (find and identify, no generation): one line naming what Codex will meet.
  void reportBackendAtStart({ backendUrl: values.backend, apiKey: backendApiKey, model: values.model ?? null, logger }).catch((error: unknown) => {
    logger.warn(`backend check at start failed: ${error instanceof Error ? error.message : String(error)}`);
  });
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        await serve(rest);
        return 0;
      case 'doctor':
        return await runDoctorCommand(rest, { stdout, stderr, env: process.env });
      case 'codex-config':
        return await runCodexConfigCommand(rest, { stdout, stderr, env: process.env });
      case '--version':
      case '-V':
      case 'version':
        stdout(`${BRIDGE_VERSION}\n`);
        return 0;
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        stdout(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (error) {
    if (isArgumentParseError(error)) {
      stderr(`freeform-bridge: ${describeUsageProblem(error, `freeform-bridge ${command} --help`)}\n`);
      return 2;
    }
    const message = error instanceof Error ? error.message : String(error);
    stderr(`freeform-bridge: ${message}\n`);
    if (error instanceof UsageError) {
      stderr('Run `freeform-bridge --help` for usage.\n');
      return 2;
    }
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => {
  if (code !== 0) process.exit(code);
});
