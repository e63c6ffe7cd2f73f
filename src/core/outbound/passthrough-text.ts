declare const passthroughBrand: unique symbol;

/**
 * Text of the Responses request that the lowering copies into the Chat request without reading it.
 * For a large body it may be or contain a placeholder for a long string, so all it offers is what
 * gives the same result for a placeholder as for the text it stands for: copying, joining, and
 * comparing with '' (a long string is never empty). It is a string at run time; the type is opaque
 * so that nothing else compiles.
 */
export type PassthroughText = { readonly [passthroughBrand]: 'passthrough' };

/** Real text may always pass through: it is its own copy. */
export function passthroughText(text: string): PassthroughText {
  return text as unknown as PassthroughText;
}

export function joinPassthroughText(texts: readonly PassthroughText[], separator: string): PassthroughText {
  return passthroughText((texts as unknown as readonly string[]).join(separator));
}

export function isEmptyPassthroughText(text: PassthroughText | null | undefined): boolean {
  return text === undefined || text === null || (text as unknown as string) === '';
}

/** The text as it goes into the Chat request: whatever placeholders it holds are spliced when the request is encoded. */
export function outgoingText(text: PassthroughText): string {
  return text as unknown as string;
}

/**
 * Where passthrough text stands in a Responses request: the one list of it. The request schema types
 * these fields `PassthroughText` (responses/responses-request.ts); a large body's parse keeps its
 * long strings as placeholders there and gives every other field its real text (outbound-encoding.ts).
 */
export const PASSTHROUGH_FIELDS = {
  /** Fields of the request that pass through when their value is a string. */
  request: ['instructions', 'input'],
  /** Per input item type, the field that passes through when its value is a string. */
  itemStrings: { message: 'content', function_call_output: 'output', custom_tool_call_output: 'output' },
  /** Per input item type and field, the kinds of part whose `text` passes through. */
  itemParts: {
    message: { content: ['input_text', 'output_text', 'text'] },
    reasoning: { content: ['reasoning_text'], summary: ['summary_text'] },
  },
} as const;
