/**
 * The one JSON entry point: never `JSON.parse` and cast. The raw text is kept for the
 * traffic view.
 */
export type ParseJsonResult =
  | { success: true; value: unknown; rawValue: string }
  | { success: false; error: Error; rawValue: string };

export function parseJson(text: string): ParseJsonResult {
  try {
    return { success: true, value: JSON.parse(text) as unknown, rawValue: text };
  } catch (error) {
    return { success: false, error: error instanceof Error ? error : new Error(String(error)), rawValue: text };
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether a parsed JSON value nests arrays and objects more than `limit` levels deep (a scalar is 0
 * levels, `[]` is 1). Iterative on purpose: V8's `JSON.parse` accepts any depth, but `JSON.stringify`,
 * zod and the backends' parsers recurse and overflow their stacks on what it accepts.
 */
export function exceedsJsonNestingDepth(value: unknown, limit: number): boolean {
  // Runs on every request body (it sits on the hot path): two parallel stacks and in-place iteration,
  // instead of an entry object and an Object.values copy per nested object.
  const values: object[] = [];
  const depths: number[] = [];
  const push = (child: unknown, depth: number): void => {
    if (typeof child === 'object' && child !== null) {
      values.push(child);
      depths.push(depth);
    }
  };
  push(value, 1);
  while (values.length > 0) {
    const current = values.pop() as object;
    const depth = depths.pop() as number;
    if (depth > limit) return true;
    if (Array.isArray(current)) {
      for (let index = 0; index < current.length; index++) push(current[index], depth + 1);
    } else {
      const record = current as Record<string, unknown>;
      // JSON.parse output: plain objects, own enumerable keys only, so for…in sees exactly the members.
      for (const key in record) push(record[key], depth + 1);
    }
  }
  return false;
}

/**
 * Whether two parsed JSON values are the same value with their keys in the same order. Walks both
 * once and stops at the first difference.
 */
export function isSameJsonValue(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  if (Array.isArray(left)) {
    if (!Array.isArray(right) || left.length !== right.length) return false;
    for (let index = 0; index < left.length; index++) if (!isSameJsonValue(left[index], right[index])) return false;
    return true;
  }
  if (Array.isArray(right)) return false;
  // One key array, the other side walked in its own order (for…in: parsed JSON has no inherited or symbol keys).
  const leftKeys = Object.keys(left);
  const leftRecord = left as Record<string, unknown>;
  const rightRecord = right as Record<string, unknown>;
  let index = 0;
  for (const key in rightRecord) {
    if (key !== leftKeys[index] || !isSameJsonValue(leftRecord[key], rightRecord[key])) return false;
    index++;
  }
  return index === leftKeys.length;
}

/**
 * The keys of the outermost object in `text` that appear more than once, in first-seen order. JSON.parse
 * keeps the last value of a repeated key without a word, so whoever unwraps one value must ask this
 * first. Scans the text once; meant for text that parses (anything else gives a best-effort answer).
 */
export function findDuplicateTopLevelKeys(text: string): string[] {
  const seen = new Set<string>();
  const duplicates: string[] = [];
  let depth = 0;
  let expectingKey = false;
  let outermostIsObject = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charAt(index);
    if (char === '"') {
      const end = findStringEnd(text, index);
      if (depth === 1 && expectingKey) {
        const raw = text.slice(index, end + 1);
        const decoded = parseJson(raw);
        const key = decoded.success && typeof decoded.value === 'string' ? decoded.value : raw;
        if (seen.has(key) && !duplicates.includes(key)) duplicates.push(key);
        seen.add(key);
        expectingKey = false;
      }
      index = end;
    } else if (char === '{' || char === '[') {
      depth += 1;
      if (depth === 1) outermostIsObject = char === '{';
      expectingKey = depth === 1 && outermostIsObject;
    } else if (char === '}' || char === ']') {
      depth -= 1;
    } else if (char === ',' && depth === 1 && outermostIsObject) {
      expectingKey = true;
    }
  }
  return duplicates;
}

/** Index of the quote closing the string that opens at `start` (the last index when it never closes). */
function findStringEnd(text: string, start: number): number {
  for (let index = start + 1; index < text.length; index += 1) {
    const char = text.charAt(index);
    if (char === '\\') index += 1;
    else if (char === '"') return index;
  }
  return text.length - 1;
}
