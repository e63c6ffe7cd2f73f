/**
 * Text on its way to a terminal or a log view. Ids, versions, tool names, patches and messages come
 * from engines, models and local clients; a terminal acts on the control characters in them (OSC 52
 * writes the clipboard, a title sequence renames the window, a cursor move and a line erase wipe the
 * lines printed before). Every line the CLI prints and every line of the extension's output channel
 * passes through `makeControlCharactersVisible`; the bridge's own colours are spans it adds afterwards.
 */

export type TerminalStyle = 'dim' | 'red' | 'green' | 'yellow' | 'cyan';

/** A piece of text the bridge itself colours (on a terminal that shows colours). */
export interface StyledText {
  readonly text: string;
  readonly style: TerminalStyle;
}

/** A line made of plain and styled pieces, in order. */
export type TerminalLine = ReadonlyArray<string | StyledText>;

/** Plain text, or a line of pieces. */
export type TerminalText = string | TerminalLine;

const SGR_CODES: Readonly<Record<TerminalStyle, string>> = { dim: '2', red: '31', green: '32', yellow: '33', cyan: '36' };

/**
 * The controls (`\p{Cc}`: C0, DEL and C1) but tab, line feed, and a carriage return that ends a line;
 * a carriage return alone would let the rest of a line overwrite its start.
 */
const CONTROL_CHARACTERS = /\r(?!\n)|(?![\t\n\r])\p{Cc}/gu;

export function styled(text: string, style: TerminalStyle): StyledText {
  return { text, style };
}

/** Each control character a terminal would act on, written as `\xHH` (ESC becomes `\x1b`, C1 CSI `\x9b`). */
export function makeControlCharactersVisible(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (character) => `\\x${character.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The text as it may reach a terminal: every piece made visible, styled pieces coloured when `colour`. */
export function renderTerminalText(text: TerminalText, options: { colour: boolean }): string {
  if (typeof text === 'string') return makeControlCharactersVisible(text);
  return text
    .map((piece) => {
      if (typeof piece === 'string') return makeControlCharactersVisible(piece);
      const visible = makeControlCharactersVisible(piece.text);
      return options.colour ? `\u001b[${SGR_CODES[piece.style]}m${visible}\u001b[0m` : visible;
    })
    .join('');
}

/**
 * JSON for a terminal: JSON.stringify already escapes C0 controls in strings but leaves DEL and C1 as
 * they are; they are escaped as `\u00HH`, so the output stays JSON that parses to the same texts.
 */
export function stringifyJsonForTerminal(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[\u007f-\u009f]/g, (character) => `\\u00${character.charCodeAt(0).toString(16)}`);
}
