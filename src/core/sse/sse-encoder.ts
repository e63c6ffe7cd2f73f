/**
 * SSE writer toward Codex (after hono's `writeSSE`). Called for
 * every token, so it builds one string per event and nothing else.
 */

const LINE_BREAK_CHARACTER = /[\r\n]/;

/**
 * `event: <type>\ndata: <one-line JSON>\n\n`. `JSON.stringify` escapes every CR/LF inside strings,
 * so the data is always one line; the event name is the only place a line break could split the frame
 * (and let model-controlled text inject events), hence the check.
 */
export function encodeSseEvent(event: { type: string } & Record<string, unknown>): string {
  const type = event.type;
  if (typeof type !== 'string' || LINE_BREAK_CHARACTER.test(type)) {
    throw new Error(`SSE event name must be a string without CR or LF: ${JSON.stringify(type)}`);
  }
  return `event: ${type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * A comment frame for intermediaries. Codex ignores comments, and they do not reset its idle timer,
 * so keepalives toward Codex must be `response.in_progress` events instead.
 * Each line of `text` becomes its own comment line so a line break cannot turn text into a field.
 */
export function encodeSseComment(text: string): string {
  if (!LINE_BREAK_CHARACTER.test(text)) return `: ${text}\n\n`;
  return `${text
    .split(/\r\n|\r|\n/)
    .map((line) => `: ${line}\n`)
    .join('')}\n`;
}
