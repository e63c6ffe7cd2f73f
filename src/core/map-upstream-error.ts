/**
 * Engine wordings for "the prompt does not fit the context window". Codex handles
 * `context_length_exceeded` specially (no retry, a dedicated message), so recognising every engine's
 * text is what turns a backend overflow into something the user can act on. Case-insensitive because
 * the wordings have changed casing between releases before; the phrases are specific enough.
 */
const CONTEXT_OVERFLOW_PATTERNS: readonly RegExp[] = [
  // vLLM: every wording since v0.10 contains one of these.
  /maximum context length|context length is only/i,
  // SGLang: input-only and input+completion variants.
  /longer than the model's context length|exceeds the model's maximum context length/i,
  // llama.cpp: current builds and the 2025 `error:` SSE field.
  /exceeds the available context size/i,
];

/** llama.cpp names the condition in `type`; its message wording has varied between builds. */
const CONTEXT_OVERFLOW_TYPES: ReadonlySet<string> = new Set(['exceed_context_size_error']);

export function isContextOverflowMessage(text: string, type?: string | null): boolean {
  if (type !== undefined && type !== null && CONTEXT_OVERFLOW_TYPES.has(type)) return true;
  return CONTEXT_OVERFLOW_PATTERNS.some((pattern) => pattern.test(text));
}
