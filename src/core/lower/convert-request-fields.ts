import type { BridgeOptions } from '../bridge-options.ts';
import type { ChatRequest } from '../chat/chat-completions-api.ts';
import { InvalidRequestError } from '../errors.ts';
import type { ResponsesRequest } from '../responses/responses-request.ts';
import { createWarning } from '../warnings.ts';
import { createPendingWarning, type PendingWarning } from './pending-warning.ts';

/** The scalar Chat fields lowering sets besides messages and tools. */
export type ChatRequestFields = Pick<ChatRequest, 'max_tokens' | 'temperature' | 'top_p' | 'reasoning_effort' | 'response_format'>;

export interface ConvertRequestFieldsResult {
  value: ChatRequestFields;
  warnings: PendingWarning[];
}

/**
 * `clamp` maps efforts a pre-0.21 vLLM rejects onto its `low|medium|high` and
 * keeps `none`; values it cannot place are dropped rather than guessed.
 */
const CLAMPED_REASONING_EFFORTS: Readonly<Record<string, string>> = Object.freeze({
  none: 'none',
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
  max: 'high',
});

/** `reasoning.effort` → `reasoning_effort` per the backend profile; null = not sent. */
export function mapReasoningEffort(effort: string, mode: BridgeOptions['reasoningEffort']): string | null {
  switch (mode) {
    case 'forward':
      // Verbatim, whatever the string: the engine validates ("max", "xhigh" are valid on newer vLLM).
      return effort;
    case 'clamp':
      return CLAMPED_REASONING_EFFORTS[effort] ?? null;
    case 'drop':
      return null;
    default: {
      const unreachable: never = mode;
      throw new Error(`unhandled reasoningEffort mode ${String(unreachable)}`);
    }
  }
}

function convertResponseFormat(request: ResponsesRequest, warnings: PendingWarning[]): Record<string, unknown> | undefined {
  const format = request.text?.format;
  if (!format) return undefined;
  switch (format.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      if (!format.schema) {
        throw new InvalidRequestError('`text.format.schema` is missing (required for json_schema)', { param: 'text.format.schema' });
      }
      const jsonSchema: Record<string, unknown> = { name: format.name ?? 'response', schema: format.schema };
      if (typeof format.strict === 'boolean') jsonSchema['strict'] = format.strict;
      return { type: 'json_schema', json_schema: jsonSchema };
    }
    default:
      warnings.push(
        createPendingWarning(createWarning('unknown_format_type', `text.format type '${format.type}' has no Chat Completions equivalent; ignored`)),
      );
      return undefined;
  }
}

/**
 * Scalar fields. Fields Codex sends that have no Chat meaning (`store`, `include`,
 * `prompt_cache_key`, `client_metadata`, `text.verbosity`, `reasoning.summary` …) are accepted
 * and not forwarded; `chat_template_kwargs` is never invented (Mistral-tokenizer vLLM rejects it).
 */
export function convertRequestFields(request: ResponsesRequest, options: BridgeOptions, reasoningEffortOverride: string | null = null): ConvertRequestFieldsResult {
  const warnings: PendingWarning[] = [];
  const value: ChatRequestFields = {};
  // Codex never sends max_output_tokens; none is invented, so vLLM uses the remaining context.
  if (typeof request.max_output_tokens === 'number') value.max_tokens = request.max_output_tokens;
  if (typeof request.temperature === 'number') value.temperature = request.temperature;
  if (typeof request.top_p === 'number') value.top_p = request.top_p;

  // A `configuration_update` in the history wins over the request's own effort (apply-configuration-updates.ts).
  const effort = reasoningEffortOverride ?? request.reasoning?.effort;
  if (typeof effort === 'string') {
    const mapped = mapReasoningEffort(effort, options.reasoningEffort);
    if (mapped !== null) value.reasoning_effort = mapped;
    if (mapped !== effort) {
      const outcome = mapped === null ? 'was not sent' : `was sent as '${mapped}'`;
      warnings.push(
        createPendingWarning(
          createWarning('reasoning_effort_changed', `${reasoningEffortOverride === null ? 'reasoning.effort' : 'the reasoning effort of configuration_update'} '${effort}' ${outcome} (reasoningEffort: ${options.reasoningEffort})`),
          // Codex sends the same effort on every request; the setting is deliberate, so once is enough.
          { key: `reasoning_effort_changed:${effort}`, fingerprint: `${options.reasoningEffort}:${mapped ?? ''}` },
        ),
      );
    }
  }

  const responseFormat = convertResponseFormat(request, warnings);
  if (responseFormat) value.response_format = responseFormat;
  return { value, warnings };
}
