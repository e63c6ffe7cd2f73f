import type { BridgeOptions } from '../bridge-options.ts';
import type { ChatContentPart, ChatMessage, ChatToolCall } from '../chat/chat-completions-api.ts';
import { InvalidRequestError, UnsupportedFeatureError } from '../errors.ts';
import { isEmptyPassthroughText, joinPassthroughText, outgoingText, passthroughText, type PassthroughText } from '../outbound/passthrough-text.ts';
import { isPlainObject, parseJson } from '../parse-json.ts';
import {
  COMPACTION_RECORD_ITEM_TYPES,
  HOSTED_CALL_ITEM_TYPES,
  type ResponsesContentPart,
  type ResponsesInputItem,
  type ResponsesMessageItem,
  type ResponsesMessagePart,
  type ResponsesToolOutput,
} from '../responses/responses-request.ts';
import { toWireName } from '../tool-map.ts';
import { createWarning, type BridgeWarning } from '../warnings.ts';
import type { IndexedInputItem } from './hoist-additional-tools.ts';

export interface ConvertInputItemsResult {
  value: ChatMessage[];
  warnings: BridgeWarning[];
}

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;
type MessageContent = ResponsesMessageItem['content'];

// ---------- replay rule ----------

export interface ReplayedArguments {
  arguments: string;
  /** True when the text was not a JSON object and had to be wrapped. */
  rewrapped: boolean;
}

/**
 * vLLM `json.loads` every replayed `arguments` string before templating: older releases answer
 * invalid JSON with a 400 on every later turn, newer ones silently blank it. So a
 * JSON object passes byte for byte, anything else is wrapped so the model still sees what it wrote.
 */
export function normaliseReplayedArguments(text: string | null | undefined): ReplayedArguments {
  if (text === null || text === undefined || text.trim() === '') return { arguments: '{}', rewrapped: false };
  const parsed = parseJson(text);
  if (parsed.success && isPlainObject(parsed.value)) return { arguments: text, rewrapped: false };
  return { arguments: `{"_raw_arguments": ${JSON.stringify(text)}}`, rewrapped: true };
}

/**
 * A replayed custom call as the bridged function's arguments, serialised the way Python engines do
 * (`": "` separator, raw UTF-8), so `JSON.parse(arguments).input === input` byte for byte.
 */
export function serialiseCustomToolInput(input: string): string {
  return `{"input": ${JSON.stringify(input)}}`;
}

// ---------- text helpers ----------

/**
 * Structured tool outputs are written to be concatenated (`"…Output:\n"` + `"a.py\n"`), so a
 * newline is inserted only where a part does not already end with one. Empty parts add nothing.
 */
export function joinToolOutputText(segments: readonly string[]): string {
  let text = '';
  let previous: string | null = null;
  for (const segment of segments) {
    if (segment === '') continue;
    if (previous !== null && !previous.endsWith('\n')) text += '\n';
    text += segment;
    previous = segment;
  }
  return text;
}

/** A content part of a message (its text passes through) or of a tool output or agent message (its text is read). */
type AnyContentPart = ResponsesContentPart | ResponsesMessagePart;
type TextPartType = 'input_text' | 'output_text' | 'text';

function isTextPart<Part extends AnyContentPart>(part: Part): part is Extract<Part, { type: TextPartType }> {
  return part.type === 'input_text' || part.type === 'output_text' || part.type === 'text';
}

function readUrl(value: string | { url?: string | null | undefined } | null | undefined): string {
  if (typeof value === 'string') return value;
  return value?.url ?? '';
}

function describePartType(part: AnyContentPart): string {
  return part.type === 'unknown' ? part.originalType : part.type;
}

type EncryptedContentPart = Extract<ResponsesContentPart, { type: 'encrypted_content' }>;

/** Fernet tokens (what OpenAI seals `encrypted_content` with) start with version byte 0x80: `gAAAAA` in base64url. */
const FERNET_TOKEN = /^gAAAAA[A-Za-z0-9_=-]+$/;
/** A long run of base64 alphabet with no space or line break is a blob, not a sentence a model wrote. */
const LONG_BASE64_RUN = /^[A-Za-z0-9+/_=-]{80,}$/;
/** C0 controls other than TAB, LF and CR (and DEL) never occur in text Codex writes. */
function hasBinaryControl(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || code === 0x7f) return true;
  }
  return false;
}

/**
 * The text of an `encrypted_content` part when it is plain text, else null. Toward a custom
 * provider Codex puts the plain task or answer there; a sealed OpenAI payload only OpenAI can open,
 * and passing it on would feed the model a meaningless blob.
 */
export function readPlainEncryptedContent(part: EncryptedContentPart): string | null {
  const text = part.encrypted_content;
  if (typeof text !== 'string') return null;
  if (FERNET_TOKEN.test(text) || LONG_BASE64_RUN.test(text) || hasBinaryControl(text)) return null;
  return text;
}

function createPlaceholder(part: AnyContentPart): string {
  if (part.type === 'encrypted_content') return '[encrypted content omitted: it is not plain text, and only the service that sealed it can read it]';
  if (part.type === 'input_file') {
    const name = typeof part.filename === 'string' && part.filename !== '' ? ` '${part.filename}'` : '';
    return `[file${name} omitted: the backend cannot receive files]`;
  }
  return `[${describePartType(part)} content omitted: the backend cannot receive it]`;
}

interface ConversionContext {
  options: BridgeOptions;
  warnings: BridgeWarning[];
}

function warnUnsupportedPart(context: ConversionContext, path: string, part: AnyContentPart, outcome: string, callId: string | null = null): void {
  context.warnings.push(
    createWarning('unsupported_content_part', `${path}: content of type '${describePartType(part)}' cannot be sent to a Chat Completions backend; ${outcome}`, {
      callId,
    }),
  );
}

/**
 * Chat Completions knows `auto`, `low` and `high`; Codex's `original` (full resolution, feature
 * `image_detail_original`) is closest to `high`. The warning is shown once per process (see
 * ONCE_PER_PROCESS_INPUT_WARNINGS): every later request replays the same image.
 */
function mapImageDetail(detail: string | null | undefined, path: string, context: ConversionContext): string {
  if (detail === null || detail === undefined) return 'auto';
  if (detail !== 'original') return detail;
  context.warnings.push(
    createWarning('image_detail_changed', `${path}: image detail 'original' was sent as 'high' (Chat Completions accepts auto, low and high; shown once per process)`),
  );
  return 'high';
}

function convertImagePart(part: Extract<AnyContentPart, { type: 'input_image' }>, path: string, context: ConversionContext): ChatContentPart {
  const url = readUrl(part.image_url);
  if (url === '') {
    throw new InvalidRequestError(`${path}: input_image requires a non-empty image_url`, { param: `${path}.image_url` });
  }
  return { type: 'image_url', image_url: { url, detail: mapImageDetail(part.detail, `${path}.detail`, context) } };
}

function convertVideoPart(part: Extract<AnyContentPart, { type: 'input_video' }>, path: string): ChatContentPart {
  const url = readUrl(part.video_url);
  if (url === '') {
    throw new InvalidRequestError(`${path}: input_video requires a non-empty video_url`, { param: `${path}.video_url` });
  }
  return { type: 'video_url', video_url: { url } };
}

/** Text of the text parts only, for roles whose Chat content is a plain string (system, assistant). */
function readTextParts(content: MessageContent, path: string, context: ConversionContext): PassthroughText[] {
  if (!Array.isArray(content)) return [content];
  const texts: PassthroughText[] = [];
  content.forEach((part, partIndex) => {
    const encrypted = part.type === 'encrypted_content' ? readPlainEncryptedContent(part) : null;
    if (isTextPart(part)) texts.push(part.text);
    else if (encrypted !== null) texts.push(passthroughText(encrypted));
    // Refusal parts contribute nothing; they are not content the model should continue from.
    else if (part.type !== 'refusal') warnUnsupportedPart(context, `${path}.content[${partIndex}]`, part, 'omitted from this text-only message');
  });
  return texts;
}

/**
 * A part of user content other than text, as Chat content (null: a refusal, which contributes
 * nothing): an image, a video, or a text placeholder with a warning for what the backend cannot take.
 */
function convertOtherUserPart(part: Exclude<AnyContentPart, { type: TextPartType }>, partPath: string, context: ConversionContext): ChatContentPart | null {
  switch (part.type) {
    case 'input_image':
      return convertImagePart(part, partPath, context);
    case 'input_video':
      return convertVideoPart(part, partPath);
    case 'encrypted_content': {
      const text = readPlainEncryptedContent(part);
      if (text !== null) return { type: 'text', text };
      warnUnsupportedPart(context, partPath, part, 'it is not plain text; a text placeholder was sent instead');
      return { type: 'text', text: createPlaceholder(part) };
    }
    case 'input_file':
    case 'unknown':
      warnUnsupportedPart(context, partPath, part, 'a text placeholder was sent instead');
      return { type: 'text', text: createPlaceholder(part) };
    case 'refusal':
      return null;
    default: {
      const unreachable: never = part;
      throw new Error(`unhandled content part ${JSON.stringify(unreachable)}`);
    }
  }
}

/** User content: one plain string when every part is text (several templates mishandle arrays), the parts joined by line breaks. */
function convertUserContent(content: MessageContent, path: string, context: ConversionContext): string | ChatContentPart[] {
  if (!Array.isArray(content)) return outgoingText(content);
  const parts: Array<ChatContentPart | { type: 'passthrough'; text: PassthroughText }> = [];
  content.forEach((part, partIndex) => {
    if (isTextPart(part)) parts.push({ type: 'passthrough', text: part.text });
    else {
      const converted = convertOtherUserPart(part, `${path}.content[${partIndex}]`, context);
      if (converted !== null) parts.push(converted);
    }
  });
  const texts: PassthroughText[] = [];
  for (const part of parts) {
    if (part.type === 'passthrough') texts.push(part.text);
    else if (part.type === 'text') texts.push(passthroughText(part.text));
  }
  if (texts.length === parts.length) return outgoingText(joinPassthroughText(texts, '\n'));
  return parts.map((part) => (part.type === 'passthrough' ? { type: 'text', text: outgoingText(part.text) } : part));
}

/** An agent message's content: read, not passed through, so its text parts join as tool output parts do. */
function convertAgentMessageContent(content: readonly ResponsesContentPart[], path: string, context: ConversionContext): string | ChatContentPart[] {
  const parts: ChatContentPart[] = [];
  content.forEach((part, partIndex) => {
    const converted = isTextPart(part) ? { type: 'text' as const, text: part.text } : convertOtherUserPart(part, `${path}.content[${partIndex}]`, context);
    if (converted !== null) parts.push(converted);
  });
  if (parts.every((part) => part.type === 'text')) return joinToolOutputText(parts.map((part) => (part.type === 'text' ? part.text : '')));
  return parts;
}

// ---------- tool outputs ----------

interface ConvertedToolOutput {
  content: string | ChatContentPart[];
  /** Images that go into the user message after the run of tool messages. */
  images: ChatContentPart[];
}

function convertToolOutput(output: ResponsesToolOutput, callId: string, path: string, context: ConversionContext): ConvertedToolOutput {
  if (!Array.isArray(output)) return { content: outgoingText(output), images: [] };
  const segments: string[] = [];
  const images: ChatContentPart[] = [];
  let imageNumber = 0;
  output.forEach((part, partIndex) => {
    const partPath = `${path}.output[${partIndex}]`;
    switch (part.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        segments.push(part.text);
        break;
      case 'encrypted_content': {
        const text = readPlainEncryptedContent(part);
        if (text !== null) {
          segments.push(text);
          break;
        }
        warnUnsupportedPart(context, partPath, part, 'it is not plain text; a text placeholder was sent instead', callId);
        segments.push(createPlaceholder(part));
        break;
      }
      case 'input_image': {
        const image = convertImagePart(part, partPath, context);
        imageNumber += 1;
        const mode = context.options.toolOutputImages;
        switch (mode) {
          case 'reject':
            throw new InvalidRequestError(
              `${partPath}: the output of tool call ${callId} contains an image, and the bridge is set to reject tool output images (toolOutputImages: 'reject')`,
              { param: partPath },
            );
          case 'placeholder':
            warnUnsupportedPart(context, partPath, part, 'a text placeholder was sent instead (toolOutputImages: placeholder)', callId);
            segments.push(`[image ${imageNumber} of this tool result omitted: the backend cannot receive images in tool results]`);
            break;
          case 'inline_user_message':
            // Chat tool messages cannot carry images on most engines: a marker stays in place and the
            // image follows in one user message after the run of tool messages.
            segments.push(`[image ${imageNumber} of this tool result is attached in the next message]`);
            images.push(image);
            break;
          default: {
            const unreachable: never = mode;
            throw new Error(`unhandled toolOutputImages ${String(unreachable)}`);
          }
        }
        break;
      }
      case 'input_video':
      case 'input_file':
      case 'unknown':
        warnUnsupportedPart(context, partPath, part, 'a text placeholder was sent instead', callId);
        segments.push(createPlaceholder(part));
        break;
      case 'refusal':
        break;
      default: {
        const unreachable: never = part;
        throw new Error(`unhandled content part ${JSON.stringify(unreachable)}`);
      }
    }
  });
  const mode = context.options.toolOutputParts;
  switch (mode) {
    case 'join':
      return { content: joinToolOutputText(segments), images };
    case 'list': {
      const parts = segments.filter((segment) => segment !== '').map((text): ChatContentPart => ({ type: 'text', text }));
      return { content: parts.length > 0 ? parts : '', images };
    }
    default: {
      const unreachable: never = mode;
      throw new Error(`unhandled toolOutputParts ${String(unreachable)}`);
    }
  }
}

// ---------- reasoning ----------

/** `content[].reasoning_text` is what Codex replays from our own items; `summary[].text` otherwise. */
function readReasoningText(item: Extract<ResponsesInputItem, { type: 'reasoning' }>): PassthroughText {
  const fromContent: PassthroughText[] = [];
  for (const part of item.content ?? []) if (part.type === 'reasoning_text' && part.text !== null && part.text !== undefined) fromContent.push(part.text);
  if (fromContent.some((text) => !isEmptyPassthroughText(text))) return joinPassthroughText(fromContent, '\n');
  return joinPassthroughText(
    (item.summary ?? []).map((part) => part.text).filter((text) => !isEmptyPassthroughText(text)),
    '\n\n',
  );
}

// ---------- the assistant buffer ----------

interface AssistantTurn {
  texts: PassthroughText[];
  reasoning: PassthroughText[];
  toolCalls: ChatToolCall[];
}

function createAssistantTurn(): AssistantTurn {
  return { texts: [], reasoning: [], toolCalls: [] };
}

function buildAssistantMessage(turn: AssistantTurn, options: BridgeOptions): AssistantMessage | null {
  const text = joinPassthroughText(
    turn.texts.filter((part) => !isEmptyPassthroughText(part)),
    '\n\n',
  );
  const passedReasoning = joinPassthroughText(turn.reasoning, '\n\n');
  if (isEmptyPassthroughText(text) && isEmptyPassthroughText(passedReasoning) && turn.toolCalls.length === 0) return null;
  const message: AssistantMessage = { role: 'assistant', content: isEmptyPassthroughText(text) ? null : outgoingText(text) };
  if (!isEmptyPassthroughText(passedReasoning)) {
    const reasoning = outgoingText(passedReasoning);
    // Never inline in `content`: vLLM ≥0.16 reads `reasoning`, SGLang/llama.cpp/older vLLM
    // `reasoning_content`; both at once is harmless on vLLM.
    const field = options.replayReasoningField;
    switch (field) {
      case 'reasoning':
        message.reasoning = reasoning;
        break;
      case 'reasoning_content':
        message.reasoning_content = reasoning;
        break;
      case 'both':
        message.reasoning = reasoning;
        message.reasoning_content = reasoning;
        break;
      default: {
        const unreachable: never = field;
        throw new Error(`unhandled replayReasoningField ${String(unreachable)}`);
      }
    }
  }
  // OpenAI-style validators reject `tool_calls: []`, so the key is omitted when empty.
  if (turn.toolCalls.length > 0) message.tool_calls = turn.toolCalls;
  return message;
}

// ---------- instructions and developer messages ----------

function isInstructionMessage(item: ResponsesInputItem): item is ResponsesMessageItem & { role: 'system' | 'developer' } {
  return item.type === 'message' && (item.role === 'system' || item.role === 'developer');
}

/** Later system/developer messages: most chat templates do not know `developer`, some reject a late `system`. */
function convertLaterInstruction(item: ResponsesMessageItem & { role: 'system' | 'developer' }, path: string, context: ConversionContext): ChatMessage {
  const text = joinPassthroughText(readTextParts(item.content, path, context), '\n');
  const role = context.options.midConversationDeveloperRole;
  switch (role) {
    case 'system':
      return { role: 'system', content: outgoingText(text) };
    case 'user':
      return { role: 'user', content: outgoingText(joinPassthroughText([passthroughText(`<${item.role}>`), text, passthroughText(`</${item.role}>`)], '\n')) };
    default: {
      const unreachable: never = role;
      throw new Error(`unhandled midConversationDeveloperRole ${String(unreachable)}`);
    }
  }
}

// ---------- items with no Chat representation ----------

function describeDroppedItem(kind: string, path: string): string {
  if (HOSTED_CALL_ITEM_TYPES.has(kind)) return `${path}: '${kind}' is a hosted-tool record with no Chat Completions representation; dropped`;
  if (COMPACTION_RECORD_ITEM_TYPES.has(kind)) {
    return `${path}: '${kind}' is a record of a remote compaction, readable only by OpenAI's service; dropped (with local compaction the summary arrives as a user message)`;
  }
  if (kind === 'other') return `${path}: an item Codex itself did not recognise (type 'other'); dropped`;
  return `${path}: unknown input item type '${kind}'; dropped`;
}

// ---------- the converter ----------

/**
 * Responses input items → Chat messages. `items` must already be free of `additional_tools`
 * carriers (see hoist-additional-tools.ts). Throws `UnsupportedFeatureError` for `item_reference`
 * and `InvalidRequestError` for empty image URLs and rejected tool-output images.
 */
export function convertInputItems(
  items: readonly IndexedInputItem[],
  instructions: PassthroughText | null | undefined,
  options: BridgeOptions,
): ConvertInputItemsResult {
  const context: ConversionContext = { options, warnings: [] };
  const messages: ChatMessage[] = [];

  // `instructions` plus the leading run of system/developer messages → one system message at index 0:
  // many chat templates accept a single system message only.
  const systemTexts: PassthroughText[] = instructions !== null && instructions !== undefined && !isEmptyPassthroughText(instructions) ? [instructions] : [];
  let start = 0;
  for (const entry of items) {
    if (!isInstructionMessage(entry.item)) break;
    systemTexts.push(...readTextParts(entry.item.content, `input[${entry.index}]`, context));
    start += 1;
  }
  const systemText = joinPassthroughText(
    systemTexts.filter((text) => !isEmptyPassthroughText(text)),
    '\n\n',
  );
  if (!isEmptyPassthroughText(systemText)) messages.push({ role: 'system', content: outgoingText(systemText) });

  let turn = createAssistantTurn();
  let pendingImages: Array<{ callId: string; images: ChatContentPart[] }> = [];

  // Templates require `assistant(tool_calls) → tool, tool, …` to stay contiguous, so the images of a
  // run of tool messages follow in one user message after the last of them.
  const flushImages = (): void => {
    if (pendingImages.length === 0) return;
    const content = pendingImages.flatMap(({ callId, images }): ChatContentPart[] => [
      { type: 'text', text: `Image output of tool call ${callId}:` },
      ...images,
    ]);
    messages.push({ role: 'user', content });
    pendingImages = [];
  };
  const flushTurn = (): void => {
    const message = buildAssistantMessage(turn, options);
    turn = createAssistantTurn();
    if (message === null) return;
    flushImages();
    messages.push(message);
  };
  const pushMessage = (message: ChatMessage): void => {
    flushTurn();
    flushImages();
    messages.push(message);
  };

  for (const { item, index } of items.slice(start)) {
    const path = `input[${index}]`;
    switch (item.type) {
      case 'message': {
        const role = item.role;
        switch (role) {
          case 'user':
            pushMessage({ role: 'user', content: convertUserContent(item.content, path, context) });
            break;
          case 'assistant':
            turn.texts.push(joinPassthroughText(readTextParts(item.content, path, context), ''));
            break;
          case 'system':
          case 'developer':
            pushMessage(convertLaterInstruction({ ...item, role }, path, context));
            break;
          default: {
            const unreachable: never = role;
            throw new Error(`unhandled role ${String(unreachable)}`);
          }
        }
        break;
      }
      case 'reasoning': {
        if (!options.replayReasoning) break;
        const text = readReasoningText(item);
        if (!isEmptyPassthroughText(text)) turn.reasoning.push(text);
        break;
      }
      case 'function_call': {
        const replayed = normaliseReplayedArguments(item.arguments);
        if (replayed.rewrapped) {
          context.warnings.push(
            createWarning(
              'replay_rewrapped',
              `${path}: the replayed arguments of '${item.name}' are not a JSON object; sent as {"_raw_arguments": …} so the backend accepts the history`,
              { tool: item.name, callId: item.call_id, raw: item.arguments ?? '' },
            ),
          );
        }
        turn.toolCalls.push({
          id: item.call_id,
          type: 'function',
          function: { name: toWireName(item.namespace ?? null, item.name), arguments: replayed.arguments },
        });
        break;
      }
      case 'custom_tool_call':
        // Lowered as a bridged call under every strategy, even when the tool is no longer declared:
        // templates tolerate unknown names in history, and vLLM rejects non-function call types.
        turn.toolCalls.push({
          id: item.call_id,
          type: 'function',
          function: { name: toWireName(item.namespace ?? null, item.name), arguments: serialiseCustomToolInput(item.input) },
        });
        break;
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const converted = convertToolOutput(item.output, item.call_id, path, context);
        flushTurn();
        messages.push({ role: 'tool', tool_call_id: item.call_id, content: converted.content });
        if (converted.images.length > 0) pendingImages.push({ callId: item.call_id, images: converted.images });
        break;
      }
      case 'additional_tools':
        // Hoisted before conversion; nothing stays in the message list.
        break;
      case 'agent_message':
        // A task handed to a sub-agent, or a sub-agent's answer: to the model that reads it, it is the
        // user speaking. Dropped, the child would start with no task and the parent never hear back.
        // Its parts are written to be concatenated ("…Payload:\n" + the task), like tool output parts.
        pushMessage({ role: 'user', content: convertAgentMessageContent(item.content, path, context) });
        break;
      case 'configuration_update':
        // Applied to the request's reasoning effort by apply-configuration-updates.ts, which warns.
        break;
      case 'compaction_trigger':
        throw new UnsupportedFeatureError(
          `${path}: compaction_trigger asks for remote compaction, which needs OpenAI's service; a Chat Completions backend cannot answer it. Codex asks for it only when the provider's id or name is 'openai' or 'azure' (any case) or its base URL looks like Azure: give the provider another id and name (freeform-bridge codex-config does) and Codex compacts locally`,
          path,
        );
      case 'item_reference':
        throw new UnsupportedFeatureError(
          `${path}: item_reference${item.id ? ` '${item.id}'` : ''} cannot be resolved: the bridge keeps no response store, so send the full item instead`,
          path,
        );
      case 'unknown': {
        const kind = item.originalType;
        const detail = describeDroppedItem(kind, path);
        const callId = item.value['call_id'];
        context.warnings.push(
          createWarning('unknown_item_dropped', detail, { callId: typeof callId === 'string' ? callId : null, raw: JSON.stringify(item.value) }),
        );
        break;
      }
      default: {
        const unreachable: never = item;
        throw new Error(`unhandled input item ${JSON.stringify(unreachable)}`);
      }
    }
  }
  flushTurn();
  flushImages();
  return { value: messages, warnings: context.warnings };
}
