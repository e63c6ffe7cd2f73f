import { checkGrammarInput, findPatternViolation } from '../grammar/check-grammar-input.ts';
import { createGrammarCache, type GrammarCache } from '../grammar/grammar-cache.ts';
import { createCallId, createItemId } from '../ids.ts';
import { parseJson } from '../parse-json.ts';
import type { ToolMap, ToolMapEntry } from '../tool-map.ts';
import { createWarning, type BridgeWarning } from '../warnings.ts';
import type { ResponsesCustomToolCallItem, ResponsesFunctionCallItem } from '../responses/responses-output.ts';
import { judgeAsCodex } from '../apply-patch/apply-patch-verdict.ts';
import { removeApplyPatchHeredoc } from '../apply-patch/rescue-apply-patch.ts';
import { isUnterminatedJsonPrefix, liftCustomToolArguments } from './lift-custom-tool-arguments.ts';

/*
 * One backend tool call → one Responses item. Shared by the
 * non-stream converter and the stream translator, which calls it once per call after the finish
 * chunk, so both paths deliver the same items.
 */

export interface LiftToolCallInput {
  /** Function name as the backend returned it (namespace joined, maybe shortened). */
  wireName: string;
  argumentsText: string;
  /** Already unique within the response (see createCallIdDeduplicator). */
  callId: string;
  finishReason: string | null;
  toolMap: ToolMap;
  /** Item id to use, e.g. the one the stream already announced in `output_item.added`. */
  itemId?: string;
  /** Deliver a custom tool's input repaired when a repair makes it match the grammar (BridgeOptions.grammarRepair). */
  grammarRepair?: boolean;
  /**
   * Compiled grammars, owned by the caller (one per process, or per response). Without one, the
   * grammar is compiled for this call alone and an uncompilable grammar is reported every time.
   */
  grammarCache?: GrammarCache;
}

export type LiftedToolCall =
  | {
      item: ResponsesFunctionCallItem | ResponsesCustomToolCallItem;
      warnings: BridgeWarning[];
      /** The delivered custom input was repaired to match its grammar, so it differs from what the backend sent. */
      grammarRepaired?: boolean;
    }
  | { item: null; truncatedKind: 'function_call' | 'custom_tool_call'; warnings: BridgeWarning[] };

export function liftToolCall(input: LiftToolCallInput): LiftedToolCall {
  const entry = input.toolMap.get(input.wireName);
  if (entry === undefined) return liftFunctionCall(input, undefined);
  switch (entry.kind) {
    case 'custom':
      return liftBridgedCustomCall(input, entry);
    case 'function':
      return liftFunctionCall(input, entry);
    default: {
      const unreachable: never = entry.kind;
      return unreachable;
    }
  }
}

/**
 * The `arguments` text of a wire tool call. Engines send a string; a few send an already-parsed
 * object, re-serialised compactly here so every later step sees text.
 */
export function readChatToolCallArguments(argumentsValue: string | Record<string, unknown> | null | undefined): string {
  if (argumentsValue === null || argumentsValue === undefined) return '';
  if (typeof argumentsValue === 'string') return argumentsValue;
  return JSON.stringify(argumentsValue);
}

function liftBridgedCustomCall(input: LiftToolCallInput, entry: ToolMapEntry): LiftedToolCall {
  const lifted = liftCustomToolArguments(input.argumentsText, {
    tool: entry.name,
    callId: input.callId,
    finishReason: input.finishReason,
  });
  if (lifted.truncated) return { item: null, truncatedKind: 'custom_tool_call', warnings: lifted.warnings };
  const helperCall = entry.execAppliesPatches === true ? patchAsExecHelperCall(lifted.input, entry.name, input.callId) : null;
  // The backend could not enforce the grammar, so the lifted input is checked here.
  const checked =
    helperCall !== null
      ? helperCall
      : entry.grammar === null
        ? { input: lifted.input, warnings: [], repaired: false }
        : checkGrammarInput({
            tool: entry.name,
            callId: input.callId,
            input: lifted.input,
            grammar: entry.grammar,
            cache: input.grammarCache ?? createGrammarCache({ maxEntries: 1 }),
            repair: input.grammarRepair ?? false,
            // A model that finished cleanly also finished its last line; anything else may be a cut.
            mayBeCut: !(input.finishReason === 'tool_calls' || input.finishReason === 'stop') || !lifted.input.endsWith('\n'),
          });
  checked.warnings.push(
    ...findPatternViolation({ enforcedPattern: entry.enforcedPattern === true, tool: entry.name, callId: input.callId, input: lifted.input, grammar: entry.grammar, cache: input.grammarCache ?? createGrammarCache({ maxEntries: 1 }) }),
  );
  const item = createCustomToolCallItem({
    itemId: input.itemId,
    callId: input.callId,
    name: entry.name,
    namespace: entry.namespace,
    input: checked.input,
  });
  const warnings = [...lifted.warnings, ...checked.warnings];
  return checked.repaired ? { item, warnings, grammarRepaired: true } : { item, warnings };
}

/**
 * A code-mode `exec` body that is one whole patch envelope (never valid JavaScript: it starts with
 * `***`), or that patch in an `apply_patch <<'EOF'` heredoc with no other command (a shell habit, never
 * valid JavaScript either), was meant for the patch tool; it becomes the call of the `tools.apply_patch`
 * helper that `exec` declares, with the patch as a string literal, so it runs instead of failing as a
 * syntax error.
 */
function patchAsExecHelperCall(text: string, tool: string, callId: string): { input: string; warnings: BridgeWarning[]; repaired: boolean } | null {
  const heredocBody = removeApplyPatchHeredoc(text);
  const patch = (heredocBody ?? text).trim();
  if (!patch.startsWith('*** Begin Patch') || !judgeAsCodex(patch).accepted) return null;
  const input = `text(await tools.apply_patch(${JSON.stringify(`${patch}\n`)}));\n`;
  const what = heredocBody === null ? 'a patch' : "a patch in an `apply_patch <<'EOF'` shell heredoc";
  const warning = createWarning(
    'grammar_repaired',
    `the ${tool} input was ${what}, not JavaScript; delivered it as a call of the apply_patch helper: text(await tools.apply_patch(…))`,
    { tool, callId, raw: text },
  );
  return { input, warnings: [warning], repaired: true };
}

function liftFunctionCall(input: LiftToolCallInput, entry: ToolMapEntry | undefined): LiftedToolCall {
  // Plain function arguments go through as received (Codex parses them itself), except when they
  // were cut off: a partial call must never run.
  const parses = parseJson(input.argumentsText).success;
  if (!parses && (input.finishReason === 'length' || isUnterminatedJsonPrefix(input.argumentsText))) {
    const tool = entry?.name ?? input.wireName;
    const why =
      input.finishReason === 'length'
        ? 'the arguments do not parse and the backend stopped for length'
        : 'the arguments end inside an unfinished JSON value (vLLM reports tool_calls even when cut by length)';
    return {
      item: null,
      truncatedKind: 'function_call',
      warnings: [createWarning('truncated', `call not delivered: ${why}`, { tool, callId: input.callId, raw: input.argumentsText })],
    };
  }
  // Unknown names (the model invented a tool) stay as they are: Codex answers `unsupported call`
  // and the model can recover.
  const item: ResponsesFunctionCallItem = {
    type: 'function_call',
    id: input.itemId ?? createItemId('fc'),
    call_id: input.callId,
    ...(entry?.namespace ? { namespace: entry.namespace } : {}),
    name: entry?.name ?? input.wireName,
    arguments: input.argumentsText,
    status: 'completed',
  };
  return { item, warnings: [] };
}

/**
 * A Chat-native `{"type":"custom","custom":{name,input}}` call (backends with custom-tool support,
 * `passthrough` strategy) is already free-form: it becomes a `custom_tool_call` whatever the
 * strategy, with the namespace restored when the name is a known wire name.
 */
export function liftNativeCustomToolCall(input: {
  name: string;
  input: string;
  callId: string;
  toolMap: ToolMap;
  itemId?: string;
}): ResponsesCustomToolCallItem {
  const entry = input.toolMap.get(input.name);
  return createCustomToolCallItem({
    itemId: input.itemId,
    callId: input.callId,
    name: entry?.name ?? input.name,
    namespace: entry?.namespace ?? null,
    input: input.input,
  });
}

function createCustomToolCallItem(fields: {
  itemId: string | undefined;
  callId: string;
  name: string;
  namespace: string | null;
  input: string;
}): ResponsesCustomToolCallItem {
  return {
    type: 'custom_tool_call',
    id: fields.itemId ?? createItemId('ctc'),
    call_id: fields.callId,
    // Codex matches namespaced tools by bare name plus `namespace`.
    ...(fields.namespace !== null ? { namespace: fields.namespace } : {}),
    name: fields.name,
    input: fields.input,
    status: 'completed',
  };
}

/**
 * Call ids unique within one response: engines may omit them (synthesised `call_<24 hex>`)
 * or repeat them (index-based ids, Ollama), and Codex matches tool outputs by `call_id`. Create one
 * per response and call it once per tool call, not per stream delta. `createId` makes synthesised
 * ids deterministic in tests.
 */
export function createCallIdDeduplicator(
  createId: () => string = createCallId,
): (callId: string | null | undefined) => { callId: string; warning: BridgeWarning | null } {
  const seen = new Set<string>();
  return (callId) => {
    if (callId === null || callId === undefined || callId.trim() === '') {
      let synthesised = createId();
      // Falls back to random ids should an injected factory repeat itself.
      while (seen.has(synthesised)) synthesised = createCallId();
      seen.add(synthesised);
      return { callId: synthesised, warning: null };
    }
    if (!seen.has(callId)) {
      seen.add(callId);
      return { callId, warning: null };
    }
    let suffix = 2;
    while (seen.has(`${callId}_${suffix}`)) suffix += 1;
    const unique = `${callId}_${suffix}`;
    seen.add(unique);
    return {
      callId: unique,
      warning: createWarning('duplicate_call_id', `the backend reused call id ${JSON.stringify(callId)} within one response; delivered as ${JSON.stringify(unique)}`, {
        callId: unique,
      }),
    };
  };
}
