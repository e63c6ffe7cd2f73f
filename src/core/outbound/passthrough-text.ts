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
