import { extractLargeStrings, type LargeStringTable } from '../large-json-strings.ts';

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

/**
 * Restores a value of an object in place. The skeleton's objects are the parse's own, shared with
 * nothing: rewriting them costs one assignment per changed field, where copies cost one object per
 * item of a long history. Assigning to a key parsed as `__proto__` sets that own property.
 */
function restoreField(target: JsonObject, key: string, table: LargeStringTable): void {
  const value = target[key];
  const restored = table.restore(value);
  if (restored !== value) target[key] = restored;
}

/** Everything of the part but `text` restored, when `keep` says the part's text passes through. */
function restorePart(part: unknown, table: LargeStringTable, keep: (type: unknown) => boolean): unknown {
  if (!isObject(part) || !keep(part['type'])) return table.restore(part);
  for (const key of Object.keys(part)) if (key !== 'text' || typeof part[key] !== 'string') restoreField(part, key, table);
  return part;
}

function restoreParts(parts: unknown, table: LargeStringTable, keep: (type: unknown) => boolean): unknown {
  if (!Array.isArray(parts)) return table.restore(parts);
  for (let index = 0; index < parts.length; index++) parts[index] = restorePart(parts[index], table, keep);
  return parts;
}

const isTextPart = (type: unknown): boolean => TEXT_PART_TYPES.has(type);
const isReasoningTextPart = (type: unknown): boolean => type === 'reasoning_text';
const isSummaryTextPart = (type: unknown): boolean => type === 'summary_text';

/** Restores one field of an item of this type, keeping the text that passes through. */
function restoreItemField(item: JsonObject, type: unknown, key: string, table: LargeStringTable): void {
  const value = item[key];
  if (type === 'message' && key === 'content') {
    if (typeof value !== 'string') item[key] = restoreParts(value, table, isTextPart);
  } else if (type === 'reasoning' && key === 'content') {
    item[key] = restoreParts(value, table, isReasoningTextPart);
  } else if (type === 'reasoning' && key === 'summary') {
    item[key] = restoreParts(value, table, isSummaryTextPart);
  } else if ((type === 'function_call_output' || type === 'custom_tool_call_output') && key === 'output' && typeof value === 'string') {
    // Passes through.
  } else {
    restoreField(item, key, table);
  }
}

function restoreItem(item: unknown, table: LargeStringTable): unknown {
  if (!isObject(item)) return table.restore(item);
  // The schema's own default: an item with a role and no type is a message.
  const type = item['type'] === undefined && 'role' in item ? 'message' : item['type'];
  for (const key of Object.keys(item)) restoreItemField(item, type, key, table);
  return item;
}

/**
 * The request parsed from `table.skeleton`, restored in place: the real text everywhere the lowering
 * reads it. `instructions`, a string `input` and the passthrough fields of input items keep their
 * placeholders.
 */
export function restoreAllButPassthroughText(body: unknown, table: LargeStringTable): unknown {
  if (!isObject(body)) return table.restore(body);
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (key === 'instructions' && typeof value === 'string') continue;
    if (key === 'input' && typeof value === 'string') continue;
    if (key === 'input' && Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) value[index] = restoreItem(value[index], table);
    } else {
      restoreField(body, key, table);
    }
  }
  return body;
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
