/** The four-method logger core and server depend on; the CLI and the extension implement it. */
export interface Logger {
  error(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
  info(message: string, details?: Record<string, unknown>): void;
  debug(message: string, details?: Record<string, unknown>): void;
}

export function createSilentLogger(): Logger {
  const ignore = (): void => undefined;
  return { error: ignore, warn: ignore, info: ignore, debug: ignore };
}
