import { extractLargeStrings, setOwnProperty, type LargeStringTable } from '../large-json-strings.ts';

/*
 * Which strings of a Responses request the lowering copies into the Chat request without reading them:
 * there a placeholder for a long string (large-json-strings.ts) may stay, and its bytes are spliced back
 * into the serialised Chat request. Everywhere else the real text is restored before lowering, because
 * the lowering reads it: tool definitions and grammars, replayed arguments (parsed), custom tool inputs
 * (re-serialised), encrypted content (tested), structured tool outputs and agent messages (joined where
 * a part does not already end with a line break), items it does not know (quoted in a warning).
 *
 * Passthrough text may only be copied, joined with other text, or compared with ''. A long string is
 * never empty, so that comparison gives the same answer for a placeholder. Anything more must read the
 * restored text, and the field then leaves this list.
 */

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const TEXT_PART_TYPES: ReadonlySet<unknown> = new Set(['input_text', 'output_text', 'text']);

/** A copy of the part with everything but `text` restored, when `keep` says the part's text passes through. */
function restorePart(part: unknown, table: LargeStringTable, keep: (type: unknown) => boolean): unknown {
  if (!isObject(part) || !keep(part['type'])) return table.restore(part);
  const copy: JsonObject = {};
  for (const [key, value] of Object.entries(part)) setOwnProperty(copy, key, key === 'text' && typeof value === 'string' ? value : table.restore(value));
  return copy;
}

function restoreParts(parts: unknown, table: LargeStringTable, keep: (type: unknown) => boolean): unknown {
  if (!Array.isArray(parts)) return table.restore(parts);
  return parts.map((part) => restorePart(part, table, keep));
}

const isTextPart = (type: unknown): boolean => TEXT_PART_TYPES.has(type);
const isReasoningTextPart = (type: unknown): boolean => type === 'reasoning_text';
const isSummaryTextPart = (type: unknown): boolean => type === 'summary_text';

/** How one field of an item of this type passes through; null restores it. */
function passthroughField(type: unknown, key: string, value: unknown, table: LargeStringTable): unknown {
  switch (type) {
    case 'message':
      if (key === 'content') return typeof value === 'string' ? value : restoreParts(value, table, isTextPart);
      return null;
    case 'reasoning':
      if (key === 'content') return restoreParts(value, table, isReasoningTextPart);
      if (key === 'summary') return restoreParts(value, table, isSummaryTextPart);
      return null;
    case 'function_call_output':
    case 'custom_tool_call_output':
      return key === 'output' && typeof value === 'string' ? value : null;
    default:
      return null;
  }
}

function restoreItem(item: unknown, table: LargeStringTable): unknown {
  if (!isObject(item)) return table.restore(item);
  // The schema's own default: an item with a role and no type is a message.
  const type = item['type'] === undefined && 'role' in item ? 'message' : item['type'];
  const copy: JsonObject = {};
  for (const [key, value] of Object.entries(item)) setOwnProperty(copy, key, passthroughField(type, key, value, table) ?? table.restore(value));
  return copy;
}

/**
 * The request parsed from `table.skeleton`, with the real text restored everywhere the lowering reads
 * it. `instructions`, a string `input` and the passthrough fields of input items keep their
 * placeholders.
 */
export function restoreAllButPassthroughText(body: unknown, table: LargeStringTable): unknown {
  if (!isObject(body)) return table.restore(body);
  const copy: JsonObject = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === 'instructions' && typeof value === 'string') setOwnProperty(copy, key, value);
    else if (key === 'input') setOwnProperty(copy, key, typeof value === 'string' ? value : Array.isArray(value) ? value.map((item) => restoreItem(item, table)) : table.restore(value));
    else setOwnProperty(copy, key, table.restore(value));
  }
  return copy;
}

/**
 * From this size on a request body's long strings are carried as bytes instead of being parsed and
 * serialised again: a 10 MB session costs about half as much. Below it, finding them costs about what
 * it saves (a 50 kB Codex turn: no gain, `npm run bench`).
 */
export const LARGE_STRINGS_MIN_BODY_BYTES = 256 * 1024;

/**
 * A Responses request body of `LARGE_STRINGS_MIN_BODY_BYTES` or more, already checked to be UTF-8 and
 * starting at `start` (after a byte order mark), parsed with its long strings carried as bytes: the
 * body for lowering and the table that splices them back. Null when the body is smaller, has no long
 * string, or is not JSON: the caller then parses it whole, and `JSON.parse` words any refusal.
 */
export function parseWithLargeStrings(bytes: Buffer, start: number): { body: unknown; table: LargeStringTable } | null {
  if (bytes.length < LARGE_STRINGS_MIN_BODY_BYTES) return null;
  const table = extractLargeStrings(bytes, { start });
  if (table === null) return null;
  let skeleton: unknown;
  try {
    skeleton = JSON.parse(table.skeleton);
  } catch {
    return null;
  }
  return { body: restoreAllButPassthroughText(skeleton, table), table };
}
