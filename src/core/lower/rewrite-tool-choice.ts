import type { BridgeOptions } from '../bridge-options.ts';
import type { ChatToolChoice } from '../chat/chat-completions-api.ts';
import { InvalidRequestError } from '../errors.ts';
import type { ResponsesToolChoice, ResponsesToolReference } from '../responses/responses-request.ts';
import { toWireName } from '../tool-map.ts';
import { createWarning, type BridgeWarning } from '../warnings.ts';
import type { LoweredToolRecord } from './lower-tools.ts';

export interface ToolChoiceRewrite {
  /**
   * What goes upstream; undefined = omit the field. Always undefined when no tool remains: vLLM
   * answers any `tool_choice` without `tools` with a 400.
   */
  toolChoice: ChatToolChoice | undefined;
  /** Wire names of the lowered tools that go upstream (`allowed_tools` and namespace choices filter). */
  selectedWireNames: ReadonlySet<string>;
}

export interface RewriteToolChoiceContext {
  /** Whether the client declared any tool at all (hosted ones included), top level or in a carrier. */
  clientDeclaredTools: boolean;
  options: BridgeOptions;
}

export interface RewriteToolChoiceResult {
  value: ToolChoiceRewrite;
  warnings: BridgeWarning[];
}

interface Draft {
  toolChoice: ChatToolChoice | undefined;
  selected: ReadonlySet<string>;
}

type SentTool = LoweredToolRecord & { wireName: string; chatTool: NonNullable<LoweredToolRecord['chatTool']> };

function describeChoice(toolChoice: ResponsesToolChoice): string {
  return typeof toolChoice === 'string' ? `"${toolChoice}"` : JSON.stringify(toolChoice);
}

/** The named form; a passed-through Chat-native custom tool needs the custom form (OpenAI only). */
function nameTool(tool: SentTool): ChatToolChoice {
  return tool.chatTool.type === 'custom'
    ? { type: 'custom', custom: { name: tool.wireName } }
    : { type: 'function', function: { name: tool.wireName } };
}

function rejectRequiredWithoutTools(context: RewriteToolChoiceContext, what: string): void {
  if (!context.clientDeclaredTools) {
    throw new InvalidRequestError(`tool_choice ${what} requires at least one tool, and the request declares none`, {
      param: 'tool_choice',
    });
  }
}

/**
 * Rewrites a Responses `tool_choice` into a form every engine accepts: vLLM takes only
 * `"none"`, `"auto"`, `"required"` and `{"type":"function","function":{"name"}}`, and answers
 * `allowed_tools`, custom and hosted forms with a 400.
 */
export function rewriteToolChoice(
  toolChoice: ResponsesToolChoice | null | undefined,
  tools: readonly LoweredToolRecord[],
  context: RewriteToolChoiceContext,
): RewriteToolChoiceResult {
  const sent = tools.filter((tool): tool is SentTool => tool.chatTool !== null && tool.wireName !== null);
  const allWireNames: ReadonlySet<string> = new Set(sent.map((tool) => tool.wireName));
  const warnings: BridgeWarning[] = [];
  const rewriteTo = (fallback: ChatToolChoice, why: string): Draft => {
    warnings.push(createWarning('tool_choice_rewritten', `tool_choice ${describeChoice(toolChoice ?? '')} ${why}; sent "${String(fallback)}"`));
    return { toolChoice: fallback, selected: allWireNames };
  };

  const resolveNamed = (type: string, name: string | null | undefined, namespace: string | null | undefined): Draft => {
    if (!name) return rewriteTo('auto', 'names no tool');
    if (type === 'custom' && context.options.dropCustomTools) {
      return rewriteTo('auto', 'names a custom tool, and custom tools are dropped (dropCustomTools)');
    }
    const wireName = toWireName(namespace ?? null, name);
    const tool = sent.find((candidate) => candidate.wireName === wireName);
    if (!tool) return rewriteTo('auto', 'names a tool that is not among the tools sent to the backend');
    return { toolChoice: nameTool(tool), selected: allWireNames };
  };

  const selectByReferences = (references: readonly ResponsesToolReference[]): Set<string> => {
    const selected = new Set<string>();
    for (const reference of references) {
      for (const tool of sent) {
        const matches =
          reference.type === 'namespace'
            ? tool.namespace !== null && tool.namespace === reference.name
            : (reference.type === 'function' || reference.type === 'custom') &&
              typeof reference.name === 'string' &&
              tool.wireName === toWireName(reference.namespace ?? null, reference.name);
        if (matches) selected.add(tool.wireName);
      }
    }
    return selected;
  };

  const noteFiltered = (selected: ReadonlySet<string>): void => {
    if (selected.size === allWireNames.size) return;
    // Filtering changes the prompt prefix (and the backend's prefix cache); say so.
    warnings.push(
      createWarning(
        'tools_filtered',
        `tool_choice ${describeChoice(toolChoice ?? '')} keeps ${selected.size} of ${allWireNames.size} tools; the others are not sent`,
      ),
    );
  };

  const draft = ((): Draft => {
    if (toolChoice === null || toolChoice === undefined) return { toolChoice: undefined, selected: allWireNames };
    if (typeof toolChoice === 'string') {
      switch (toolChoice) {
        case 'auto':
        case 'none':
          return { toolChoice, selected: allWireNames };
        case 'required':
          rejectRequiredWithoutTools(context, '"required"');
          return { toolChoice, selected: allWireNames };
        default:
          return rewriteTo('auto', 'is not a value the bridge knows');
      }
    }
    switch (toolChoice.type) {
      case 'function':
      case 'custom':
        return resolveNamed(toolChoice.type, toolChoice.name, toolChoice.namespace);
      case 'allowed_tools': {
        const requestedMode = toolChoice.mode ?? 'auto';
        const mode = requestedMode === 'none' || requestedMode === 'required' ? requestedMode : 'auto';
        if (requestedMode !== mode) {
          warnings.push(createWarning('tool_choice_rewritten', `allowed_tools mode '${requestedMode}' is unknown; sent "auto"`));
        }
        if (mode === 'required') rejectRequiredWithoutTools(context, 'allowed_tools with mode "required"');
        const selected = selectByReferences(toolChoice.tools ?? []);
        noteFiltered(selected);
        const only = selected.size === 1 ? sent.find((tool) => selected.has(tool.wireName)) : undefined;
        return { toolChoice: mode === 'required' && only ? nameTool(only) : mode, selected };
      }
      case 'namespace': {
        const selected = new Set(sent.filter((tool) => tool.namespace !== null && tool.namespace === toolChoice.name).map((tool) => tool.wireName));
        noteFiltered(selected);
        return { toolChoice: 'auto', selected };
      }
      default:
        // web_search, mcp, file_search, hosted tool_search … : the backend cannot run them.
        return rewriteTo('auto', 'names a hosted tool the backend cannot run');
    }
  })();

  if (draft.selected.size === 0 && draft.toolChoice !== undefined) {
    // Plain "auto"/"none" without tools means the same as no tool_choice; anything else was a request.
    if (toolChoice !== 'auto' && toolChoice !== 'none') {
      warnings.push(
        createWarning(
          'tool_choice_rewritten',
          `tool_choice ${describeChoice(toolChoice ?? '')} cannot be honoured: no tool remains after lowering; tool_choice and tools are omitted`,
        ),
      );
    }
    return { value: { toolChoice: undefined, selectedWireNames: draft.selected }, warnings };
  }
  return { value: { toolChoice: draft.toolChoice, selectedWireNames: draft.selected }, warnings };
}
