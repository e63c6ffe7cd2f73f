/**
 * Runs a mock backend from the command line for demos and benchmarks:
 *   node --import tsx mock-backend/cli.ts --profile vllm-qwen3coder --port 0 [--script FILE.json]
 * Without a script every request gets the default "mock answer" turn; with one, its turns are played in
 * order and the default takes over when they run out.
 */
import { parseArgs } from 'node:util';
import { startMockBackend } from './create-mock-backend.ts';
import { engineProfiles, isEngineProfile } from './profiles.ts';
import { loadMockScript } from './script.ts';

const usage = `usage: cli.ts --profile <${engineProfiles.join('|')}> [--port N] [--host H] [--script FILE.json]
       [--model NAME]... [--no-tool-parser] [--no-validate] [--keep-alive-timeout-ms N] [--context-window N]`;

function parseNumberOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new Error(`--${name} must be a non-negative integer, got ${value}`);
  return number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      profile: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      script: { type: 'string' },
      model: { type: 'string', multiple: true },
      'no-tool-parser': { type: 'boolean' },
      'no-validate': { type: 'boolean' },
      'keep-alive-timeout-ms': { type: 'string' },
      'context-window': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help === true) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  const profile = values.profile;
  if (profile === undefined || !isEngineProfile(profile)) {
    process.stderr.write(`${usage}\n`);
    process.exitCode = 2;
    return;
  }
  const backend = await startMockBackend({
    profile,
    port: parseNumberOption(values.port, 'port'),
    host: values.host,
    models: values.model,
    toolParser: values['no-tool-parser'] === true ? false : undefined,
    validate: values['no-validate'] === true ? false : undefined,
    keepAliveTimeoutMs: parseNumberOption(values['keep-alive-timeout-ms'], 'keep-alive-timeout-ms'),
    contextWindow: parseNumberOption(values['context-window'], 'context-window'),
  });
  if (values.script !== undefined) backend.enqueue(...(await loadMockScript(values.script)));
  process.stdout.write(`mock backend listening on ${backend.url}\n`);

  const stop = (): void => {
    void backend.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
