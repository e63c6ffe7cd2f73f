import type { EngineKind } from './engine-identity.ts';

/**
 * What to change on each engine, as a command or setting the user can copy. Flags as each engine's
 * docs spell them: vLLM `--enable-auto-tool-choice`, `--tool-call-parser`, `--max-model-len`
 * (docs.vllm.ai, "Tool Calling", "Engine Arguments"); SGLang `--tool-call-parser`, `--context-length`
 * (docs.sglang.ai, "Tool Parser", "Server Arguments"); llama-server `--jinja`, `--chat-template-file`,
 * `-c` (ggml-org/llama.cpp tools/server/README.md); Ollama `OLLAMA_CONTEXT_LENGTH` and the Modelfile's
 * `PARAMETER num_ctx` (docs.ollama.com/context-length); LM Studio `lms load --context-length`
 * (lmstudio.ai/docs/cli).
 */

/** The context the advice asks for: room for Codex's ~5,300-token first request and a working session. */
export const RECOMMENDED_CONTEXT_WINDOW = 32_768;

/** vLLM parser names by model family (`--tool-call-parser`), most specific first. */
const VLLM_PARSERS: ReadonlyArray<{ pattern: RegExp; parser: string }> = [
  { pattern: /qwen3[-_.]?coder/i, parser: 'qwen3_coder' },
  { pattern: /gpt-oss/i, parser: 'openai' },
  { pattern: /qwen/i, parser: 'hermes' },
  { pattern: /hermes/i, parser: 'hermes' },
  { pattern: /llama-?3/i, parser: 'llama3_json' },
  { pattern: /mistral|devstral|codestral|magistral/i, parser: 'mistral' },
  { pattern: /deepseek-?v3/i, parser: 'deepseek_v3' },
  { pattern: /glm-?4/i, parser: 'glm45' },
  { pattern: /kimi/i, parser: 'kimi_k2' },
];

/** SGLang's names for the same families. */
const SGLANG_PARSERS: ReadonlyArray<{ pattern: RegExp; parser: string }> = [
  { pattern: /qwen3[-_.]?coder/i, parser: 'qwen3_coder' },
  { pattern: /gpt-oss/i, parser: 'gpt-oss' },
  { pattern: /qwen/i, parser: 'qwen25' },
  { pattern: /llama-?3/i, parser: 'llama3' },
  { pattern: /mistral|devstral|codestral|magistral/i, parser: 'mistral' },
  { pattern: /deepseek-?v3/i, parser: 'deepseekv3' },
  { pattern: /glm-?4/i, parser: 'glm45' },
  { pattern: /kimi/i, parser: 'kimi_k2' },
];

function pickParser(table: typeof VLLM_PARSERS, model: string): string {
  return table.find((entry) => entry.pattern.test(model))?.parser ?? '<the parser for your model family>';
}

/** Quotes a model id for a shell line only when it needs it. */
export function quoteForShell(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/**
 * How to make the engine hand tool calls back as `tool_calls`. `templateOverride`: the name llama-server
 * was given with `--chat-template`, which replaces the template the model file carries.
 */
export function adviseToolCalling(engine: EngineKind | null, model: string, engineMessage: string | null, templateOverride: string | null = null): string {
  const id = quoteForShell(model);
  switch (engine) {
    case 'vllm':
      return `restart vLLM with automatic tool choice and the parser of the model's call format: vllm serve ${id} --enable-auto-tool-choice --tool-call-parser ${pickParser(VLLM_PARSERS, model)}`;
    case 'sglang':
      return `restart SGLang with the parser of the model's call format: python -m sglang.launch_server --model-path ${id} --tool-call-parser ${pickParser(SGLANG_PARSERS, model)}`;
    case 'llamacpp':
      if (engineMessage !== null && /--jinja/.test(engineMessage)) return 'restart llama-server with --jinja (tools need the Jinja chat template; --no-jinja turns them off)';
      // The model's own template is the one trained with its call format; a template file would be a guess.
      if (templateOverride !== null) return `restart llama-server without --chat-template ${templateOverride} (keep --jinja), so it uses the chat template the model file carries, which renders the model's tool calls`;
      return "restart llama-server with --jinja and a chat template that renders tools: --chat-template-file <the model's own template with tool support, e.g. from its tokenizer_config.json>, or a GGUF whose embedded template has one";
    case 'ollama':
      return `use a model whose capabilities list "tools" (check with: ollama show ${id}), e.g. ollama pull qwen3-coder:30b`;
    case 'lmstudio':
      return 'load a model trained for tool use (LM Studio marks it with a hammer icon) and keep its default prompt template';
    case null:
      return "start the engine with tool calling on for this model (its tool-call parser or a chat template that renders tools)";
  }
}

/** How to give the model a bigger context. */
export function adviseContextWindow(engine: EngineKind | null, model: string): string {
  const id = quoteForShell(model);
  const size = RECOMMENDED_CONTEXT_WINDOW;
  switch (engine) {
    case 'vllm':
      return `restart vLLM with a longer context: vllm serve ${id} --max-model-len ${size}`;
    case 'sglang':
      return `restart SGLang with a longer context: python -m sglang.launch_server --model-path ${id} --context-length ${size}`;
    case 'llamacpp':
      return `restart llama-server with a longer context: llama-server -m <model.gguf> --jinja -c ${size}`;
    case 'ollama':
      return `run Ollama with a longer context: OLLAMA_CONTEXT_LENGTH=${size} ollama serve (or for this model only: a Modelfile with FROM ${model} and PARAMETER num_ctx ${size}, then ollama create)`;
    case 'lmstudio':
      return `load the model with a longer context: lms load ${id} --context-length ${size}`;
    case null:
      return `start the engine with a context of at least ${size} tokens`;
  }
}

/** Where the bridge is told which model id to send. */
export function adviseModelId(model: string): string {
  return `send the id the engine lists: freeform-bridge serve --model ${quoteForShell(model)} (VS Code: setting freeformBridge.model), and freeform-bridge codex-config --model ${quoteForShell(model)}`;
}
