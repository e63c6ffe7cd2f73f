import { renderTerminalText, type TerminalText } from '../core/terminal-text.ts';

/** Writes text to one stream; every line the CLI prints goes through one of these. */
export type TerminalWriter = (text: TerminalText) => void;

/**
 * Colours only where a person reads them: a terminal, unless NO_COLOR is set to anything
 * (no-color.org) or the terminal says it cannot show them. A pipe or a file gets plain text.
 */
export function shouldUseColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env.NO_COLOR ?? '') === '' && env.TERM !== 'dumb';
}

/**
 * The CLI's one way to a stream: control characters in the text made visible (it carries ids and
 * messages from engines and clients), the bridge's own colours added only on a terminal.
 */
export function createTerminalWriter(stream: { write(text: string): unknown; isTTY?: boolean }, env: NodeJS.ProcessEnv): TerminalWriter {
  const colour = shouldUseColour(stream, env);
  return (text) => {
    stream.write(renderTerminalText(text, { colour }));
  };
}
