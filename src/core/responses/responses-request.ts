import * as z from '../schema/zod.ts';
import { InvalidRequestError } from '../errors.ts';
import { isPlainObject } from '../parse-json.ts';
import type { PassthroughText } from '../outbound/passthrough-text.ts';

/*
 * The Responses request as Codex 0.154–0.171 sends it. We validate exactly what
 * lowering consumes and keep every other field (loose objects): a newer Codex that adds a field must
 * never get a 400 from the bridge.
 *
 * Kinds we do not know (input items, content parts, tools) are not errors either: a preprocess step
 * wraps them as `{ type: 'unknown' | 'hosted', originalType, value }` so the converters can drop them
 * with a warning that names the kind, and `switch (x.type)` stays exhaustive over literal types.
 */

// ---------- helpers ----------

/**
 * Wraps a value whose string `type` is not among `knownTypes`, so a discriminated union can route it
 * to a catch-all option instead of failing. `defaultType` is applied when `type` is absent and
 * `defaultWhenKey` is present (an input item with a `role` but no `type` is a message).
 */
function createKindNormaliser(
  knownTypes: ReadonlySet<string>,
  wrapperType: string,
  fallback: { defaultType: string; defaultWhenKey: string } | null = null,
): (value: unknown) => unknown {
  return (value) => {
    if (!isPlainObject(value)) return value;
    const type = value['type'];
    if ((type === undefined || type === null) && fallback && fallback.defaultWhenKey in value) {
      return { ...value, type: fallback.defaultType };
    }
    if (typeof type === 'string' && !knownTypes.has(type)) {
      return { type: wrapperType, originalType: type, value };
    }
    return value;
  };
}

const unknownKindSchema = z.object({
  type: z.literal('unknown'),
  /** The `type` Codex sent, for the warning that names it. */
  originalType: z.string(),
  /** The whole item as received, for the traffic view. */
  value: z.record(z.string(), z.unknown()),
});

/**
 * A string whose text the lowering copies into the Chat request without reading it: for a large body
 * it may hold placeholders for long strings (outbound/outbound-encoding.ts). Checked as any string;
 * typed so that it can only be copied or joined. The fields where a large body keeps placeholders are
 * listed once, in PASSTHROUGH_FIELDS (outbound/passthrough-text.ts), and each of them is typed so here.
 */
const passthroughTextSchema = z.string() as unknown as z.ZodMiniType<PassthroughText, string>;

// ---------- content parts (messages and tool outputs) ----------

/** `image_url` may be a string or `{ url }`; emptiness is checked by the converter to name the part. */
const inputImagePartSchema = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.nullish(z.union([z.string(), z.looseObject({ url: z.nullish(z.string()) })])),
  detail: z.nullish(z.string()),
});

const inputVideoPartSchema = z.looseObject({
  type: z.literal('input_video'),
  video_url: z.nullish(z.union([z.string(), z.looseObject({ url: z.nullish(z.string()) })])),
});

const inputFilePartSchema = z.looseObject({
  type: z.literal('input_file'),
  filename: z.nullish(z.string()),
});

const refusalPartSchema = z.looseObject({
  type: z.literal('refusal'),
});

/**
 * Codex's sealed payload (a multi-agent task, a tool result). Toward a custom provider Codex writes
 * it as plain text; an OpenAI-encrypted blob cannot be read by any other backend. Not checked here:
 * the converter decides, so it can name the part in its warning.
 */
const encryptedContentPartSchema = z.looseObject({
  type: z.literal('encrypted_content'),
  encrypted_content: z.unknown(),
});

const KNOWN_CONTENT_PART_TYPES: ReadonlySet<string> = new Set([
  'input_text',
  'output_text',
  'text',
  'input_image',
  'input_video',
  'input_file',
  'refusal',
  'encrypted_content',
]);

function createContentPartSchema<Text extends z.ZodMiniType>(text: Text) {
  const textPartSchema = z.looseObject({
    type: z.enum(['input_text', 'output_text', 'text']),
    text,
  });
  return z.preprocess(
    createKindNormaliser(KNOWN_CONTENT_PART_TYPES, 'unknown'),
    z.discriminatedUnion(
      'type',
      [textPartSchema, inputImagePartSchema, inputVideoPartSchema, inputFilePartSchema, refusalPartSchema, encryptedContentPartSchema, unknownKindSchema],
      { error: 'a content part needs a string `type`' },
    ),
  );
}

/** A part of a structured tool output or an agent message: the lowering reads its text. */
export const responsesContentPartSchema = createContentPartSchema(z.string());
/** A part of a message: its text passes through. */
const messagePartSchema = createContentPartSchema(passthroughTextSchema);
export type ResponsesContentPart = z.infer<typeof responsesContentPartSchema>;
export type ResponsesMessagePart = z.infer<typeof messagePartSchema>;

// ---------- tools ----------

function createFunctionToolSchema<Name extends z.ZodMiniType>(name: Name) {
  return z.looseObject({
    type: z.literal('function'),
    name,
    description: z.nullish(z.string()),
    parameters: z.nullish(z.record(z.string(), z.unknown())),
    strict: z.nullish(z.boolean()),
    defer_loading: z.nullish(z.boolean()),
  });
}

/** `{}` and `{"type":"text"}` both mean "no grammar", so `type` is optional. */
const customToolFormatSchema = z.looseObject({
  type: z.nullish(z.string()),
  syntax: z.nullish(z.string()),
  definition: z.nullish(z.string()),
});
export type ResponsesCustomToolFormat = z.infer<typeof customToolFormatSchema>;

function createCustomToolSchema<Name extends z.ZodMiniType>(name: Name) {
  return z.looseObject({
    type: z.literal('custom'),
    name,
    description: z.nullish(z.string()),
    format: z.nullish(customToolFormatSchema),
    defer_loading: z.nullish(z.boolean()),
  });
}

/** Every kind outside the allow-list (web_search, tool_search, mcp …, future kinds) is dropped. */
const hostedToolSchema = z.object({
  type: z.literal('hosted'),
  originalType: z.string(),
  value: z.record(z.string(), z.unknown()),
});

/** Sub-tools without a name are skipped by lowering, so `name` is optional here. */
const namespaceMemberSchema = z.preprocess(
  createKindNormaliser(new Set(['function', 'custom']), 'hosted'),
  z.discriminatedUnion(
    'type',
    [createFunctionToolSchema(z.nullish(z.string())), createCustomToolSchema(z.nullish(z.string())), hostedToolSchema],
    { error: 'a namespace member needs a string `type`' },
  ),
);
export type ResponsesNamespaceMember = z.infer<typeof namespaceMemberSchema>;

const namespaceToolSchema = z.looseObject({
  type: z.literal('namespace'),
  name: z.string(),
  description: z.nullish(z.string()),
  tools: z.array(namespaceMemberSchema),
});

export const responsesToolSchema = z.preprocess(
  createKindNormaliser(new Set(['function', 'custom', 'namespace']), 'hosted'),
  z.discriminatedUnion(
    'type',
    [createFunctionToolSchema(z.string()), createCustomToolSchema(z.string()), namespaceToolSchema, hostedToolSchema],
    { error: 'a tool needs a string `type`' },
  ),
);
export type ResponsesTool = z.infer<typeof responsesToolSchema>;

// ---------- tool_choice ----------

const toolReferenceSchema = z.looseObject({
  type: z.string(),
  name: z.nullish(z.string()),
  namespace: z.nullish(z.string()),
});
export type ResponsesToolReference = z.infer<typeof toolReferenceSchema>;

/** Codex always sends `"auto"`; every other form is handled by the rewrite table. */
export const responsesToolChoiceSchema = z.union([
  z.string(),
  z.looseObject({
    type: z.string(),
    name: z.nullish(z.string()),
    namespace: z.nullish(z.string()),
    mode: z.nullish(z.string()),
    tools: z.nullish(z.array(toolReferenceSchema)),
  }),
]);
export type ResponsesToolChoice = z.infer<typeof responsesToolChoiceSchema>;

// ---------- input items ----------

const messageContentSchema = z.union([passthroughTextSchema, z.array(messagePartSchema)]);

const messageItemSchema = z.looseObject({
  type: z.literal('message'),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: messageContentSchema,
});

const reasoningItemSchema = z.looseObject({
  type: z.literal('reasoning'),
  summary: z.nullish(z.array(z.looseObject({ text: passthroughTextSchema }))),
  content: z.nullish(z.array(z.looseObject({ type: z.string(), text: z.nullish(passthroughTextSchema) }))),
});

const functionCallItemSchema = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  namespace: z.nullish(z.string()),
  /** Replayed verbatim when it is a JSON object, re-wrapped otherwise; absent counts as empty. */
  arguments: z.nullish(z.string()),
});

const customToolCallItemSchema = z.looseObject({
  type: z.literal('custom_tool_call'),
  call_id: z.string(),
  name: z.string(),
  namespace: z.nullish(z.string()),
  input: z.string(),
});

const toolOutputSchema = z.union([passthroughTextSchema, z.array(responsesContentPartSchema)]);

const functionCallOutputItemSchema = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string(),
  output: toolOutputSchema,
});

const customToolCallOutputItemSchema = z.looseObject({
  type: z.literal('custom_tool_call_output'),
  call_id: z.string(),
  output: toolOutputSchema,
});

/** The `use_responses_lite` tool carrier: hoisted out of `input` before anything else. */
const additionalToolsItemSchema = z.looseObject({
  type: z.literal('additional_tools'),
  tools: z.array(responsesToolSchema),
});

const itemReferenceItemSchema = z.looseObject({
  type: z.literal('item_reference'),
  id: z.nullish(z.string()),
});

/**
 * A message between agents of a multi-agent session (`--enable multi_agent_v2`): a child's task,
 * or a child's answer to its parent. `author` and `recipient` are agent paths (`/root`,
 * `/root/calc`); the content parts say the rest.
 */
const agentMessageItemSchema = z.looseObject({
  type: z.literal('agent_message'),
  author: z.nullish(z.string()),
  recipient: z.nullish(z.string()),
  content: z.array(responsesContentPartSchema),
});

/** Changes a setting mid-conversation; only the reasoning effort has a Chat equivalent. */
const configurationUpdateItemSchema = z.looseObject({
  type: z.literal('configuration_update'),
  reasoning: z.nullish(z.looseObject({ effort: z.nullish(z.string()) })),
});

/** Asks an OpenAI-hosted backend to compact the history server side (remote compaction). */
const compactionTriggerItemSchema = z.looseObject({
  type: z.literal('compaction_trigger'),
});

const KNOWN_INPUT_ITEM_TYPES: ReadonlySet<string> = new Set([
  'message',
  'reasoning',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'additional_tools',
  'item_reference',
  'agent_message',
  'configuration_update',
  'compaction_trigger',
]);

/**
 * Hosted-tool call records and other items with no Chat representation. They reach the
 * converter as `unknown` items like any other unknown kind; this list only sharpens the warning text.
 */
export const HOSTED_CALL_ITEM_TYPES: ReadonlySet<string> = new Set([
  'web_search_call',
  'file_search_call',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'computer_call',
  'computer_call_output',
  'local_shell_call',
  'local_shell_call_output',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'image_generation_call',
  'code_interpreter_call',
  'tool_search_call',
  'tool_search_output',
]);

/**
 * Records of a remote (server-side) compaction: an opaque summary only OpenAI's service can read,
 * and the marker of where it happened. They reach the converter as `unknown` items; this list only
 * sharpens the warning text.
 */
export const COMPACTION_RECORD_ITEM_TYPES: ReadonlySet<string> = new Set(['compaction', 'context_compaction']);

export const responsesInputItemSchema = z.preprocess(
  createKindNormaliser(KNOWN_INPUT_ITEM_TYPES, 'unknown', { defaultType: 'message', defaultWhenKey: 'role' }),
  z.discriminatedUnion(
    'type',
    [
      messageItemSchema,
      reasoningItemSchema,
      functionCallItemSchema,
      functionCallOutputItemSchema,
      customToolCallItemSchema,
      customToolCallOutputItemSchema,
      additionalToolsItemSchema,
      itemReferenceItemSchema,
      agentMessageItemSchema,
      configurationUpdateItemSchema,
      compactionTriggerItemSchema,
      unknownKindSchema,
    ],
    { error: 'an input item needs a string `type` (or a `role`, for a message)' },
  ),
);
export type ResponsesInputItem = z.infer<typeof responsesInputItemSchema>;
export type ResponsesMessageItem = z.infer<typeof messageItemSchema>;
export type ResponsesToolOutput = z.infer<typeof toolOutputSchema>;

// ---------- the request ----------

const textFormatSchema = z.looseObject({
  type: z.string(),
  name: z.nullish(z.string()),
  schema: z.nullish(z.record(z.string(), z.unknown())),
  strict: z.nullish(z.boolean()),
});

/*
 * Checked on every request, so compiled: `z.compile` is zod's own fast path for a schema, giving the
 * same output, issues and messages as the schema it compiles, and checks a Codex request in about a
 * third of the time (`npm run bench`). The backend's answers (chat/chat-completions-api.ts) are too.
 */
export const responsesRequestSchema = z.compile(z.looseObject({
  model: z.string().check(z.minLength(1)),
  /** A string is one user message; the converter normalises it. */
  input: z.union([passthroughTextSchema, z.array(responsesInputItemSchema)]),
  /** ≤0.161 only; from 0.162 the same text is `input[0]`. */
  instructions: z.nullish(passthroughTextSchema),
  /** Absent with `use_responses_lite`: the tools then sit in an `additional_tools` input item. */
  tools: z.nullish(z.array(responsesToolSchema)),
  tool_choice: z.nullish(responsesToolChoiceSchema),
  parallel_tool_calls: z.nullish(z.boolean()),
  /** `summary` and `context` are accepted and dropped, so only `effort` is validated. */
  reasoning: z.nullish(z.looseObject({ effort: z.nullish(z.string()) })),
  /** `verbosity` is accepted and dropped. */
  text: z.nullish(z.looseObject({ format: z.nullish(textFormatSchema) })),
  max_output_tokens: z.nullish(z.number().check(z.int(), z.positive())),
  temperature: z.nullish(z.number()),
  top_p: z.nullish(z.number()),
  stream: z.nullish(z.boolean()),
  prompt_cache_key: z.nullish(z.string()),
  previous_response_id: z.nullish(z.string()),
  background: z.nullish(z.boolean()),
}));
export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;

// ---------- parsing with readable errors ----------

type IssuePath = ReadonlyArray<PropertyKey>;

interface IssueLike {
  code?: string;
  path?: IssuePath;
  message: string;
  expected?: string;
  errors?: ReadonlyArray<ReadonlyArray<IssueLike>>;
}

/** `['input', 3, 'call_id']` → `input[3].call_id`, the shape OpenAI uses in `param`. */
export function formatIssuePath(path: IssuePath): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text;
}

/** A loop, not `Math.max(...spread)`: a body with hundreds of thousands of issues would overflow the stack. */
function deepestPathLength(issues: ReadonlyArray<IssueLike>): number {
  let deepest = -1;
  for (const issue of issues) deepest = Math.max(deepest, issue.path?.length ?? 0);
  return deepest;
}

/**
 * The most items `input` may hold. Codex resends the whole history on every turn, one item per
 * message, reasoning step, call and output, and compacts it before the model's context window fills:
 * even a million-token window, at some 30 tokens for the smallest item, holds about 33,000 items, and
 * the benchmark's 10 MB session holds about 3,000. Checked before validation, which costs time and
 * memory per item: a body of a million one-byte items (2 MB) would otherwise hold the bridge for
 * seconds.
 */
export const MAX_INPUT_ITEMS = 100_000;

/**
 * zod's own parse flag (the one `z.validate` sets; not in its public context type): every array and
 * object stops at its first bad member, so a failing body costs at most one walk up to its first
 * problem, and the error holds that problem alone, not one issue per bad item of a huge array. A
 * valid body takes the compiled path as before.
 */
const STOP_AT_FIRST_PROBLEM = { abortEarly: true } as z.core.ParseContext<z.core.$ZodIssue>;

/**
 * A union reports one issue list per option. The option that got furthest into the value (the
 * deepest path) is the one the client meant — `input` as an array, not as a string — so its issues
 * are the readable ones.
 */
function flattenIssues(issues: ReadonlyArray<IssueLike>, prefix: IssuePath): Array<{ path: IssuePath; message: string }> {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...(issue.path ?? [])];
    const branches = issue.errors ?? [];
    if (issue.code === 'invalid_union' && branches.length > 0) {
      const depths = branches.map(deepestPathLength);
      const deepest = depths.reduce((left, right) => Math.max(left, right), -1);
      if (deepest === 0) {
        const expected = branches.map((branch) => branch[0]?.expected).filter((type) => type !== undefined);
        const message = expected.length === branches.length ? `Invalid input: expected ${expected.join(' or ')}` : issue.message;
        return [{ path, message }];
      }
      const chosen = branches[depths.indexOf(deepest)] ?? [];
      return flattenIssues(chosen, path);
    }
    return [{ path, message: issue.message }];
  });
}

function valueAtPath(root: unknown, path: IssuePath): unknown {
  let current: unknown = root;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === 'number') current = current[segment];
    else if (isPlainObject(current) && typeof segment === 'string') current = current[segment];
    else return undefined;
  }
  return current;
}

/**
 * A number too large for a double (`1e400` in a tool's schema) parses to Infinity, which JSON cannot
 * carry: serialised upstream it would silently become `null`, changing what the schema says. Refused
 * instead, naming where it is.
 */
function rejectNonFiniteToolNumbers(tools: unknown): void {
  const path = findNonFiniteNumber(tools);
  if (path === null) return;
  const field = formatIssuePath(['tools', ...path]);
  const value = valueAtPath(tools, path);
  throw new InvalidRequestError(`invalid Responses request: \`${field}\` is a number JSON cannot carry (${String(value)}: too large for a double); it would reach the backend as null`, { param: field });
}

/**
 * The path to the first number JSON cannot carry inside `value`, or null. Tool schemas are walked on
 * every request, so the walk allocates nothing until it finds one.
 */
function findNonFiniteNumber(value: unknown): PropertyKey[] | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : [];
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const inner = findNonFiniteNumber(value[index]);
      if (inner !== null) return [index, ...inner];
    }
  } else if (isPlainObject(value)) {
    // Parsed JSON: plain objects whose own enumerable keys are exactly their members.
    for (const key in value) {
      const inner = findNonFiniteNumber(value[key]);
      if (inner !== null) return [key, ...inner];
    }
  }
  return null;
}

/**
 * Validates a request body. Throws `InvalidRequestError` naming the first offending field
 * (`input[3].call_id`) so Codex prints something a user can act on (HTTP 400 is shown verbatim).
 */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (!isPlainObject(body)) {
    throw new InvalidRequestError('the request body must be a JSON object');
  }
  const input = body['input'];
  if (Array.isArray(input) && input.length > MAX_INPUT_ITEMS) {
    throw new InvalidRequestError(`\`input\` holds ${input.length} items; freeform-bridge accepts at most ${MAX_INPUT_ITEMS} (far more than a long Codex session sends)`, {
      param: 'input',
      code: 'too_many_input_items',
    });
  }
  const result = z.safeParse(responsesRequestSchema, body, STOP_AT_FIRST_PROBLEM);
  if (result.success) {
    rejectNonFiniteToolNumbers(result.data.tools);
    return result.data;
  }
  const problems = flattenIssues(result.error.issues as ReadonlyArray<IssueLike>, []).map((problem) => {
    const field = formatIssuePath(problem.path) || '(body)';
    const missing = problem.path.length > 0 && valueAtPath(body, problem.path) === undefined;
    return { field, text: missing ? `\`${field}\` is missing` : `\`${field}\`: ${problem.message}` };
  });
  const shown = problems.slice(0, 3).map((problem) => problem.text);
  if (problems.length > shown.length) shown.push(`and ${problems.length - shown.length} more`);
  throw new InvalidRequestError(`invalid Responses request: ${shown.join('; ')}`, {
    param: problems[0]?.field ?? null,
    issues: result.error.issues,
  });
}
