import type { ResponsesInputItem } from '../responses/responses-request.ts';
import type { ToolDeclaration } from './lower-tools.ts';

/** An input item with its position in the request as Codex sent it, so errors can name `input[3]`. */
export interface IndexedInputItem {
  item: ResponsesInputItem;
  index: number;
}

export interface HoistAdditionalToolsResult {
  value: { items: IndexedInputItem[]; declarations: ToolDeclaration[] };
}

/**
 * Removes every `additional_tools` carrier from the input, wherever it sits, and returns its tools
 * as declarations. Chat has no positional tool scope, so carrier tools become global and are
 * appended after the top-level tools by the caller. This runs before the leading developer messages
 * are folded, so developer messages that followed a carrier still count as the leading run.
 */
export function hoistAdditionalTools(items: readonly IndexedInputItem[]): HoistAdditionalToolsResult {
  const remaining: IndexedInputItem[] = [];
  const declarations: ToolDeclaration[] = [];
  for (const entry of items) {
    if (entry.item.type !== 'additional_tools') {
      remaining.push(entry);
      continue;
    }
    entry.item.tools.forEach((tool, toolIndex) => {
      declarations.push({ tool, source: 'additional_tools', path: `input[${entry.index}].tools[${toolIndex}]` });
    });
  }
  return { value: { items: remaining, declarations } };
}
