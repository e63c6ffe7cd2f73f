import { parseArgs } from 'node:util';
import type { DoctorReport } from '../core/doctor/diagnose.ts';
import { ENGINE_DEFAULT_PORTS, ENGINE_NAMES, type EngineKind } from '../core/doctor/engine-identity.ts';
import { renderDoctorTable, summariseDoctorReport } from '../core/doctor/render-doctor-report.ts';
import type { Logger } from '../core/logger.ts';
import { findLocalEngines, runEngineDoctor } from '../server/engine-doctor.ts';
import { describeUsageProblem, isArgumentParseError, UsageError } from './usage-error.ts';

export interface DoctorCommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Where to look for an engine without --backend: the engines' usual ports unless a test names its own (no command-line option). */
  candidatePorts?: ReadonlyArray<{ engine: EngineKind; port: number }>;
}

export const DOCTOR_USAGE = `Usage:
  freeform-bridge doctor [--backend URL] [options]

Checks the engine Codex will meet through the bridge, before the first Codex turn: which engine and
version answers, the model id to use, the context window against what Codex needs, and — with a few
tiny requests — that a function tool comes back as a tool call (streamed and not), whether
reasoning_effort and images are accepted. Prints what to change, and exits with 1 when Codex would fail.

Options:
  --backend URL                 the engine's OpenAI-compatible base URL, ending in /v1; without it the doctor
                                looks on 127.0.0.1 at ${ENGINE_DEFAULT_PORTS.map(({ engine, port }) => `${port} (${ENGINE_NAMES[engine]})`).join(', ')}
  --model NAME                  the model name the bridge will send (serve --model); default: the first listed
  --backend-api-key-env NAME    environment variable holding the backend's API key (sent only to --backend URL)
  --quick                       find and identify only, no generation (what serve checks at start)
  --json                        print the report as JSON
  -h, --help                    show this help
`;

export async function runDoctorCommand(argv: string[], io: DoctorCommandIo): Promise<number> {
  try {
    return await runCommand(argv, io);
  } catch (error) {
    if (isArgumentParseError(error)) {
      io.stderr(`freeform-bridge doctor: ${describeUsageProblem(error, 'freeform-bridge doctor --help')}\n`);
      return 2;
    }
    io.stderr(`freeform-bridge doctor: ${error instanceof Error ? error.message : String(error)}\n`);
    if (error instanceof UsageError) {
      io.stderr('Run `freeform-bridge doctor --help` for usage.\n');
      return 2;
    }
    return 1;
  }
}

async function runCommand(argv: string[], io: DoctorCommandIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      backend: { type: 'string' },
      model: { type: 'string' },
      'backend-api-key-env': { type: 'string' },
      quick: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.stdout(DOCTOR_USAGE);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const keyVariable = values['backend-api-key-env'];
  const apiKey = keyVariable === undefined ? null : io.env[keyVariable] || null;
  if (keyVariable !== undefined && apiKey === null) throw new UsageError(`--backend-api-key-env ${keyVariable}: the environment variable ${keyVariable} is not set or empty`);
  let backendUrls: string[];
  let wantKey: string[] = [];
  if (values.backend !== undefined) {
    backendUrls = [values.backend];
  } else {
    const found = await findLocalEngines({ ports: io.candidatePorts });
    if (found.length === 0) {
      const ports = ENGINE_DEFAULT_PORTS.map(({ engine, port }) => `${port} (${ENGINE_NAMES[engine]})`).join(', ');
      io.stderr(`No engine answers on 127.0.0.1 at ${ports}.\nStart one, or name it: freeform-bridge doctor --backend http://HOST:PORT/v1\n`);
      return 1;
    }
    backendUrls = found.map((engine) => engine.backendUrl);
    wantKey = found.filter((engine) => engine.wantsKey).map((engine) => engine.backendUrl);
    io.stderr(`Found ${found.length === 1 ? 'an engine' : `${found.length} engines`} on this machine: ${backendUrls.join(', ')}\n`);
  }
  const reports: DoctorReport[] = [];
  for (const backendUrl of backendUrls) {
    // The key goes only to a backend the user named: whatever answers on a usual port of this machine
    // may be any program, and is checked without it.
    reports.push(await runEngineDoctor({ backendUrl, apiKey: values.backend === undefined ? null : apiKey, configuredModel: values.model ?? null, probe: values.quick !== true }));
  }
  if (values.json) {
    io.stdout(`${JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2)}\n`);
  } else {
    io.stdout(reports.map(renderDoctorTable).join('\n'));
    if (values.backend === undefined) {
      const usable = reports.filter((report) => !report.codexWouldFail);
      for (const report of usable) io.stdout(`\nUse it: freeform-bridge serve --backend ${report.backendUrl}${report.model === null ? '' : ` --model ${report.model}`}\n`);
    }
  }
  for (const url of wantKey) io.stderr(`${url} needs an API key; run with --backend ${url} --backend-api-key-env ${keyVariable ?? 'NAME'} to check it with yours\n`);
  // Found engines: fine when one of them is; a named backend: its own verdict.
  return reports.every((report) => report.codexWouldFail) ? 1 : 0;
}

/**
 * serve's start-up check: find and identify, no generation, one line. Never stops the bridge: the
 * engine may simply not be up yet, and the line says so with its cause.
 */
export async function reportBackendAtStart(options: { backendUrl: string; apiKey: string | null; model: string | null; logger: Logger }): Promise<DoctorReport> {
  const report = await runEngineDoctor({ backendUrl: options.backendUrl, apiKey: options.apiKey, configuredModel: options.model, probe: false });
  const line = `${summariseDoctorReport(report)}${report.worst === null ? '' : ` (details: freeform-bridge doctor --backend ${report.backendUrl})`}`;
  if (report.worst === null) options.logger.info(line);
  else options.logger.warn(line);
  return report;
}
