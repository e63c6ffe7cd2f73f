/**
 * The one JSON entry point (style.md §4): never `JSON.parse` and cast. The raw text is kept for the
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
