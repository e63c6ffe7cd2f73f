import { isDeepStrictEqual } from 'node:util';
import { GRAMMAR_ENFORCEMENT_OFF, type BridgeOptions, type GrammarEnforcement } from '../bridge-options.ts';
import type { ChatCustomTool, ChatFunctionTool, ChatRequest, ChatTool } from '../chat/chat-completions-api.ts';
import { InvalidRequestError } from '../errors.ts';
import { compileGrammarToPattern } from '../grammar/grammar-to-pattern.ts';
import type { ResponsesCustomToolFormat, ResponsesNamespaceMember, ResponsesTool } from '../responses/responses-request.ts';
import { NAMESPACE_SEPARATOR, toWireName, type ToolMap, type ToolMapEntry } from '../tool-map.ts';
import { createWarning } from '../warnings.ts';
import { createPendingWarning, type PendingWarning } from './pending-warning.ts';
import type { ToolSummary } from './tool-summary.ts';

/** Renders a compact valid payload for a grammar, or null (BridgeOptions.grammarExamples). */
export type GrammarExampleRenderer = (toolName: string, grammar: { syntax: string; definition: string }) => string | null;

/** One tool as Codex declared it, top level or inside an `additional_tools` carrier. */
export interface ToolDeclaration {
  tool: ResponsesTool;
  source: 'tools' | 'additional_tools';
  /** Where it sits in the request, for error messages: `tools[3]`, `input[0].tools[1]`. */
  path: string;
}


export interface LoweredToolRecord extends ToolSummary {
  /** What goes upstream; null when dropped. */
  chatTool: ChatTool | null;
  mapEntry: ToolMapEntry | null;
}

export interface LowerToolsResult {
  value: LoweredToolRecord[];
  warnings: PendingWarning[];
}

/** The tools of these records that go upstream, in order. */
export function collectChatTools(records: readonly LoweredToolRecord[]): ChatTool[] {
  return records.flatMap((record) => (record.chatTool ? [record.chatTool] : []));
}

/** Wire name → tool, for the records that go upstream. */
export function createToolMap(records: readonly LoweredToolRecord[]): Map<string, ToolMapEntry> {
  return new Map(records.flatMap((record) => (record.mapEntry ? [[record.mapEntry.wireName, record.mapEntry] as const] : [])));
}

/** LM Studio rejects `{}`, so a missing schema becomes an empty object schema. */
export const EMPTY_PARAMETERS_SCHEMA: Readonly<Record<string, unknown>> = Object.freeze({ type: 'object', properties: {} });

type FunctionMember = Extract<ResponsesNamespaceMember, { type: 'function' }>;
type CustomMember = Extract<ResponsesNamespaceMember, { type: 'custom' }>;
type HostedMember = Extract<ResponsesNamespaceMember, { type: 'hosted' }>;

/** A top-level tool or namespace member, before lowering. */
interface ToolCandidate {
  member: ResponsesNamespaceMember | Extract<ResponsesTool, { type: 'namespace' }>;
  namespace: string | null;
  source: 'tools' | 'additional_tools';
  path: string;
}

interface CandidateResult {
  record: LoweredToolRecord;
  warnings: PendingWarning[];
}

function displayName(namespace: string | null, name: string): string {
  return namespace === null ? name : `${namespace}.${name}`;
}

function expandDeclarations(declarations: readonly ToolDeclaration[]): ToolCandidate[] {
  return declarations.flatMap((declaration): ToolCandidate[] => {
    const { tool, source, path } = declaration;
    if (tool.type !== 'namespace') return [{ member: tool, namespace: null, source, path }];
    // The namespace's own description is dropped: Chat has no place for it.
    return tool.tools.map((member, index) => ({ member, namespace: tool.name, source, path: `${path}.tools[${index}]` }));
  });
}

function createWireName(namespace: string | null, name: string): { wireName: string; warnings: PendingWarning[] } {
  const wireName = toWireName(namespace, name);
  const joined = namespace === null ? name : `${namespace}${NAMESPACE_SEPARATOR}${name}`;
  if (wireName === joined) return { wireName, warnings: [] };
  const warning = createWarning(
    'tool_name_shortened',
    `tool name '${joined}' is longer than the 64 characters backends accept; it is sent as '${wireName}' and restored on the way back`,
    { tool: name },
  );
  return { wireName, warnings: [createPendingWarning(warning, { key: `tool_name_shortened:${wireName}`, fingerprint: joined })] };
}

function rejectDeferredLoading(member: FunctionMember | CustomMember, name: string, path: string): void {
  if (member.defer_loading === true) {
    throw new InvalidRequestError(
      `tool '${name}' (${path}) sets defer_loading: true, which has no Chat Completions equivalent`,
      { param: `${path}.defer_loading` },
    );
  }
}

function createDroppedRecord(candidate: ToolCandidate, name: string, kind: string, reason: string): LoweredToolRecord {
  return {
    name,
    namespace: candidate.namespace,
    kind,
    source: candidate.source,
    disposition: 'dropped',
    wireName: null,
    reason,
    chatTool: null,
    mapEntry: null,
  };
}

// ---------- function tools ----------

export function convertFunctionTool(member: FunctionMember, wireName: string): ChatFunctionTool {
  const parameters = member.parameters && Object.keys(member.parameters).length > 0 ? member.parameters : { ...EMPTY_PARAMETERS_SCHEMA };
  // `strict` is dropped on purpose: engines treat it differently from OpenAI; null keys are dropped.
  const chatFunction: ChatFunctionTool['function'] =
    typeof member.description === 'string'
      ? { name: wireName, description: member.description, parameters }
      : { name: wireName, parameters };
  return { type: 'function', function: chatFunction };
}

// ---------- custom tools ----------

export interface BridgedCustomTool {
  chatTool: ChatFunctionTool;
  grammar: { syntax: string; definition: string } | null;
  /** The grammar went out as an engine-enforced pattern. */
  enforced: boolean;
  warnings: PendingWarning[];
}

/** The first line of a bridged tool's note on `input`; its grammar sentence follows on the next line. */
const INPUT_NOTE = 'In this interface the free-form text goes in the string argument `input`, unchanged.';
const GRAMMAR_SENTENCE = '\nIt must match ';
const ENFORCED = '(the server enforces it):\n';
const NOT_ENFORCED = '(the server does not enforce it):\n';

function fenceGrammar(syntax: string, definition: string): string {
  const closingBreak = definition.endsWith('\n') ? '' : '\n';
  return `\`\`\`${syntax}\n${definition}${closingBreak}\`\`\``;
}

/**
 * The bridged function's description: the tool owner's text verbatim (never truncated: `exec`
 * carries the nested-tool catalogue), then a neutral sentence about `input` and the grammar. We do
 * not tell the model to escape anything: XML-style parsers (Qwen) take the value raw.
 */
export function bridgeCustomTool(
  member: CustomMember,
  name: string,
  namespace: string | null,
  wireName: string,
  renderExample: GrammarExampleRenderer | null = null,
  enforcement: GrammarEnforcement = GRAMMAR_ENFORCEMENT_OFF,
): BridgedCustomTool {
  const warnings: PendingWarning[] = [];
  const shownName = displayName(namespace, name);
  let description = member.description ?? '';
  if (description.trim() === '') {
    description = `Free-form tool \`${wireName}\`. Put the complete raw text in the \`input\` argument.`;
    warnings.push(
      createPendingWarning(
        createWarning('custom_description_missing', `custom tool '${shownName}' has no description; the bridge sent a generic one`, { tool: name }),
        { key: `custom_description_missing:${wireName}`, fingerprint: '' },
      ),
    );
  }
  const appendix = [INPUT_NOTE];
  const grammar = readGrammar(member.format, name, shownName, wireName, warnings);
  const pattern = grammar === null ? null : enginePattern(grammar, enforcement, name, shownName, wireName, warnings);
  if (grammar !== null) {
    const label = grammar.syntax === '' ? 'this grammar' : `this ${grammar.syntax} grammar`;
    appendix.push(`It must match ${label} ${pattern === null ? NOT_ENFORCED : ENFORCED}${fenceGrammar(grammar.syntax, grammar.definition)}`);
    // Small models follow an example far better than a grammar; only examples verified
    // against the grammar actually sent are offered.
    const example = renderExample?.(name, grammar) ?? null;
    if (example !== null) appendix.push(`A complete, valid \`input\` value (raw text, nothing around it):\n${fenceGrammar('text', example)}`);
  }
  const input: Record<string, unknown> = { type: 'string', description: `Raw free-form input for the \`${wireName}\` tool.` };
  if (pattern !== null) input.pattern = pattern;
  const chatTool: ChatFunctionTool = {
    type: 'function',
    function: {
      name: wireName,
      description: `${description}\n\n${appendix.join('\n')}`,
      parameters: { type: 'object', properties: { input }, required: ['input'], additionalProperties: false },
    },
  };
  // vLLM and SGLang constrain `auto` tool calls only for functions marked strict.
  if (pattern !== null && enforcement.enforced && enforcement.strict) chatTool.function.strict = true;
  return { chatTool, grammar, enforced: pattern !== null, warnings };
}

/**
 * The lowered request as it would be lowered with grammar enforcement off, for an engine that refused
 * a pattern: each tool whose grammar went out as a pattern (`enforcedPattern` in the tool map) loses
 * it and the `strict` flag that came with it, and its description says the grammar is not enforced.
 * Only the tools that change are copied; the request given is left as it is (it was sent, and the
 * traffic panel may still read it).
 */
export function withoutEnginePatterns(request: ChatRequest, toolMap: ToolMap): ChatRequest {
  if (request.tools === undefined) return request;
  const enforced = (tool: ChatTool): tool is ChatFunctionTool => tool.type === 'function' && toolMap.get(tool.function.name)?.enforcedPattern === true;
  return { ...request, tools: request.tools.map((tool) => (enforced(tool) ? withoutEnginePattern(tool) : tool)) };
}

function withoutEnginePattern(tool: ChatFunctionTool): ChatFunctionTool {
  const properties = tool.function.parameters.properties as Record<string, Record<string, unknown>> | undefined;
  const input = properties?.input;
  if (input === undefined || !('pattern' in input)) return tool;
  const { pattern: _pattern, ...plainInput } = input;
  const { strict: _strict, ...plainFunction } = tool.function;
  const description = plainFunction.description ?? '';
  const sentence = description.indexOf(`${INPUT_NOTE}${GRAMMAR_SENTENCE}`);
  const note = sentence === -1 ? -1 : description.indexOf(ENFORCED, sentence + INPUT_NOTE.length + GRAMMAR_SENTENCE.length);
  const plainDescription = note === -1 ? description : `${description.slice(0, note)}${NOT_ENFORCED}${description.slice(note + ENFORCED.length)}`;
  return {
    ...tool,
    function: { ...plainFunction, description: plainDescription, parameters: { ...plainFunction.parameters, properties: { ...properties, input: plainInput } } },
  };
}

/**
 * The grammar as the engine pattern when enforcement is on and the grammar can be written as one;
 * either way one line per tool says which it is and why (`grammar_enforced` or
 * `grammar_not_enforced`: checked after generation).
 */
function enginePattern(grammar: { syntax: string; definition: string }, enforcement: GrammarEnforcement, name: string, shownName: string, wireName: string, warnings: PendingWarning[]): string | null {
  let pattern: string | null = null;
  let reason = enforcement.reason;
  if (enforcement.enforced) {
    const compiled = compileGrammarToPattern(grammar, enforcement.form);
    if (compiled.success) pattern = compiled.pattern;
    else reason = `its grammar cannot be sent as a pattern: ${compiled.reason}`;
  }
  const syntaxWords = grammar.syntax === '' ? 'a grammar' : `a ${grammar.syntax} grammar`;
  const warning =
    pattern === null
      ? createWarning('grammar_not_enforced', `custom tool '${shownName}' declares ${syntaxWords}: checked after generation, not enforced by the engine (${reason})`, { tool: name })
      : createWarning('grammar_enforced', `custom tool '${shownName}': grammar enforced by the engine (${reason})`, { tool: name });
  // Shown again only when the grammar text or the decision changes: Codex resends the same tools every request.
  warnings.push(createPendingWarning(warning, { key: `${warning.kind}:${wireName}`, fingerprint: `${grammar.syntax}\n${grammar.definition}\n${reason}` }));
  return pattern;
}

function readGrammar(
  format: ResponsesCustomToolFormat | null | undefined,
  name: string,
  shownName: string,
  wireName: string,
  warnings: PendingWarning[],
): { syntax: string; definition: string } | null {
  if (!format || format.type === undefined || format.type === null || format.type === 'text') return null;
  if (format.type === 'grammar' && typeof format.definition === 'string') {
    const syntax = format.syntax ?? '';
    const grammar = { syntax, definition: format.definition };
    return grammar;
  }
  const what = format.type === 'grammar' ? 'a grammar format without a definition' : `format type '${format.type}'`;
  warnings.push(
    createPendingWarning(
      createWarning('unknown_format_type', `custom tool '${shownName}' declares ${what}; the bridge ignores it`, { tool: name }),
      { key: `unknown_format_type:${wireName}`, fingerprint: format.type ?? '' },
    ),
  );
  return null;
}

/** The Chat-native free-form form, only for backends that accept it (OpenAI). */
export function passCustomToolThrough(member: CustomMember, wireName: string): ChatCustomTool {
  const custom: ChatCustomTool['custom'] = { name: wireName };
  if (typeof member.description === 'string') custom.description = member.description;
  if (member.format) custom.format = { ...member.format };
  return { type: 'custom', custom };
}

function readGrammarQuietly(format: ResponsesCustomToolFormat | null | undefined): { syntax: string; definition: string } | null {
  if (format?.type === 'grammar' && typeof format.definition === 'string') {
    return { syntax: format.syntax ?? '', definition: format.definition };
  }
  return null;
}

// ---------- one candidate ----------

function lowerCandidate(candidate: ToolCandidate, options: BridgeOptions, renderExample: GrammarExampleRenderer | null): CandidateResult {
  const { member, namespace } = candidate;
  switch (member.type) {
    case 'namespace':
      // Namespaces inside namespaces do not occur in Codex and cannot be flattened unambiguously.
      return dropUnsupportedKind(candidate, member.name, 'namespace', 'a namespace nested inside a namespace');
    case 'hosted':
      return dropHostedTool(candidate, member);
    case 'function': {
      const name = member.name;
      if (!name) return { record: createDroppedRecord(candidate, '', 'function', 'namespace member without a name'), warnings: [] };
      rejectDeferredLoading(member, name, candidate.path);
      const { wireName, warnings } = createWireName(namespace, name);
      const chatTool = convertFunctionTool(member, wireName);
      return {
        record: {
          name,
          namespace,
          kind: 'function',
          source: candidate.source,
          disposition: 'lowered',
          wireName,
          reason: null,
          chatTool,
          mapEntry: { wireName, name, namespace, kind: 'function', grammar: null },
        },
        warnings,
      };
    }
    case 'custom': {
      const name = member.name;
      if (!name) return { record: createDroppedRecord(candidate, '', 'custom', 'namespace member without a name'), warnings: [] };
      rejectDeferredLoading(member, name, candidate.path);
      const { wireName, warnings } = createWireName(namespace, name);
      if (options.dropCustomTools) {
        const warning = createWarning(
          'custom_tool_dropped',
          `custom tool '${displayName(namespace, name)}' was dropped because dropCustomTools is on`,
          { tool: name },
        );
        return {
          record: createDroppedRecord(candidate, name, 'custom', 'dropCustomTools is on'),
          warnings: [createPendingWarning(warning, { key: `custom_tool_dropped:${wireName}`, fingerprint: '' })],
        };
      }
      return lowerCustomCandidate(candidate, member, name, wireName, warnings, options, renderExample);
    }
    default: {
      const unreachable: never = member;
      throw new Error(`unhandled tool kind ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Code mode lists its nested tools in the `exec` description as TypeScript declarations. */
function declaresApplyPatchHelper(member: CustomMember): boolean {
  return typeof member.description === 'string' && member.description.includes('apply_patch(input: string)');
}

function lowerCustomCandidate(
  candidate: ToolCandidate,
  member: CustomMember,
  name: string,
  wireName: string,
  nameWarnings: PendingWarning[],
  options: BridgeOptions,
  renderExample: GrammarExampleRenderer | null,
): CandidateResult {
  const { namespace, source } = candidate;
  switch (options.strategy) {
    case 'function_bridge': {
      const bridged = bridgeCustomTool(member, name, namespace, wireName, renderExample, options.grammarEnforcement);
      return {
        record: {
          name,
          namespace,
          kind: 'custom',
          source,
          disposition: 'bridged',
          wireName,
          reason: null,
          chatTool: bridged.chatTool,
          mapEntry: {
            wireName,
            name,
            namespace,
            kind: 'custom',
            grammar: bridged.grammar,
            ...(declaresApplyPatchHelper(member) ? { execAppliesPatches: true } : {}),
            ...(bridged.enforced ? { enforcedPattern: true as const } : {}),
          },
        },
        warnings: [...nameWarnings, ...bridged.warnings],
      };
    }
    case 'passthrough':
      return {
        record: {
          name,
          namespace,
          kind: 'custom',
          source,
          disposition: 'passthrough',
          wireName,
          reason: null,
          chatTool: passCustomToolThrough(member, wireName),
          mapEntry: { wireName, name, namespace, kind: 'custom', grammar: readGrammarQuietly(member.format) },
        },
        warnings: nameWarnings,
      };
    default: {
      const unreachable: never = options.strategy;
      throw new Error(`unhandled custom tool strategy ${String(unreachable)}`);
    }
  }
}

function dropHostedTool(candidate: ToolCandidate, member: HostedMember): CandidateResult {
  const kind = member.originalType;
  const declaredName = member.value['name'] ?? member.value['server_label'];
  const name = typeof declaredName === 'string' && declaredName !== '' ? declaredName : kind;
  const reason =
    kind === 'tool_search'
      ? // Seeing it means Codex was not run with the bridge's catalog: the fix is the profile, not the bridge.
        "client tool search is not lowered: Codex declares it only for a model whose catalog entry sets supports_search_tool (every built-in OpenAI model name does) and then hides every MCP tool behind it, so the model sees no MCP tool; use the bridge's profile or catalog (freeform-bridge codex-config, or Write Codex Config in VS Code), whose model entry leaves supports_search_tool unset"
      : `hosted tool kind '${kind}' cannot run on a Chat Completions backend`;
  const warning = createWarning('hosted_tool_dropped', `${reason}; '${kind}' tools are dropped (shown once per process)`, { tool: name });
  return {
    record: createDroppedRecord(candidate, name, kind, reason),
    // Codex sends web_search on every default request: one visible warning per kind is enough.
    warnings: [createPendingWarning(warning, { key: `hosted_tool_dropped:${kind}`, fingerprint: '' })],
  };
}

function dropUnsupportedKind(candidate: ToolCandidate, name: string, kind: string, what: string): CandidateResult {
  const reason = `${what} cannot be lowered`;
  const warning = createWarning('hosted_tool_dropped', `${reason}; '${displayName(candidate.namespace, name)}' was dropped`, { tool: name });
  return {
    record: createDroppedRecord(candidate, name, kind, reason),
    warnings: [createPendingWarning(warning, { key: `hosted_tool_dropped:${kind}`, fingerprint: '' })],
  };
}

// ---------- collisions ----------

function throwCollision(message: string): never {
  throw new InvalidRequestError(message, { param: 'tools', code: 'tool_name_collision' });
}

/**
 * Lifting decides "custom or function?" and restores the namespace from the wire name alone, so
 * every wire name must stand for exactly one tool. Identical re-declarations (top level and a
 * carrier) are harmless and de-duplicated; anything else is a 400 before any backend call.
 */
function checkCollision(existing: LoweredToolRecord, record: LoweredToolRecord, wireName: string): 'duplicate' {
  if (existing.kind !== record.kind) {
    throwCollision(
      `tool name '${wireName}' is declared both as a function tool and as a custom tool; the function bridge cannot tell their calls apart`,
    );
  }
  if (existing.namespace !== record.namespace || existing.name !== record.name) {
    throwCollision(
      `tool name '${wireName}' is declared both as '${displayName(existing.namespace, existing.name)}' and as '${displayName(record.namespace, record.name)}'; the function bridge cannot tell their calls apart`,
    );
  }
  if (!isDeepStrictEqual(existing.chatTool, record.chatTool)) {
    throwCollision(
      `tool name '${wireName}' is declared twice with different definitions; the function bridge cannot tell their calls apart`,
    );
  }
  return 'duplicate';
}

// ---------- entry ----------

/**
 * Lowers every declared tool: functions pass, custom tools are bridged or passed through
 * per strategy, namespaces are flattened keeping each member's kind, hosted kinds are dropped.
 * Throws `InvalidRequestError` for name collisions and `defer_loading: true`.
 */
export function lowerTools(
  declarations: readonly ToolDeclaration[],
  options: BridgeOptions,
  renderExample: GrammarExampleRenderer | null = null,
): LowerToolsResult {
  const records: LoweredToolRecord[] = [];
  const warnings: PendingWarning[] = [];
  const byWireName = new Map<string, LoweredToolRecord>();
  for (const candidate of expandDeclarations(declarations)) {
    const result = lowerCandidate(candidate, options, renderExample);
    const { record } = result;
    if (record.wireName !== null && record.chatTool !== null) {
      const existing = byWireName.get(record.wireName);
      if (existing) {
        checkCollision(existing, record, record.wireName);
        records.push({ ...record, disposition: 'dropped', wireName: null, reason: 'duplicate of an identical declaration', chatTool: null, mapEntry: null });
        continue;
      }
      byWireName.set(record.wireName, record);
    }
    records.push(record);
    warnings.push(...result.warnings);
  }
  return { value: records, warnings };
}
