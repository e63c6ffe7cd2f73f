/**
 * The doctor's chat requests: each the smallest that proves one thing a Codex session needs. The tool
 * is the one Codex leans on, `apply_patch`, in the form the bridge lowers it to (a function with one
 * string parameter `input`), offered with `tool_choice: "auto"` as Codex offers it: an engine that
 * needs a flag for automatic tool choice (vLLM) refuses exactly as it would refuse Codex.
 */
export const PROBE_TOOL_NAME = 'apply_patch';

/** Enough for a one-line patch wrapped in any engine's call syntax; a CPU engine writes it in about a second. */
const TOOL_PROBE_MAX_TOKENS = 96;

/** A 1×1 PNG: the smallest image an engine with vision takes. */
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==';

const probeTool = {
  type: 'function',
  function: {
    name: PROBE_TOOL_NAME,
    description: 'Edits files. The input is a patch in the apply_patch format: *** Begin Patch, file sections, *** End Patch.',
    parameters: { type: 'object', properties: { input: { type: 'string', description: 'The whole patch.' } }, required: ['input'], additionalProperties: false },
  },
} as const;

const toolMessages = [
  { role: 'system', content: 'You are a coding agent. Make file changes only with the apply_patch tool.' },
  { role: 'user', content: 'Create an empty file named probe.txt.' },
] as const;

export interface ProbeRequests {
  toolCall: Record<string, unknown>;
  toolCallStream: Record<string, unknown>;
  reasoningEffort: Record<string, unknown>;
  image: Record<string, unknown>;
}

export function buildProbeRequests(model: string): ProbeRequests {
  const toolCall = { model, messages: toolMessages, tools: [probeTool], tool_choice: 'auto', max_tokens: TOOL_PROBE_MAX_TOKENS, temperature: 0, stream: false };
  return {
    toolCall,
    toolCallStream: { ...toolCall, stream: true },
    // Codex's default effort; one token is enough to learn whether the field is accepted.
    reasoningEffort: { model, messages: [{ role: 'user', content: 'Say OK.' }], reasoning_effort: 'medium', max_tokens: 1, stream: false },
    image: {
      model,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say OK.' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL_PNG}` } }] }],
      max_tokens: 1,
      stream: false,
    },
  };
}
