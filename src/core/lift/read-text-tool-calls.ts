import { isPlainObject, parseJson } from '../parse-json.ts';
import type { ToolMap } from '../tool-map.ts';

/*
 * Tool calls an engine left in the assistant text. An engine turns a model's call markup into
 * `tool_calls` only when its chat template or tool-call parser knows the model's format (llama-server
 * without --jinja or with a --chat-template override, vLLM without --tool-call-parser, an Ollama or
 * LM Studio template without the model's call format); otherwise the markup arrives as content and
 * Codex shows it as a message and ends the turn. This reads that markup: a call is recovered only when
 * the whole text, whitespace and think blocks aside, is complete call blocks of one family naming
 * offered tools with arguments that parse; markup anywhere else is reported, never acted on; markup
 * inside a code sample is someone explaining the syntax and left alone.
 */

export type TextToolCallFamily = 'hermes' | 'qwen3_coder' | 'mistral' | 'llama3' | 'deepseek' | 'harmony' | 'glm' | 'bare_json';

export const TEXT_TOOL_CALL_FAMILY_NAMES: Readonly<Record<TextToolCallFamily, string>> = {
  hermes: 'Hermes/Qwen2.5 <tool_call>',
  qwen3_coder: 'Qwen3-Coder <function=…>',
  mistral: 'Mistral [TOOL_CALLS]',
  llama3: 'Llama 3/4 <|python_tag|>',
  deepseek: 'DeepSeek <｜tool▁calls▁begin｜>',
  harmony: 'gpt-oss Harmony to=functions.…',
  glm: 'GLM <arg_key>/<arg_value>',
  bare_json: 'bare JSON {"name", "arguments"}',
};

export interface TextToolCall {
  /** The tool name as the model wrote it (the wire name the engine was offered). */
  wireName: string;
  /** The arguments as one JSON object text, the shape an engine's parser would have sent. */
  argumentsText: string;
}

export type TextToolCallReading =
  | { kind: 'none' }
  /** The whole text is these calls; `reasoning` is the text of think blocks around them (kept, never dropped). */
  | { kind: 'calls'; family: TextToolCallFamily; calls: TextToolCall[]; reasoning: string }
  /** Markup of a call that cannot be delivered as one; `reason` says why, `tool` names it when it could be read. */
  | { kind: 'markup'; family: TextToolCallFamily; tool: string | null; reason: string };

const THINK_BLOCK = /^\s*<think>[\s\S]*?<\/think>/;

/** The openings of each family's call block, as the text (after whitespace and think blocks) begins. */
const OPENINGS: ReadonlyArray<{ family: TextToolCallFamily; opening: string }> = [
  { family: 'hermes', opening: '<tool_call>' },
  { family: 'qwen3_coder', opening: '<function=' },
  { family: 'mistral', opening: '[TOOL_CALLS]' },
  { family: 'llama3', opening: '<|python_tag|>' },
  { family: 'llama3', opening: '<|python_start|>' },
  { family: 'deepseek', opening: '<｜tool▁calls▁begin｜>' },
  { family: 'deepseek', opening: '<｜tool▁call▁begin｜>' },
  { family: 'deepseek', opening: '<|tool▁calls▁begin|>' },
  { family: 'deepseek', opening: '<|tool▁call▁begin|>' },
  { family: 'harmony', opening: '<|start|>assistant' },
  { family: 'harmony', opening: '<|channel|>' },
  { family: 'harmony', opening: 'to=functions.' },
];

/**
 * Markup that starts a call when it stands in prose (outside code): each pattern needs what follows
 * the marker in a real call (an object, a name), so prose that only names a tag is not reported.
 */
const PROSE_MARKERS: ReadonlyArray<{ family: TextToolCallFamily; pattern: RegExp }> = [
  { family: 'qwen3_coder', pattern: /<tool_call>\s*<function=|<function=[\w.-]+>\s*(?:<parameter=|<\/function>)/ },
  { family: 'glm', pattern: /<tool_call>\s*[\w.-]+\s*<arg_key>|<arg_key>[^<]*<\/arg_key>\s*<arg_value>/ },
  { family: 'hermes', pattern: /<tool_call>\s*\{/ },
  { family: 'mistral', pattern: /\[TOOL_CALLS\]\s*(?:[[{]|[\w.-]+\s*\[(?:ARGS|CALL_ID)\])/ },
  { family: 'llama3', pattern: /<\|python_(?:tag|start)\|>\s*(?:\{|[\w.]+\s*\()/ },
  { family: 'deepseek', pattern: /<[|｜]tool▁calls?▁begin[|｜]>/ },
  { family: 'harmony', pattern: /to=functions\.[\w.-]+[\s\S]{0,80}?<\|message\|>/ },
];

/**
 * Whether text that has arrived so far could still turn out to be nothing but call blocks, so a
 * stream holds it back until that is decided. False as soon as the text cannot be one (ordinary prose
 * streams from its first word on).
 */
export function mayBecomeTextToolCall(prefix: string): boolean {
  return new TextToolCallHold().push(prefix);
}

/**
 * The same question asked piece by piece, at a cost that does not grow with what is already held: the
 * think blocks already passed are not scanned again, and only the beginning of the rest decides.
 */
export class TextToolCallHold {
  private held = '';
  /** Where the text after the complete leading think blocks begins. */
  private restStart = 0;

  get text(): string {
    return this.held;
  }

  push(piece: string): boolean {
    // A closing tag may have begun in the previous piece.
    const searchFrom = Math.max(this.restStart, this.held.length - '</think>'.length);
    this.held += piece;
    for (;;) {
      let start = this.restStart;
      while (start < this.held.length && /\s/.test(this.held.charAt(start))) start += 1;
      if (!this.held.startsWith('<think>', start)) break;
      const close = this.held.indexOf('</think>', Math.max(start + '<think>'.length, searchFrom));
      if (close === -1) return true;
      this.restStart = close + '</think>'.length;
    }
    // Openings, fences and the first key of a JSON call are all decided within the first few hundred characters.
    const rest = this.held.slice(this.restStart, this.restStart + 400).trimStart();
    if (rest === '' || '<think>'.startsWith(rest)) return true;
    return mayOpenCallBlock(rest);
  }
}

function mayOpenCallBlock(rest: string): boolean {
  if ('```'.startsWith(rest)) return true;
  if (rest.startsWith('```')) {
    const newline = rest.indexOf('\n');
    if (newline === -1) return /^```[a-z]*$/i.test(rest);
    if (!/^```(?:json|xml|tool_call)?\s*$/i.test(rest.slice(0, newline))) return false;
    const inner = rest.slice(newline + 1).trimStart();
    return inner === '' || mayOpenCallBlock(inner);
  }
  for (const { opening } of OPENINGS) if (opening.startsWith(rest) || rest.startsWith(opening)) return true;
  // A bare JSON call: an object whose first key is "name" (or "type", as in {"type": "function", "name": …}), or an array of them.
  const compact = rest.slice(0, 40).replace(/\s+/g, '');
  return ['{"name":', '[{"name":', '{"type":', '[{"type":'].some((opening) => opening.startsWith(compact) || compact.startsWith(opening));
}

/** Reads the assistant text; `tools` is the request's tool map (wire name → tool). */
export function readTextToolCalls(text: string, tools: ToolMap): TextToolCallReading {
  let rest = text;
  const reasoning: string[] = [];
  for (;;) {
    const think = THINK_BLOCK.exec(rest);
    if (think === null) break;
    reasoning.push(think[0].trim().slice('<think>'.length, -'</think>'.length).trim());
    rest = rest.slice(think[0].length);
  }
  rest = rest.trim();
  const unfenced = unwrapWholeFence(rest);
  const whole = readWholeCalls(unfenced ?? rest, tools);
  if (whole !== null) {
    if (whole.kind === 'calls') return { ...whole, reasoning: [...reasoning, whole.reasoning].filter((part) => part !== '').join('\n\n') };
    return whole;
  }
  return findMarkupInProse(text);
}

/** A text that is one fenced code block and nothing else: its body. */
function unwrapWholeFence(text: string): string | null {
  const match = /^```[\w-]*[ \t]*\n([\s\S]*?)\n?```$/.exec(text);
  if (match === null || match[1] === undefined || match[1].includes('```')) return null;
  return match[1].trim();
}

/** A name the model wrote, as a warning shows it: model text of any length must not flood the terminal. */
function shortName(name: string): string {
  return name.length > 80 ? `${name.slice(0, 80)}…` : name;
}

type WholeReading = Exclude<TextToolCallReading, { kind: 'none' }> | null;

/** The text read as nothing but call blocks of one family; null when it does not start like one. */
function readWholeCalls(text: string, tools: ToolMap): WholeReading {
  const opened = findOpeningFamily(text);
  if (opened === null) return null;
  const blocks = splitBlocks(text, opened);
  if (blocks === null) return null;
  const calls: TextToolCall[] = [];
  const reasoning: string[] = [];
  const families = new Set<TextToolCallFamily>();
  for (const block of blocks) {
    if ('reasoning' in block) {
      reasoning.push(block.reasoning);
      continue;
    }
    const family = block.family ?? opened;
    if ('problem' in block) return { kind: 'markup', family, tool: block.tool === null ? null : shortName(block.tool), reason: block.problem };
    families.add(family);
    const tool = tools.get(block.wireName);
    if (tool === undefined) return { kind: 'markup', family, tool: shortName(block.wireName), reason: `it names ${JSON.stringify(shortName(block.wireName))}, a tool the request did not offer` };
    calls.push({ wireName: block.wireName, argumentsText: block.xmlValues === undefined ? block.argumentsText : readXmlArguments(block.xmlValues, tool.kind === 'custom') });
  }
  const [family, other] = [...families];
  if (family === undefined) return null;
  if (other !== undefined) return { kind: 'markup', family, tool: calls[0]?.wireName ?? null, reason: `it mixes two call forms (${TEXT_TOOL_CALL_FAMILY_NAMES[family]} and ${TEXT_TOOL_CALL_FAMILY_NAMES[other]})` };
  return { kind: 'calls', family, calls, reasoning: reasoning.join('\n\n') };
}

/**
 * XML parameter values are text; for a function, a JSON object, array, number or boolean becomes that
 * value, as the engines' parsers do (a `command` array stays an array). A free-form tool's `input` is
 * always the text as written.
 */
function readXmlArguments(values: Readonly<Record<string, string>>, custom: boolean): string {
  const argumentsObject: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) argumentsObject[key] = custom ? value : readXmlValue(value);
  return JSON.stringify(argumentsObject);
}

function findOpeningFamily(text: string): TextToolCallFamily | null {
  if (text.startsWith('{') || text.startsWith('[{') || /^\[\s*\{/.test(text)) return looksLikeBareCall(text) ? 'bare_json' : null;
  for (const { family, opening } of OPENINGS) if (text.startsWith(opening)) return family;
  return null;
}

function looksLikeBareCall(text: string): boolean {
  const parsed = parseJson(text);
  if (!parsed.success) return /^\[?\s*\{\s*"name"\s*:/.test(text);
  const values = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  return values.length > 0 && values.every((value) => isPlainObject(value) && typeof value.name === 'string' && ('arguments' in value || 'parameters' in value));
}

type Block =
  | (TextToolCall & { family?: TextToolCallFamily; xmlValues?: Record<string, string> })
  | { problem: string; tool: string | null; family?: TextToolCallFamily }
  /** Harmony's analysis message between calls: the model's reasoning. */
  | { reasoning: string };

function problem(reason: string, tool: string | null = null, family?: TextToolCallFamily): Block {
  return family === undefined ? { problem: reason, tool } : { problem: reason, tool, family };
}

const CUT_OFF = 'the block is cut off (no closing markup or unfinished arguments)';

/** Splits the text into its call blocks; null when something other than blocks and whitespace is left. */
function splitBlocks(text: string, family: TextToolCallFamily): Block[] | null {
  switch (family) {
    case 'hermes':
      return splitTagged(text, '<tool_call>', '</tool_call>', readToolCallTag);
    case 'qwen3_coder':
      return splitTagged(text, '<function=', '</function>', (inner, closed) =>
        closed ? readQwen3CoderFunction(`<function=${inner}</function>`) : problem(CUT_OFF, /^([^>\s]+)>/.exec(inner)?.[1] ?? null),
      );
    case 'mistral':
      return readMistral(text);
    case 'llama3':
      return readLlama3(text);
    case 'deepseek':
      return readDeepSeek(text);
    case 'harmony':
      return readHarmony(text);
    case 'bare_json':
      return readBareJson(text);
    case 'glm':
      return null;
  }
}

/**
 * `<open>inner</close>` repeated with whitespace between; a last block without its closing tag counts
 * only when its inside is complete by itself (engines that strip special tokens drop the closing one).
 */
function splitTagged(text: string, open: string, close: string, readInner: (inner: string, closed: boolean) => Block): Block[] | null {
  const blocks: Block[] = [];
  let position = 0;
  while (position < text.length) {
    if (!text.startsWith(open, position)) return null;
    const start = position + open.length;
    const end = text.indexOf(close, start);
    if (end === -1) {
      const block = readInner(text.slice(start), false);
      blocks.push('problem' in block ? problem(CUT_OFF, block.tool, block.family) : block);
      return blocks;
    }
    blocks.push(readInner(text.slice(start, end), true));
    position = end + close.length;
    while (position < text.length && /\s/.test(text.charAt(position))) position += 1;
  }
  return blocks;
}

/** The inside of `<tool_call>…</tool_call>`: Hermes JSON, Qwen3-Coder's `<function=…>` or GLM's `name <arg_key>…`. */
function readToolCallTag(inner: string): Block {
  const body = inner.trim();
  if (body.startsWith('<function=')) return withFamily(readQwen3CoderFunction(body), 'qwen3_coder');
  const glm = /^([\w.-]+)\s*(?=<arg_key>|$)/.exec(body);
  if (glm?.[1] !== undefined && !body.startsWith('{')) return withFamily(readGlmArguments(glm[1], body.slice(glm[0].length)), 'glm');
  return readNameAndArguments(body);
}

/** A block read inside another family's wrapper keeps the family of its inner form. */
function withFamily(block: Block, family: TextToolCallFamily): Block {
  return 'reasoning' in block ? block : { ...block, family };
}

/** `{"name": …, "arguments"|"parameters": {…} | "…"}`, the form Hermes, Mistral, Llama 3 and bare JSON share. */
function readNameAndArguments(body: string): Block {
  const parsed = parseJson(body);
  if (!parsed.success) {
    const name = /"name"\s*:\s*"([^"]+)"/.exec(body)?.[1] ?? null;
    return problem(isUnfinishedJson(body) ? CUT_OFF : 'its JSON does not parse', name);
  }
  return readCallObject(parsed.value);
}

function readCallObject(value: unknown): Block {
  if (!isPlainObject(value)) return problem('it is not a {"name", "arguments"} object');
  // OpenAI's own shape, which some models copy: {"type": "function", "function": {"name", "arguments"}}.
  const call = isPlainObject(value.function) ? value.function : value;
  const name = call.name;
  if (typeof name !== 'string' || name === '') return problem('it names no tool');
  const argumentsValue = 'arguments' in call ? call.arguments : call.parameters;
  return readArguments(name, argumentsValue);
}

function readArguments(name: string, argumentsValue: unknown): Block {
  if (argumentsValue === undefined) return { wireName: name, argumentsText: '{}' };
  if (isPlainObject(argumentsValue)) return { wireName: name, argumentsText: JSON.stringify(argumentsValue) };
  if (typeof argumentsValue === 'string') {
    const inner = parseJson(argumentsValue);
    if (inner.success && isPlainObject(inner.value)) return { wireName: name, argumentsText: argumentsValue };
  }
  return problem('its arguments are not a JSON object', name);
}

function isUnfinishedJson(text: string): boolean {
  return findJsonValueEnd(text, 0) === -1;
}

/**
 * The end of the JSON object or array that starts at `start` (strings and escapes respected), or -1
 * when the text ends first. Only finds the end: the slice is parsed by parseJson.
 */
function findJsonValueEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index += 1) {
    const character = text.charAt(index);
    if (inString) {
      if (character === '\\') index += 1;
      else if (character === '"') inString = false;
      continue;
    }
    if (character === '"') inString = true;
    else if (character === '{' || character === '[') depth += 1;
    else if (character === '}' || character === ']') {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

/** JSON values one after another (`;`, `,` or whitespace between), as Llama 3 and Mistral write several calls. */
function readJsonSequence(text: string): { values: string[]; cut: boolean } | null {
  const values: string[] = [];
  let position = 0;
  while (position < text.length) {
    const character = text.charAt(position);
    if (/[\s;,]/.test(character)) {
      position += 1;
      continue;
    }
    if (character !== '{' && character !== '[') return null;
    const end = findJsonValueEnd(text, position);
    if (end === -1) return { values: [...values, text.slice(position)], cut: true };
    values.push(text.slice(position, end));
    position = end;
  }
  return { values, cut: false };
}

function readCallObjects(values: string[], cut: boolean): Block[] {
  const blocks: Block[] = [];
  values.forEach((valueText, index) => {
    if (cut && index === values.length - 1) {
      blocks.push(problem(CUT_OFF, /"name"\s*:\s*"([^"]+)"/.exec(valueText)?.[1] ?? null));
      return;
    }
    const parsed = parseJson(valueText);
    if (!parsed.success) {
      blocks.push(problem('its JSON does not parse'));
      return;
    }
    for (const value of Array.isArray(parsed.value) ? parsed.value : [parsed.value]) blocks.push(readCallObject(value));
  });
  return blocks;
}

/** Qwen3-Coder: `<function=NAME><parameter=KEY>value</parameter>…</function>`. */
function readQwen3CoderFunction(block: string): Block {
  const header = /^<function=([^>\s]+)>/.exec(block);
  if (header?.[1] === undefined) return problem('it names no tool');
  const name = header[1];
  if (!block.endsWith('</function>')) return problem(CUT_OFF, name);
  const body = block.slice(header[0].length, -'</function>'.length);
  return readXmlPairs(name, body, /\s*<parameter=([^>\s]+)>\n?([\s\S]*?)\n?<\/parameter>\s*/y, '</parameter>', 'parameter');
}

/** GLM: `NAME <arg_key>KEY</arg_key><arg_value>value</arg_value>…` inside `<tool_call>`. */
function readGlmArguments(name: string, body: string): Block {
  return readXmlPairs(name, body, /\s*<arg_key>\s*([^<]*?)\s*<\/arg_key>\s*<arg_value>([\s\S]*?)<\/arg_value>\s*/y, '</arg_value>', 'argument');
}

/** Key and value pairs, one after another (a sticky pattern capturing both), each key once. */
function readXmlPairs(name: string, body: string, pair: RegExp, closing: string, what: string): Block {
  const values: Record<string, string> = {};
  let position = 0;
  while (position < body.length) {
    pair.lastIndex = position;
    const match = pair.exec(body);
    if (match === null) {
      if (body.slice(position).trim() === '') break;
      return problem(body.indexOf(closing, position) === -1 ? CUT_OFF : `a ${what} does not parse`, name);
    }
    const key = match[1] ?? '';
    if (Object.hasOwn(values, key)) return problem(`it repeats the ${what} ${JSON.stringify(key)}`, name);
    values[key] = match[2] ?? '';
    position = pair.lastIndex;
  }
  return { wireName: name, argumentsText: '', xmlValues: values };
}

function readXmlValue(value: string): unknown {
  const trimmed = value.trim();
  if (/^(?:[[{]|-?\d|true$|false$|null$)/.test(trimmed)) {
    const parsed = parseJson(trimmed);
    if (parsed.success) return parsed.value;
  }
  return value;
}

/** Mistral: `[TOOL_CALLS][{"name", "arguments"}…]`, or the newer `[TOOL_CALLS]NAME[ARGS]{…}` (with `[CALL_ID]id`). */
function readMistral(text: string): Block[] | null {
  const blocks: Block[] = [];
  let rest = text;
  while (rest !== '') {
    if (!rest.startsWith('[TOOL_CALLS]')) return null;
    rest = rest.slice('[TOOL_CALLS]'.length).trimStart();
    const next = rest.indexOf('[TOOL_CALLS]');
    const segment = next === -1 ? rest : rest.slice(0, next);
    rest = next === -1 ? '' : rest.slice(next);
    const named = /^([\w.-]+)(?:\[CALL_ID\][\w-]*)?\[ARGS\]/.exec(segment);
    if (named?.[1] !== undefined) {
      const argumentsText = segment.slice(named[0].length).trim();
      const parsed = parseJson(argumentsText);
      if (!parsed.success) blocks.push(problem(isUnfinishedJson(argumentsText) ? CUT_OFF : 'its JSON does not parse', named[1]));
      else blocks.push(readArguments(named[1], parsed.value));
      continue;
    }
    const sequence = readJsonSequence(segment.trim());
    if (sequence === null) return null;
    blocks.push(...readCallObjects(sequence.values, sequence.cut));
  }
  return blocks;
}

/**
 * Llama 3.x: `<|python_tag|>{"name", "parameters"}` (several joined by `;`), ended by `<|eom_id|>` or
 * `<|eot_id|>`; Llama 4 wraps the same JSON in `<|python_start|>…<|python_end|>`.
 */
function readLlama3(text: string): Block[] | null {
  const body = text
    .replace(/^<\|python_(?:tag|start)\|>/, '')
    .replace(/(?:<\|python_end\|>|<\|eom_id\|>|<\|eot_id\|>)\s*$/, '')
    .trim();
  if (/^[\w.]+\s*\(/.test(body)) return [problem('it is a built-in tool call (name.call(…)), not a JSON one')];
  const sequence = readJsonSequence(body);
  if (sequence === null) return null;
  return readCallObjects(sequence.values, sequence.cut);
}

/**
 * DeepSeek V3: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`;
 * V3.1 drops the `function` and the fence: `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>`.
 * Templates and tokenizer dumps spell the bars both ways (｜ and |).
 */
function readDeepSeek(text: string): Block[] | null {
  const body = text
    .replace(/｜/g, '|')
    .trim()
    .replace(/^<\|tool▁calls▁begin\|>/, '')
    .replace(/<\|end▁of▁sentence\|>\s*$/, '')
    .replace(/<\|tool▁calls▁end\|>\s*$/, '')
    .trim();
  return splitTagged(body, '<|tool▁call▁begin|>', '<|tool▁call▁end|>', readDeepSeekCall);
}

function readDeepSeekCall(inner: string): Block {
  const match = /^(?:function)?\s*<\|tool▁sep\|>\s*([^\s<]+)\s*\n?```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(inner.trim()) ?? /^([^\s<|]+)\s*<\|tool▁sep\|>\s*([\s\S]*)$/.exec(inner.trim());
  if (match?.[1] === undefined) return problem('its call header does not parse');
  const name = match[1];
  const argumentsText = (match[2] ?? '').trim();
  const parsed = parseJson(argumentsText);
  if (!parsed.success) return problem(isUnfinishedJson(argumentsText) ? CUT_OFF : 'its JSON does not parse', name);
  return readArguments(name, parsed.value);
}

/**
 * gpt-oss Harmony: `<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>`;
 * the recipient may also stand before `<|channel|>`. An analysis message before it is the model's reasoning.
 */
function readHarmony(text: string): Block[] | null {
  const blocks: Block[] = [];
  const message = /(?:<\|start\|>assistant)?\s*(?:<\|channel\|>\s*(?:analysis|commentary|final)?\s*)?(?:to=functions\.([\w.-]+))?\s*(?:<\|channel\|>\s*commentary\s*)?(?:<\|constrain\|>\s*)?(?:json\s*)?<\|message\|>/y;
  let position = 0;
  while (position < text.length) {
    message.lastIndex = position;
    const header = message.exec(text);
    if (header === null) return null;
    const bodyStart = message.lastIndex;
    const endMatch = /<\|(call|end|return)\|>/.exec(text.slice(bodyStart));
    const body = endMatch === null ? text.slice(bodyStart) : text.slice(bodyStart, bodyStart + endMatch.index);
    position = endMatch === null ? text.length : bodyStart + endMatch.index + endMatch[0].length;
    while (position < text.length && /\s/.test(text.charAt(position))) position += 1;
    const name = header[1];
    // A message without a recipient is analysis (the model's reasoning, kept) or a final answer: then not only calls.
    if (name === undefined) {
      if (!/<\|channel\|>\s*analysis/.test(header[0]) || endMatch === null) return null;
      blocks.push({ reasoning: body.trim() });
      continue;
    }
    const parsed = parseJson(body.trim());
    if (!parsed.success) {
      blocks.push(problem(isUnfinishedJson(body.trim()) ? CUT_OFF : 'its JSON does not parse', name));
      continue;
    }
    blocks.push(readArguments(name, parsed.value));
  }
  return blocks;
}

function readBareJson(text: string): Block[] | null {
  const sequence = readJsonSequence(text);
  if (sequence === null) return null;
  return readCallObjects(sequence.values, sequence.cut);
}

/**
 * Call markup standing in prose, outside fenced code and inline code: reported (an engine that did not
 * parse a call the model meant), never acted on. Markup inside code is a sample of the syntax.
 */
function findMarkupInProse(text: string): TextToolCallReading {
  const prose = text.replace(/```[\s\S]*?(?:```|$)/g, ' ').replace(/`[^`\n]*`/g, ' ');
  for (const { family, pattern } of PROSE_MARKERS) {
    const match = pattern.exec(prose);
    if (match === null) continue;
    const after = prose.slice(match.index, match.index + 400);
    const tool =
      /<function=([\w.-]+)>/.exec(after)?.[1] ??
      /to=functions\.([\w.-]+)/.exec(after)?.[1] ??
      /"name"\s*:\s*"([^"]+)"/.exec(after)?.[1] ??
      /<tool_call>\s*([\w.-]+)\s*<arg_key>/.exec(after)?.[1] ??
      /\[TOOL_CALLS\]\s*([\w.-]+)\s*\[/.exec(after)?.[1] ??
      null;
    return { kind: 'markup', family, tool: tool === null ? null : shortName(tool), reason: 'the markup stands within other text, so which part is the call is not certain' };
  }
  return { kind: 'none' };
}

/**
 * What to change so the engine parses the family's calls itself, per engine as the doctor advises
 * (src/core/doctor/engine-advice.ts). The bridge does not know which engine answered, so all are named.
 */
export function adviseTextToolCallFix(family: TextToolCallFamily): string {
  const vllmParser: Record<TextToolCallFamily, string> = {
    hermes: 'hermes',
    qwen3_coder: 'qwen3_coder',
    mistral: 'mistral',
    llama3: 'llama3_json',
    deepseek: 'deepseek_v3',
    harmony: 'openai',
    glm: 'glm45',
    bare_json: '<the parser of your model family>',
  };
  return `llama-server: --jinja and no --chat-template override (the model's own template); vLLM: --enable-auto-tool-choice --tool-call-parser ${vllmParser[family]}; Ollama or LM Studio: a model whose template has the tools capability`;
}
