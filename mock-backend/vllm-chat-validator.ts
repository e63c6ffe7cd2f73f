/**
 * Request validation as the engines perform it on `POST /v1/chat/completions` (vLLM,
 * SGLang, Ollama, llama.cpp, LM Studio). Tests use the
 * vLLM validator directly; the mock backend uses the per-profile one.
 *
 * vLLM validates in three stages and the first failing stage answers: pydantic "before" model
 * validators (they see the raw dict, so a KeyError there is a 500), pydantic field validation (all field
 * errors together, one 400), then checks in the serving code (plain `BadRequestError` 400s).
 */
import {
  PythonTuple,
  findPythonJsonError,
  isPythonTruthy,
  isRecord,
  renderPythonJsonDecodeError,
  renderPythonRepr,
  renderPythonStr,
  renderPythonStringRepr,
} from './python-text.ts';
import {
  getProfileTraits,
  renderErrorEnvelope,
  renderModelNotFound,
  type EngineError,
  type EngineProfile,
} from './profiles.ts';

export interface VllmValidationOptions {
  /** Server started with `--enable-auto-tool-choice --tool-call-parser …` (default true). */
  toolParser?: boolean;
  /** Accepted `reasoning_effort` literals (default: the 2026 set none…max). */
  reasoningEfforts?: readonly string[];
  /** Model served with a Mistral tokenizer: any non-null `chat_template_kwargs` is refused. */
  mistralTokenizer?: boolean;
  /** gpt-oss (harmony): auto tool choice works without a parser; effort limited to low/medium/high. */
  harmony?: boolean;
  /** `required`/named choice need a parser (PR #36166, Mar 2026; default true). */
  requiredChoiceNeedsParser?: boolean;
  /** Server started with `--trust-request-chat-template` (default false). */
  trustRequestChatTemplate?: boolean;
}

export interface ValidationFailure {
  status: number;
  message: string;
}

export const defaultVllmReasoningEfforts: readonly string[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

const validMessageRoles = ['system', 'user', 'assistant', 'tool', 'developer', 'function'] as const;

/** One entry of a pydantic `errors()` list (keys keep pydantic's spelling); `loc` excludes the leading `'body'`. */
interface PydanticError {
  type: string;
  loc: ReadonlyArray<string | number>;
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** FastAPI's handler puts `repr(errors)` into the message, with `loc` starting at `'body'`. */
function renderPydanticErrors(errors: readonly PydanticError[]): string {
  return renderPythonRepr(
    errors.map((error) => ({
      type: error.type,
      loc: new PythonTuple(['body', ...error.loc]),
      msg: error.msg,
      input: error.input,
      ...(error.ctx === undefined ? {} : { ctx: error.ctx }),
    })),
  );
}

/** pydantic joins literal choices as `'a', 'b' or 'c'`. */
function renderLiteralExpectation(values: readonly string[]): string {
  const quoted = values.map((value) => renderPythonStringRepr(value));
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}

function createLiteralError(loc: ReadonlyArray<string | number>, input: unknown, values: readonly string[]): PydanticError {
  const expected = renderLiteralExpectation(values);
  return { type: 'literal_error', loc, msg: `Input should be ${expected}`, input, ctx: { expected } };
}

function createMissingError(loc: ReadonlyArray<string | number>, input: unknown): PydanticError {
  return { type: 'missing', loc, msg: 'Field required', input };
}

function createModelTypeError(loc: ReadonlyArray<string | number>, input: unknown, className: string): PydanticError {
  return {
    type: 'model_type',
    loc,
    msg: `Input should be a valid dictionary or instance of ${className}`,
    input,
    ctx: { class_name: className },
  };
}

function createListTypeError(loc: ReadonlyArray<string | number>, input: unknown): PydanticError {
  return { type: 'list_type', loc, msg: 'Input should be a valid list', input };
}

function createBadRequest(errors: readonly PydanticError[], param: string | null = null): EngineError {
  return { status: 400, message: renderPydanticErrors(errors), type: 'Bad Request', param };
}

/** A `ValueError` raised in a "before" validator: one `value_error` whose input is the whole request dict. */
function createValueError(text: string, data: Record<string, unknown>, options: { param?: string; errorClass?: string } = {}): EngineError {
  const error: PydanticError = {
    type: 'value_error',
    loc: [],
    msg: `Value error, ${text}`,
    input: data,
    // The exception repr is abbreviated the way backend-examples/vllm-error-stream-options.json shows it.
    ctx: { error: `${options.errorClass ?? 'ValueError'}(...)` },
  };
  return createBadRequest([error], options.param ?? null);
}

function createInternalError(message: string): EngineError {
  return { status: 500, message, type: 'InternalServerError', param: null };
}

function isNamedToolChoice(toolChoice: unknown): toolChoice is Record<string, unknown> {
  return isRecord(toolChoice);
}

/** vLLM's `check_tool_usage` before-validator, replayed on the raw dict (it mutates `tool_choice`). */
function checkVllmToolUsage(data: Record<string, unknown>): EngineError | null {
  if (Array.isArray(data.tools) && data.tools.length === 0) {
    return createValueError(
      '`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.',
      data,
    );
  }
  if (!('tool_choice' in data) && isPythonTruthy(data.tools)) data.tool_choice = 'auto';
  const toolChoice = data.tool_choice;
  if (toolChoice === 'none' || toolChoice === null || toolChoice === undefined) return null;
  if (data.tools === null || data.tools === undefined) {
    return createValueError('When using `tool_choice`, `tools` must be set.', data);
  }
  if (toolChoice !== 'auto' && toolChoice !== 'required' && !isNamedToolChoice(toolChoice)) {
    return createValueError(
      `Invalid value for \`tool_choice\`: ${renderPythonStr(toolChoice)}! Only named tools, "none", "auto" or "required" are supported.`,
      data,
    );
  }
  if (!isNamedToolChoice(toolChoice)) return null;
  const correctUsage = 'Correct usage: `{"type": "function", "function": {"name": "my_function"}}`';
  const choiceFunction = toolChoice.function;
  if (!isRecord(choiceFunction)) {
    // Responses-style {"type":"allowed_tools"} and {"type":"custom"} land here.
    return createValueError(
      `Invalid value for \`function\`: \`${renderPythonStr(choiceFunction ?? null)}\` in \`tool_choice\`! ${correctUsage}`,
      data,
    );
  }
  if (!('name' in choiceFunction)) {
    return createValueError(`Expected field \`name\` in \`function\` in \`tool_choice\`! ${correctUsage}`, data);
  }
  const name = choiceFunction.name;
  if (typeof name !== 'string' || name.length === 0) {
    return createValueError(`Invalid \`name\` in \`function\`: \`${renderPythonStr(name)}\` in \`tool_choice\`! ${correctUsage}`, data);
  }
  const tools = Array.isArray(data.tools) ? data.tools : [];
  for (const tool of tools) {
    // `tool["function"]["name"]` on the raw dict: a KeyError is not a ValueError, so it escapes
    // pydantic and FastAPI answers 500 with the bare repr (vllm-error-named-choice-with-custom-tool.json).
    if (!isRecord(tool)) {
      return createInternalError(typeof tool === 'string' ? "string indices must be integers, not 'str'" : "'NoneType' object is not subscriptable");
    }
    if (!('function' in tool)) return createInternalError("'function'");
    const toolFunction = tool.function;
    if (!isRecord(toolFunction)) return createInternalError("'NoneType' object is not subscriptable");
    if (!('name' in toolFunction)) return createInternalError("'name'");
    if (toolFunction.name === name) return null;
  }
  return createValueError('The tool specified in `tool_choice` does not match any of the specified `tools`', data);
}

/** vLLM's `validate_stream_options` before-validator. */
function checkVllmStreamOptions(data: Record<string, unknown>): EngineError | null {
  if (isPythonTruthy(data.stream_options) && !isPythonTruthy(data.stream)) {
    return createValueError(
      'Stream options can only be defined when `stream=True`. (parameter=stream_options)',
      data,
      { param: 'stream_options', errorClass: 'VLLMValidationError' },
    );
  }
  return null;
}

function collectMessageFieldErrors(data: Record<string, unknown>): PydanticError[] {
  if (!('messages' in data)) return [createMissingError(['messages'], data)];
  const messages = data.messages;
  if (!Array.isArray(messages)) return [createListTypeError(['messages'], messages)];
  const errors: PydanticError[] = [];
  messages.forEach((message, index) => {
    if (!isRecord(message)) {
      errors.push(createModelTypeError(['messages', index], message, 'ChatCompletionMessageParam'));
      return;
    }
    if (!('role' in message)) {
      errors.push(createMissingError(['messages', index, 'role'], message));
      return;
    }
    if (!(validMessageRoles as readonly unknown[]).includes(message.role)) {
      errors.push(createLiteralError(['messages', index, 'role'], message.role, validMessageRoles));
    }
  });
  return errors;
}

function collectToolFieldErrors(tools: unknown): PydanticError[] {
  if (tools === null || tools === undefined) return [];
  if (!Array.isArray(tools)) return [createListTypeError(['tools'], tools)];
  const errors: PydanticError[] = [];
  tools.forEach((tool, index) => {
    if (!isRecord(tool)) {
      errors.push(createModelTypeError(['tools', index], tool, 'ChatCompletionToolsParam'));
      return;
    }
    // `type: Literal["function"] = "function"` and a required `function` object: a custom tool fails
    // both (vllm-error-custom-tool.json).
    if ('type' in tool && tool.type !== 'function') errors.push(createLiteralError(['tools', index, 'type'], tool.type, ['function']));
    if (!('function' in tool)) {
      errors.push(createMissingError(['tools', index, 'function'], tool));
      return;
    }
    const toolFunction = tool.function;
    if (!isRecord(toolFunction)) {
      errors.push(createModelTypeError(['tools', index, 'function'], toolFunction, 'FunctionDefinition'));
      return;
    }
    if (!('name' in toolFunction)) errors.push(createMissingError(['tools', index, 'function', 'name'], toolFunction));
    else if (typeof toolFunction.name !== 'string') {
      errors.push({ type: 'string_type', loc: ['tools', index, 'function', 'name'], msg: 'Input should be a valid string', input: toolFunction.name });
    }
  });
  return errors;
}

function collectVllmFieldErrors(data: Record<string, unknown>, reasoningEfforts: readonly string[]): PydanticError[] {
  const errors = [...collectMessageFieldErrors(data), ...collectToolFieldErrors(data.tools)];
  const toolChoice = data.tool_choice;
  // The before-validator only looked at `function`; the named-choice model still pins `type` to "function".
  if (isNamedToolChoice(toolChoice) && 'type' in toolChoice && toolChoice.type !== 'function') {
    errors.push(createLiteralError(['tool_choice', 'ChatCompletionNamedToolChoiceParam', 'type'], toolChoice.type, ['function']));
  }
  const effort = data.reasoning_effort;
  if (effort !== null && effort !== undefined && !reasoningEfforts.includes(effort as string)) {
    errors.push(createLiteralError(['reasoning_effort'], effort, reasoningEfforts));
  }
  return errors;
}

/** History replay: vLLM `json.loads` every assistant tool-call `arguments` before templating. */
function checkVllmHistory(messages: readonly unknown[]): EngineError | null {
  for (const message of messages) {
    if (!isRecord(message) || message.role !== 'assistant' || !Array.isArray(message.tool_calls)) continue;
    for (const toolCall of message.tool_calls) {
      if (!isRecord(toolCall)) continue;
      if ('type' in toolCall && toolCall.type !== 'function') {
        return { status: 400, message: "chat completions only support assistant tool_calls of type 'function'." };
      }
      const toolFunction = toolCall.function;
      if (!isRecord(toolFunction) || typeof toolFunction.arguments !== 'string' || toolFunction.arguments === '') continue;
      const decodeError = findPythonJsonError(toolFunction.arguments);
      if (decodeError !== null) {
        // Old vLLM echoes the raw JSONDecodeError text; Codex resends history, so it fails every turn.
        return { status: 400, message: renderPythonJsonDecodeError(toolFunction.arguments, decodeError) };
      }
    }
  }
  return null;
}

interface VllmRejectionSettings extends VllmValidationOptions {
  /** Called between field validation and the serving checks, where vLLM looks the model up. */
  checkModel?: (model: unknown) => EngineError | null;
}

function findVllmRejection(body: unknown, settings: VllmRejectionSettings): EngineError | null {
  if (!isRecord(body)) {
    return createBadRequest([
      { type: 'model_attributes_type', loc: [], msg: 'Input should be a valid dictionary or object to extract fields from', input: body },
    ]);
  }
  // Before-validators run on a copy that they may mutate (tool_choice defaults to "auto").
  const data: Record<string, unknown> = { ...body };
  const beforeError = checkVllmToolUsage(data) ?? checkVllmStreamOptions(data);
  if (beforeError !== null) return beforeError;

  const fieldErrors = collectVllmFieldErrors(data, settings.reasoningEfforts ?? defaultVllmReasoningEfforts);
  if (fieldErrors.length > 0) return createBadRequest(fieldErrors);

  const modelError = settings.checkModel?.(data.model) ?? null;
  if (modelError !== null) return modelError;

  if (data.chat_template !== null && data.chat_template !== undefined && settings.trustRequestChatTemplate !== true) {
    return {
      status: 400,
      message:
        'Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.',
    };
  }
  const hasParser = settings.toolParser !== false;
  const parserOptional = settings.harmony === true || settings.mistralTokenizer === true;
  if (data.tool_choice === 'auto' && !hasParser && !parserOptional) {
    return { status: 400, message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set' };
  }
  const forcedChoice = data.tool_choice === 'required' || isNamedToolChoice(data.tool_choice);
  if (forcedChoice && !hasParser && !parserOptional && settings.requiredChoiceNeedsParser !== false) {
    return { status: 400, message: 'tool_choice="required" requires --tool-call-parser to be set' };
  }
  const effort = data.reasoning_effort;
  if (settings.harmony === true && typeof effort === 'string') {
    if (effort === 'none') return { status: 400, message: "Harmony does not support reasoning_effort='none'" };
    if (!['low', 'medium', 'high'].includes(effort)) {
      return {
        status: 400,
        message: `reasoning_effort=${renderPythonStringRepr(effort)} is not supported by Harmony. Supported values are: high, medium, low.`,
      };
    }
  }
  if (settings.mistralTokenizer === true && data.chat_template_kwargs !== null && data.chat_template_kwargs !== undefined) {
    return { status: 400, message: 'chat_template is not supported for Mistral tokenizers.' };
  }
  return checkVllmHistory(data.messages as unknown[]);
}

/**
 * vLLM's answer to a chat request body, or null when vLLM would accept it. Unknown fields are
 * accepted (vLLM only logs them).
 */
export function validateChatRequestForVllm(body: unknown, options: VllmValidationOptions = {}): ValidationFailure | null {
  const rejection = findVllmRejection(body, options);
  return rejection === null ? null : { status: rejection.status, message: rejection.message };
}

export interface ProfileValidationOptions {
  /** vLLM: server has a tool parser (default true). */
  toolParser?: boolean;
  /** Served model names; when absent every name is accepted. */
  models?: readonly string[];
  /** vLLM: Mistral tokenizer. */
  mistralTokenizer?: boolean;
  /** Ollama: the model has the tools capability (default true). */
  supportsTools?: boolean;
  /** Ollama: the model has the thinking capability (default true). */
  supportsThinking?: boolean;
}

/** A rejection with the exact body (as a JSON value) the profile's engine sends. */
export interface ProfileRejection extends ValidationFailure {
  body: unknown;
}

function toProfileRejection(profile: EngineProfile, error: EngineError | null): ProfileRejection | null {
  if (error === null) return null;
  return { status: error.status, message: error.message, body: renderErrorEnvelope(profile, error) };
}

function isKnownModel(models: readonly string[] | undefined, model: unknown): boolean {
  if (models === undefined || models.length === 0) return true;
  return typeof model === 'string' && models.includes(model);
}

/** The profile's verdict on a chat request, with its error body; null when accepted. */
export function validateChatRequestForProfile(
  profile: EngineProfile,
  body: unknown,
  options: ProfileValidationOptions = {},
): ProfileRejection | null {
  const traits = getProfileTraits(profile);
  switch (traits.family) {
    case 'vllm':
      return toProfileRejection(
        profile,
        findVllmRejection(body, {
          toolParser: options.toolParser,
          reasoningEfforts: traits.reasoningEfforts ?? defaultVllmReasoningEfforts,
          harmony: traits.vllmToolParser === 'openai',
          mistralTokenizer: options.mistralTokenizer,
          requiredChoiceNeedsParser: traits.vllmBuild === '2026',
          checkModel: (model) => {
            // An omitted or empty model selects the default served model.
            if (model === undefined || model === null || model === '' || isKnownModel(options.models, model)) return null;
            return {
              status: 404,
              message: `The model \`${renderPythonStr(model)}\` does not exist.`,
              type: 'NotFoundError',
              param: 'model',
            };
          },
        }),
      );
    case 'sglang':
      return toProfileRejection(profile, findSglangRejection(body, traits.reasoningEfforts ?? []));
    case 'ollama':
      return findOllamaRejection(profile, body, options);
    case 'llamacpp':
      return toProfileRejection(profile, findLlamacppRejection(body));
    case 'lmstudio':
      return findLmstudioRejection(profile, body, options);
    default: {
      const unreachable: never = traits.family;
      throw new Error(`unknown engine family ${String(unreachable)}`);
    }
  }
}

/** SGLang: plain pydantic (`function` required, any `type` string), then serving checks. */
function findSglangRejection(body: unknown, reasoningEfforts: readonly string[]): EngineError | null {
  if (!isRecord(body)) {
    return createBadRequest([
      { type: 'model_attributes_type', loc: [], msg: 'Input should be a valid dictionary or object to extract fields from', input: body },
    ]);
  }
  const errors: PydanticError[] = [...collectMessageFieldErrors(body)];
  if (Array.isArray(body.tools)) {
    body.tools.forEach((tool, index) => {
      if (!isRecord(tool)) errors.push(createModelTypeError(['tools', index], tool, 'Tool'));
      else if (!('function' in tool)) errors.push(createMissingError(['tools', index, 'function'], tool));
      else if (!isRecord(tool.function)) errors.push(createModelTypeError(['tools', index, 'function'], tool.function, 'Function'));
      else if (!('name' in tool.function)) errors.push(createMissingError(['tools', index, 'function', 'name'], tool.function));
    });
  } else if (body.tools !== undefined && body.tools !== null) {
    errors.push(createListTypeError(['tools'], body.tools));
  }
  const toolChoice = body.tool_choice;
  if (typeof toolChoice === 'string' && !['auto', 'required', 'none'].includes(toolChoice)) {
    errors.push(createLiteralError(['tool_choice', "literal['auto','required','none']"], toolChoice, ['auto', 'required', 'none']));
  } else if (isRecord(toolChoice) && !isRecord(toolChoice.function)) {
    errors.push(createMissingError(['tool_choice', 'ToolChoice', 'function'], toolChoice));
  }
  const effort = body.reasoning_effort;
  const effortIsFraction = typeof effort === 'number' && effort >= 0 && effort <= 0.99;
  if (effort !== undefined && effort !== null && !effortIsFraction && !reasoningEfforts.includes(effort as string)) {
    errors.push(createLiteralError(['reasoning_effort'], effort, reasoningEfforts));
  }
  if (errors.length > 0) return createBadRequest(errors);

  const tools = Array.isArray(body.tools) ? body.tools.filter(isRecord) : [];
  if (toolChoice === 'required' && tools.length === 0) {
    return { status: 400, message: 'Tools cannot be empty if tool choice is set to required.', type: 'BadRequestError' };
  }
  if (isRecord(toolChoice) && isRecord(toolChoice.function)) {
    const name = toolChoice.function.name;
    const known = tools.some((tool) => isRecord(tool.function) && tool.function.name === name);
    if (!known) return { status: 400, message: `Tool '${renderPythonStr(name)}' not found in tools list.`, type: 'BadRequestError' };
  }
  return null;
}

const ollamaEfforts = ['minimal', 'low', 'medium', 'high', 'xhigh', 'ultra', 'max', 'none'];

/** Ollama `/v1`: converts first (arguments, effort), then looks up the model and its capabilities. */
function findOllamaRejection(profile: EngineProfile, body: unknown, options: ProfileValidationOptions): ProfileRejection | null {
  const reject = (status: number, message: string): ProfileRejection =>
    ({ status, message, body: renderErrorEnvelope(profile, { status, message }) });
  if (!isRecord(body)) return reject(400, 'json: cannot unmarshal value into Go value of type openai.ChatCompletionRequest');
  const messages = Array.isArray(body.messages) ? body.messages : [];
  if (messages.length === 0) return reject(400, "[] is too short - 'messages'");
  for (const message of messages) {
    if (!isRecord(message) || !Array.isArray(message.tool_calls)) continue;
    for (const toolCall of message.tool_calls) {
      const toolFunction = isRecord(toolCall) ? toolCall.function : undefined;
      const argumentsText = isRecord(toolFunction) ? toolFunction.arguments : undefined;
      if (typeof argumentsText !== 'string' || !isJsonObjectText(argumentsText)) return reject(400, 'invalid tool call arguments');
    }
  }
  const reasoning = isRecord(body.reasoning) ? body.reasoning.effort : undefined;
  const effort = body.reasoning_effort ?? reasoning;
  if (effort !== undefined && effort !== null && !ollamaEfforts.includes(effort as string)) {
    return reject(
      400,
      `invalid reasoning value: ${JSON.stringify(renderPythonStr(effort))} (must be "minimal", "low", "medium", "high", "xhigh", "ultra", "max", or "none")`,
    );
  }
  const model = typeof body.model === 'string' ? body.model : '';
  const knownNames = options.models?.flatMap((name) => (name.includes(':') ? [name] : [name, `${name}:latest`]));
  if (!isKnownModel(knownNames, model) && !isKnownModel(knownNames, `${model}:latest`)) {
    const failure = renderModelNotFound(profile, model);
    return { status: failure.status, message: readEnvelopeMessage(failure.body), body: failure.body };
  }
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  if (hasTools && options.supportsTools === false) {
    const registryName = `registry.ollama.ai/library/${model.includes(':') ? model : `${model}:latest`}`;
    return reject(400, `${registryName} does not support tools`);
  }
  if (typeof effort === 'string' && effort !== 'none' && options.supportsThinking === false) {
    return reject(400, `"${model}" does not support thinking`);
  }
  // Custom tools pass: Ollama does not type-check tools and renders a nameless function.
  return null;
}

/** The message inside any of the envelopes `renderErrorEnvelope` builds. */
function readEnvelopeMessage(body: unknown): string {
  if (!isRecord(body)) return '';
  if (typeof body.error === 'string') return body.error;
  if (isRecord(body.error) && typeof body.error.message === 'string') return body.error.message;
  return typeof body.message === 'string' ? body.message : '';
}

function isJsonObjectText(text: string): boolean {
  try {
    return isRecord(JSON.parse(text));
  } catch {
    return false;
  }
}

function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

/** llama-server: nlohmann parsing, `runtime_error` → 500 `server_error`, `invalid_argument` → 400. */
function findLlamacppRejection(body: unknown): EngineError | null {
  if (!isRecord(body)) return { status: 400, message: 'request body must be a JSON object', type: 'invalid_request_error' };
  if (!Array.isArray(body.messages)) return { status: 400, message: "'messages' is required", type: 'invalid_request_error' };
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      const problem = !isRecord(tool) || tool.type !== 'function' ? 'Unsupported tool type' : !isRecord(tool.function) ? 'Missing tool function' : null;
      if (problem !== null) {
        return {
          status: 500,
          message: `Failed to parse tools: ${problem}: ${JSON.stringify(tool)}; tools = ${JSON.stringify(body.tools, null, 2)}`,
          type: 'server_error',
        };
      }
    }
  }
  // An object (named) tool_choice silently becomes "auto"; only strings are checked.
  if (typeof body.tool_choice === 'string' && !['auto', 'none', 'required'].includes(body.tool_choice)) {
    return { status: 400, message: `Invalid tool_choice: ${body.tool_choice}`, type: 'invalid_request_error' };
  }
  const kwargs = body.chat_template_kwargs;
  if (isRecord(kwargs) && 'enable_thinking' in kwargs && typeof kwargs.enable_thinking !== 'boolean') {
    return {
      status: 400,
      message: `invalid type for "enable_thinking" (expected boolean, got ${describeJsonType(kwargs.enable_thinking)})`,
      type: 'invalid_request_error',
    };
  }
  for (const message of body.messages) {
    if (!isRecord(message) || !Array.isArray(message.tool_calls)) continue;
    for (const toolCall of message.tool_calls) {
      if (!isRecord(toolCall) || toolCall.type !== 'function') {
        // [inf] wording: the message parser rethrows as "Failed to parse messages: …".
        return { status: 500, message: `Failed to parse messages: Unsupported tool call type: ${JSON.stringify(toolCall)}`, type: 'server_error' };
      }
    }
  }
  return null;
}

/** LM Studio validates with zod and answers `{"error":"<pretty-printed issues>"}` (custom-tool text [inf]). */
function findLmstudioRejection(profile: EngineProfile, body: unknown, options: ProfileValidationOptions): ProfileRejection | null {
  const issues: Array<Record<string, unknown>> = [];
  if (!isRecord(body)) {
    issues.push({ code: 'invalid_type', expected: 'object', received: describeJsonType(body), path: [], message: 'Expected object' });
  } else if (Array.isArray(body.tools)) {
    body.tools.forEach((tool, index) => {
      if (!isRecord(tool)) return;
      if (tool.type !== 'function') {
        issues.push({
          received: tool.type,
          code: 'invalid_literal',
          expected: 'function',
          path: [index, 'type'],
          message: 'Invalid literal value, expected "function"',
        });
        return;
      }
      const parameters = isRecord(tool.function) ? tool.function.parameters : undefined;
      if (parameters !== undefined && (!isRecord(parameters) || parameters.type !== 'object')) {
        issues.push({
          code: 'invalid_union_discriminator',
          options: ['object'],
          path: [index, 'function', 'parameters', 'type'],
          message: "Invalid discriminator value. Expected 'object'",
        });
      }
    });
  }
  if (issues.length > 0) {
    const message = JSON.stringify(issues, null, 2);
    return { status: 400, message, body: renderErrorEnvelope(profile, { status: 400, message }) };
  }
  const model = isRecord(body) ? body.model : undefined;
  if (!isKnownModel(options.models, model)) {
    const failure = renderModelNotFound(profile, renderPythonStr(model ?? ''));
    return { status: failure.status, message: readEnvelopeMessage(failure.body), body: failure.body };
  }
  return null;
}

export interface TransportCheck {
  /** The parsed body (undefined when the text is not JSON). */
  body: unknown;
  rejection: ProfileRejection | null;
}

/**
 * What the engine says before looking at the fields: the content type (vLLM, SGLang and LM Studio
 * insist on JSON; Go and cpp-httplib servers parse whatever arrives) and the JSON syntax.
 */
export function checkChatTransportForProfile(profile: EngineProfile, contentType: string | undefined, rawBody: string): TransportCheck {
  const family = getProfileTraits(profile).family;
  const reject = (error: EngineError): ProfileRejection => ({ status: error.status, message: error.message, body: renderErrorEnvelope(profile, error) });
  const mediaType = (contentType ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/json') {
    if (family === 'vllm') {
      return { body: undefined, rejection: reject({ status: 400, message: "Unsupported Media Type: Only 'application/json' is allowed", type: 'Bad Request' }) };
    }
    if (family === 'sglang') {
      const error = { type: 'model_attributes_type', loc: [], msg: 'Input should be a valid dictionary or object to extract fields from', input: rawBody };
      return { body: undefined, rejection: reject(createBadRequest([error])) };
    }
    if (family === 'lmstudio') return { body: undefined, rejection: reject({ status: 400, message: "'messages' field is required" }) };
  }
  const decodeError = findPythonJsonError(rawBody);
  if (decodeError === null) {
    try {
      return { body: JSON.parse(rawBody) as unknown, rejection: null };
    } catch {
      // Python accepts NaN/Infinity, JSON.parse does not; fall through to the engine's error.
    }
  }
  const position = decodeError?.position ?? 0;
  switch (family) {
    case 'vllm':
    case 'sglang': {
      const error = {
        type: 'json_invalid',
        loc: [position],
        msg: 'JSON decode error',
        input: {},
        ctx: { error: decodeError?.message ?? 'Expecting value' },
      };
      return { body: undefined, rejection: reject(createBadRequest([error])) };
    }
    case 'ollama': {
      const character = Array.from(rawBody)[position];
      const message = character === undefined ? 'unexpected EOF' : `invalid character ${renderPythonStringRepr(character)} looking for beginning of value`;
      return { body: undefined, rejection: reject({ status: 400, message }) };
    }
    case 'llamacpp': {
      // nlohmann's parse error escapes the handler as a 500; its tail names what it met (here: the end).
      const atEnd = position >= Array.from(rawBody).length;
      const tail = atEnd ? " - unexpected end of input; expected '[', '{', or a literal" : '';
      return {
        body: undefined,
        rejection: reject({
          status: 500,
          message: `[json.exception.parse_error.101] parse error at line 1, column ${position + 1}: syntax error while parsing value${tail}`,
          type: 'server_error',
        }),
      };
    }
    case 'lmstudio':
      return { body: undefined, rejection: reject({ status: 400, message: `Unexpected token in JSON at position ${position}` }) };
    default: {
      const unreachable: never = family;
      throw new Error(`unknown engine family ${String(unreachable)}`);
    }
  }
}
