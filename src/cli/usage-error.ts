/** A mistake in how the command was called: one line on stderr, a pointer to --help, exit code 2. */
export class UsageError extends Error {}

function errorCodeOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? (error as { code?: string }).code : undefined;
}

export function isArgumentParseError(error: unknown): boolean {
  return errorCodeOf(error)?.startsWith('ERR_PARSE_ARGS') ?? false;
}

/**
 * node:util's parseArgs explains an unknown option in two sentences about argument terminators; a
 * person who mistyped a flag needs its name and where the list of flags is, on one line.
 */
export function describeUsageProblem(error: unknown, helpCommand: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = errorCodeOf(error);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /'([^']+)'/.exec(message)?.[1] ?? message;
    return `unknown option '${option}' (see \`${helpCommand}\`)`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return `${message.replace(/\.$/, '')} (see \`${helpCommand}\`)`;
  return `${message} (see \`${helpCommand}\`)`;
}
