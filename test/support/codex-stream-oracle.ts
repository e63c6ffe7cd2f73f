import { isDeepStrictEqual } from 'node:util';

/**
 * A strict checker for the Responses SSE events the bridge emits ("check every emitted
 * stream with an oracle"). Two layers:
 *
 * - `'codex'`: only what Codex 0.171 itself enforces or silently loses: complete
 *   `output_item.done` items, `response.completed.response.id`, a terminal event, no `end_turn:false`,
 *   integer usage, text deltas only inside an added message item, kinds and namespaces per tool. The
 *   reference pack's hand-written `sse/ok_*` streams pass this layer.
 * - `'strict'` (default): the above plus the event protocol we promise:
 *   sequence numbers, `added` before deltas and `done`, output indexes 0,1,2…, deltas that add up to
 *   the done values, the terminal snapshot listing exactly the done items.
 *
 * Modelled on openai-node's ResponseAccumulator, which throws on protocol violations; here they are
 * collected so a test shows all of them at once.
 */

export type CodexStreamProtocol = 'strict' | 'codex';
export type TerminalEventType = 'response.completed' | 'response.incomplete' | 'response.failed';
export type CallItemKind = 'function_call' | 'custom_tool_call';

export interface CodexStreamCheckOptions {
  /** Default `'strict'`; `'codex'` enforces only Codex's own acceptance rules. */
  protocol?: CodexStreamProtocol;
  /**
   * The terminal event the stream must end with. Default `'response.completed'`: the only ending Codex
   * treats as a finished turn (failed/incomplete are "rejected" in sse/INDEX.md). Pass the expected
   * failure type when testing failure paths, or `'any'`.
   */
  expectedTerminal?: TerminalEventType | 'any';
  /** Tool name (bare, as Codex knows it) → the item kind Codex requires for it. */
  expectedKinds?: Record<string, CallItemKind>;
  /** Tool name (bare) → the namespace its calls must carry. */
  namespaces?: Record<string, string>;
  /**
   * call_ids whose `custom_tool_call_input.delta` texts may legitimately stop being a prefix of the
   * done input: malformed arguments where the lifted value wins (warning
   * `input_delta_mismatch`).
   */
  inputDeltaMismatchCallIds?: readonly string[];
}

const TERMINAL_STATUS: Readonly<Record<TerminalEventType, string>> = {
  'response.completed': 'completed',
  'response.incomplete': 'incomplete',
  'response.failed': 'failed',
};

const WHAT_CODEX_DOES_WITH: Readonly<Record<TerminalEventType, string>> = {
  'response.completed': 'Codex finishes the turn',
  'response.incomplete': 'Codex stops with "Incomplete response returned"',
  'response.failed': 'Codex reports the error and retries (or stops on context_length_exceeded)',
};

/** Every event type of the Responses stream the bridge may emit (responses-output.ts plus summaries). */
const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set([
  'response.created',
  'response.in_progress',
  'response.completed',
  'response.incomplete',
  'response.failed',
  'response.output_item.added',
  'response.output_item.done',
  'response.content_part.added',
  'response.content_part.done',
  'response.output_text.delta',
  'response.output_text.done',
  'response.reasoning_text.delta',
  'response.reasoning_text.done',
  'response.reasoning_summary_part.added',
  'response.reasoning_summary_part.done',
  'response.reasoning_summary_text.delta',
  'response.reasoning_summary_text.done',
  'response.function_call_arguments.delta',
  'response.function_call_arguments.done',
  'response.custom_tool_call_input.delta',
  'response.custom_tool_call_input.done',
]);

const KNOWN_ITEM_TYPES: ReadonlySet<string> = new Set(['message', 'reasoning', 'function_call', 'custom_tool_call']);

type JsonObject = Record<string, unknown>;

interface TrackedItem {
  outputIndex: number | null;
  type: string;
  itemId: string | null;
  callId: string | null;
  name: string | null;
  open: boolean;
  contentPartAdded: boolean;
  textDeltas: string;
  textDone: string | null;
  reasoningDeltas: string;
  reasoningDone: string | null;
  argumentDeltas: string;
  argumentsDone: string | null;
  hasArgumentDeltas: boolean;
  inputDeltas: string;
  inputDone: string | null;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function checkCodexStream(events: readonly unknown[], options: CodexStreamCheckOptions = {}): string[] {
  const strict = (options.protocol ?? 'strict') === 'strict';
  const expectedTerminal = options.expectedTerminal ?? 'response.completed';
  const mismatchAllowed = new Set(options.inputDeltaMismatchCallIds ?? []);
  const violations: string[] = [];
  const items: TrackedItem[] = [];
  const doneItems: Array<{ outputIndex: number | null; item: JsonObject }> = [];
  const doneCallIds = new Set<string>();
  let previousSequenceNumber: number | null = null;
  let createdId: string | null = null;
  let createdSeen = false;
  let terminalSeen = false;
  let nextOutputIndex = 0;

  events.forEach((event, position) => {
    const where = (type: string): string => `event ${position} (${type})`;
    if (!isObject(event) || typeof event.type !== 'string') {
      violations.push(`event ${position}: not an object with a string "type"`);
      return;
    }
    const type = event.type;
    const at = where(type);

    if (strict) {
      const sequenceNumber = event.sequence_number;
      if (!isCount(sequenceNumber)) {
        violations.push(`${at}: sequence_number missing or not a non-negative integer`);
      } else {
        if (previousSequenceNumber !== null && sequenceNumber <= previousSequenceNumber) {
          violations.push(`${at}: sequence_number ${sequenceNumber} does not increase (previous ${previousSequenceNumber})`);
        }
        previousSequenceNumber = sequenceNumber;
      }
      if (!KNOWN_EVENT_TYPES.has(type) && type !== 'error') violations.push(`${at}: unknown event type`);
    }
    if (terminalSeen) violations.push(`${at}: event after the terminal event`);

    const findItem = (requiredType: string): TrackedItem | undefined => {
      const outputIndex = event.output_index;
      if (typeof outputIndex === 'number') {
        for (let index = items.length - 1; index >= 0; index -= 1) {
          if (items[index]?.outputIndex === outputIndex) return items[index];
        }
      }
      if (strict) return undefined;
      // Codex does not read output_index: it appends deltas to the active item of that kind.
      for (let index = items.length - 1; index >= 0; index -= 1) {
        const item = items[index];
        if (item?.open && item.type === requiredType) return item;
      }
      return undefined;
    };

    /** The open item of `requiredType` an item-level event belongs to, reporting why not. */
    const requireOpenItem = (requiredType: string, consequence: string): TrackedItem | undefined => {
      if (strict && typeof event.output_index !== 'number') {
        violations.push(`${at}: output_index missing`);
        return undefined;
      }
      const item = findItem(requiredType);
      if (!item || !item.open || item.type !== requiredType) {
        violations.push(`${at}: no open ${requiredType} item${consequence}`);
        return undefined;
      }
      if (strict && item.itemId !== null && event.item_id !== item.itemId) {
        violations.push(`${at}: item_id ${JSON.stringify(event.item_id)} is not the item's id ${JSON.stringify(item.itemId)}`);
      }
      return item;
    };

    const requireString = (field: string): string => {
      const value = event[field];
      if (typeof value === 'string') return value;
      if (strict) violations.push(`${at}: ${field} is not a string`);
      return '';
    };

    switch (type) {
      case 'error':
        violations.push(`${at}: a bare error event — Codex ignores it; send response.failed`);
        break;

      case 'response.created': {
        if (strict && (createdSeen || position !== 0)) violations.push(`${at}: response.created must be the first event, once`);
        createdSeen = true;
        const response = event.response;
        if (isObject(response)) {
          createdId = stringOrNull(response.id);
          checkResponseSnapshot(response, at, strict, violations);
        } else if (strict) {
          violations.push(`${at}: response snapshot missing`);
        }
        break;
      }

      case 'response.in_progress': {
        if (strict && !createdSeen) violations.push(`${at}: response.in_progress before response.created`);
        const response = event.response;
        if (isObject(response)) checkResponseSnapshot(response, at, strict, violations);
        else if (strict) violations.push(`${at}: response snapshot missing`);
        break;
      }

      case 'response.output_item.added': {
        const item = event.item;
        if (!isObject(item) || typeof item.type !== 'string') {
          violations.push(`${at}: item missing or without a type`);
          break;
        }
        const outputIndex = typeof event.output_index === 'number' ? event.output_index : null;
        if (strict) {
          if (outputIndex !== nextOutputIndex) {
            violations.push(`${at}: output_index ${String(event.output_index)}, expected ${nextOutputIndex} (indexes are assigned in order)`);
          }
          checkItemShape(item, at, violations);
          if (item.type === 'function_call' && item.arguments !== '') violations.push(`${at}: an added function_call starts with arguments ""`);
          if (item.type === 'custom_tool_call' && item.input !== '') violations.push(`${at}: an added custom_tool_call starts with input ""`);
          if (item.type === 'message' && !(Array.isArray(item.content) && item.content.length === 0)) {
            violations.push(`${at}: an added message starts with content []`);
          }
          checkKindAndNamespace(item, at, options, violations);
        }
        nextOutputIndex += 1;
        items.push({
          outputIndex,
          type: item.type,
          itemId: stringOrNull(item.id),
          callId: stringOrNull(item.call_id),
          name: stringOrNull(item.name),
          open: true,
          contentPartAdded: false,
          textDeltas: '',
          textDone: null,
          reasoningDeltas: '',
          reasoningDone: null,
          argumentDeltas: '',
          argumentsDone: null,
          hasArgumentDeltas: false,
          inputDeltas: '',
          inputDone: null,
        });
        break;
      }

      case 'response.output_item.done': {
        const item = event.item;
        if (!isObject(item) || typeof item.type !== 'string') {
          violations.push(`${at}: item missing or without a type — Codex cannot store it`);
          break;
        }
        checkItemComplete(item, at, violations);
        checkKindAndNamespace(item, at, options, violations);
        if (strict) checkItemShape(item, at, violations);
        const outputIndex = typeof event.output_index === 'number' ? event.output_index : null;
        const tracked = findDoneTarget(items, event, item, strict);
        if (strict && outputIndex === null) violations.push(`${at}: output_index missing`);
        else if (!tracked || !tracked.open) {
          if (strict) violations.push(`${at}: output_item.done without an open output_item.added at output_index ${String(outputIndex)}`);
        } else {
          tracked.open = false;
          if (strict) compareDoneWithTracked(item, tracked, at, mismatchAllowed, violations);
        }
        const callId = item.call_id;
        if (strict && (item.type === 'function_call' || item.type === 'custom_tool_call') && typeof callId === 'string') {
          if (doneCallIds.has(callId)) violations.push(`${at}: call_id ${callId} used by two calls (Codex matches outputs by call_id)`);
          doneCallIds.add(callId);
        }
        doneItems.push({ outputIndex: outputIndex ?? tracked?.outputIndex ?? null, item });
        break;
      }

      case 'response.content_part.added':
      case 'response.content_part.done': {
        if (!strict) break;
        const item = requireOpenItem('message', '');
        if (item && type === 'response.content_part.added') item.contentPartAdded = true;
        if (item && type === 'response.content_part.done' && isObject(event.part) && event.part.text !== item.textDeltas) {
          violations.push(`${at}: part.text differs from the concatenated output_text deltas`);
        }
        break;
      }

      case 'response.output_text.delta': {
        // Codex's own rule: text outside an added message item is dropped.
        const item = requireOpenItem('message', ' — Codex drops the text ("OutputTextDelta without active item")');
        const delta = requireString('delta');
        if (item) {
          if (strict && !item.contentPartAdded) violations.push(`${at}: output_text.delta before content_part.added`);
          item.textDeltas += delta;
        }
        break;
      }

      case 'response.output_text.done': {
        if (!strict) break;
        const item = requireOpenItem('message', '');
        const text = requireString('text');
        if (item) {
          item.textDone = text;
          if (text !== item.textDeltas) violations.push(`${at}: text differs from the concatenated output_text deltas`);
        }
        break;
      }

      case 'response.reasoning_text.delta':
      case 'response.reasoning_summary_text.delta': {
        if (!strict) break;
        const item = requireOpenItem('reasoning', '');
        const delta = requireString('delta');
        if (item && type === 'response.reasoning_text.delta') item.reasoningDeltas += delta;
        break;
      }

      case 'response.reasoning_text.done': {
        if (!strict) break;
        const item = requireOpenItem('reasoning', '');
        const text = requireString('text');
        if (item) {
          item.reasoningDone = text;
          if (text !== item.reasoningDeltas) violations.push(`${at}: text differs from the concatenated reasoning_text deltas`);
        }
        break;
      }

      case 'response.reasoning_summary_part.added':
      case 'response.reasoning_summary_part.done':
      case 'response.reasoning_summary_text.done':
        if (strict) requireOpenItem('reasoning', '');
        break;

      case 'response.function_call_arguments.delta': {
        if (!strict) break;
        const item = requireOpenItem('function_call', '');
        const delta = requireString('delta');
        if (item) {
          item.argumentDeltas += delta;
          item.hasArgumentDeltas = true;
        }
        break;
      }

      case 'response.function_call_arguments.done': {
        if (!strict) break;
        const item = requireOpenItem('function_call', '');
        const text = requireString('arguments');
        if (item) {
          item.argumentsDone = text;
          if (text !== item.argumentDeltas) violations.push(`${at}: arguments differ from the concatenated deltas`);
        }
        break;
      }

      case 'response.custom_tool_call_input.delta': {
        if (!strict) break;
        const item = requireOpenItem('custom_tool_call', '');
        const delta = requireString('delta');
        if (item) {
          item.inputDeltas += delta;
          if (item.callId !== null && event.call_id !== undefined && event.call_id !== item.callId) {
            violations.push(`${at}: call_id ${JSON.stringify(event.call_id)} is not the item's ${JSON.stringify(item.callId)}`);
          }
        }
        break;
      }

      case 'response.custom_tool_call_input.done': {
        if (!strict) break;
        const item = requireOpenItem('custom_tool_call', '');
        const text = requireString('input');
        if (item) item.inputDone = text;
        break;
      }

      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        terminalSeen = true;
        checkTerminal(event, type, at);
        break;

      default:
        // Unknown types were reported above in strict mode; Codex ignores them.
        break;
    }
  });

  function checkTerminal(event: JsonObject, type: TerminalEventType, at: string): void {
    if (expectedTerminal !== 'any' && type !== expectedTerminal) {
      violations.push(`${at}: the stream ends with ${type}, expected ${expectedTerminal} — ${WHAT_CODEX_DOES_WITH[type]}`);
    }
    const response = event.response;
    if (!isObject(response)) {
      violations.push(`${at}: response missing`);
      return;
    }
    if (!isNonEmptyString(response.id)) {
      if (type === 'response.completed') {
        violations.push(`${at}: response.id missing — Codex fails with "missing field \`id\`" and retries`);
      } else if (strict) {
        violations.push(`${at}: response.id missing`);
      }
    } else if (strict && createdId !== null && response.id !== createdId) {
      violations.push(`${at}: response.id ${response.id} differs from response.created's ${createdId}`);
    }
    if (response.end_turn === false) {
      violations.push(`${at}: end_turn false — Codex re-samples at once`);
    }
    checkUsage(response.usage, at, strict, violations);

    if (strict) {
      if (response.object !== 'response') violations.push(`${at}: response.object is not "response"`);
      if (response.status !== TERMINAL_STATUS[type]) {
        violations.push(`${at}: response.status ${JSON.stringify(response.status)}, expected "${TERMINAL_STATUS[type]}"`);
      }
      if (type === 'response.failed') {
        const error = response.error;
        if (!isObject(error) || !isNonEmptyString(error.code) || typeof error.message !== 'string') {
          violations.push(`${at}: response.error needs a string code and message`);
        }
      }
      if (type === 'response.incomplete') {
        const details = response.incomplete_details;
        if (!isObject(details) || !isNonEmptyString(details.reason)) violations.push(`${at}: incomplete_details.reason missing`);
      }
      checkTerminalOutput(response.output, type, at);
    }

    // A completed turn must have closed everything: an item never `done` is never stored or run. On
    // failed/incomplete an open call is the safe outcome (a cut call must not run).
    if (type === 'response.completed') {
      for (const item of items) {
        if (item.open) {
          const label = item.name ?? item.itemId ?? `output_index ${String(item.outputIndex)}`;
          violations.push(`${at}: ${item.type} ${label} is still open — Codex never stores or runs it`);
        }
      }
    }
  }

  function checkTerminalOutput(output: unknown, type: TerminalEventType, at: string): void {
    if (!Array.isArray(output)) {
      violations.push(`${at}: response.output is not an array`);
      return;
    }
    if (type === 'response.failed' && output.length === 0) return;
    const expected = [...doneItems].sort((left, right) => (left.outputIndex ?? 0) - (right.outputIndex ?? 0)).map((entry) => entry.item);
    if (!isDeepStrictEqual(output, expected)) {
      violations.push(`${at}: response.output does not list the same items as the output_item.done events (${output.length} vs ${expected.length})`);
    }
  }

  if (!terminalSeen) {
    violations.push('stream ends without response.completed/incomplete/failed — Codex: "stream closed before response.completed", retried with the done items in history');
  }
  return violations;
}

/** Throws one Error listing every violation; for tests that expect Codex to accept the stream. */
export function assertCodexAcceptsStream(events: readonly unknown[], options: CodexStreamCheckOptions = {}): void {
  const violations = checkCodexStream(events, options);
  if (violations.length > 0) {
    throw new Error(`Codex stream check failed (${violations.length}):\n- ${violations.join('\n- ')}`);
  }
}

/** Which added item an `output_item.done` closes. Codex mode has no indexes to rely on. */
function findDoneTarget(items: readonly TrackedItem[], event: JsonObject, item: JsonObject, strict: boolean): TrackedItem | undefined {
  const outputIndex = event.output_index;
  const newestFirst = [...items].reverse();
  if (typeof outputIndex === 'number') {
    const byIndex = newestFirst.find((candidate) => candidate.outputIndex === outputIndex);
    if (byIndex || strict) return byIndex;
  }
  if (strict) return undefined;
  const open = newestFirst.filter((candidate) => candidate.open && candidate.type === item.type);
  if (typeof item.id === 'string') {
    const byId = open.find((candidate) => candidate.itemId === item.id);
    if (byId) return byId;
  }
  if (typeof item.call_id === 'string') {
    const byCallId = open.find((candidate) => candidate.callId === item.call_id);
    if (byCallId) return byCallId;
  }
  return open[0];
}

/** A field missing here makes Codex drop the item without any error. */
function checkItemComplete(item: JsonObject, at: string, violations: string[]): void {
  const dropped = ' — Codex drops the item silently';
  switch (item.type) {
    case 'function_call':
      if (!isNonEmptyString(item.call_id)) violations.push(`${at}: function_call without call_id${dropped}`);
      if (!isNonEmptyString(item.name)) violations.push(`${at}: function_call without name${dropped}`);
      if (typeof item.arguments !== 'string') violations.push(`${at}: function_call arguments is not a string${dropped}`);
      break;
    case 'custom_tool_call':
      if (!isNonEmptyString(item.call_id)) violations.push(`${at}: custom_tool_call without call_id${dropped}`);
      if (!isNonEmptyString(item.name)) violations.push(`${at}: custom_tool_call without name${dropped}`);
      if (typeof item.input !== 'string') violations.push(`${at}: custom_tool_call input is not a string${dropped}`);
      break;
    case 'message':
      if (typeof item.role !== 'string') violations.push(`${at}: message without role${dropped}`);
      if (!Array.isArray(item.content)) violations.push(`${at}: message content is not an array${dropped}`);
      break;
    default:
      break;
  }
}

/** The shapes of responses-output.ts that strict mode expects on every item. */
function checkItemShape(item: JsonObject, at: string, violations: string[]): void {
  const type = item.type as string;
  if (!KNOWN_ITEM_TYPES.has(type)) {
    violations.push(`${at}: unknown item type ${type}`);
    return;
  }
  if (!isNonEmptyString(item.id)) violations.push(`${at}: ${type} item without id`);
  if (type === 'message') {
    if (item.role !== 'assistant') violations.push(`${at}: message role is not "assistant"`);
    if (Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isObject(part) || part.type !== 'output_text' || typeof part.text !== 'string') {
          violations.push(`${at}: message content part is not {type:"output_text", text}`);
        }
      }
    }
  }
  if (type === 'reasoning') {
    if (!Array.isArray(item.summary)) violations.push(`${at}: reasoning summary is not an array`);
    if (item.content !== undefined && !Array.isArray(item.content)) violations.push(`${at}: reasoning content is not an array`);
  }
}

function checkKindAndNamespace(item: JsonObject, at: string, options: CodexStreamCheckOptions, violations: string[]): void {
  if (item.type !== 'function_call' && item.type !== 'custom_tool_call') return;
  if (typeof item.name !== 'string') return;
  const name = item.name;
  const expectedKind = options.expectedKinds?.[name];
  if (expectedKind !== undefined && item.type !== expectedKind) {
    violations.push(`${at}: ${name} delivered as ${item.type}, Codex needs ${expectedKind} (it answers "aborted")`);
  }
  const expectedNamespace = options.namespaces?.[name];
  if (expectedNamespace !== undefined && item.namespace !== expectedNamespace) {
    violations.push(
      `${at}: ${name} carries namespace ${JSON.stringify(item.namespace)}, expected "${expectedNamespace}" (Codex: "unsupported call")`,
    );
  }
}

/** Deltas must add up to the value Codex stores. */
function compareDoneWithTracked(item: JsonObject, tracked: TrackedItem, at: string, mismatchAllowed: ReadonlySet<string>, violations: string[]): void {
  if (item.type !== tracked.type) violations.push(`${at}: item type ${String(item.type)} differs from the added ${tracked.type}`);
  if (tracked.itemId !== null && item.id !== tracked.itemId) violations.push(`${at}: item id differs from the added item's`);
  if (tracked.callId !== null && item.call_id !== tracked.callId) violations.push(`${at}: call_id differs from the added item's`);
  if (tracked.name !== null && item.name !== tracked.name) violations.push(`${at}: name differs from the added item's`);
  switch (item.type) {
    case 'function_call': {
      const done = item.arguments;
      if (tracked.hasArgumentDeltas && tracked.argumentDeltas !== done) violations.push(`${at}: arguments differ from the concatenated deltas`);
      if (tracked.argumentsDone !== null && tracked.argumentsDone !== done) violations.push(`${at}: arguments differ from function_call_arguments.done`);
      break;
    }
    case 'custom_tool_call': {
      const done = typeof item.input === 'string' ? item.input : '';
      const callId = typeof item.call_id === 'string' ? item.call_id : '';
      if (!done.startsWith(tracked.inputDeltas) && !mismatchAllowed.has(callId)) {
        violations.push(`${at}: custom_tool_call_input deltas are not a prefix of the done input`);
      }
      if (tracked.inputDone !== null && tracked.inputDone !== done) violations.push(`${at}: input differs from custom_tool_call_input.done`);
      break;
    }
    case 'message': {
      const text = Array.isArray(item.content)
        ? item.content.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('')
        : '';
      if (tracked.textDeltas.length > 0 && text !== tracked.textDeltas) violations.push(`${at}: message text differs from the concatenated deltas`);
      if (tracked.textDone !== null && text !== tracked.textDone) violations.push(`${at}: message text differs from output_text.done`);
      break;
    }
    case 'reasoning': {
      const text = Array.isArray(item.content)
        ? item.content.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('')
        : '';
      if (tracked.reasoningDeltas.length > 0 && text !== tracked.reasoningDeltas) {
        violations.push(`${at}: reasoning text differs from the concatenated deltas`);
      }
      break;
    }
    default:
      break;
  }
}

function checkResponseSnapshot(response: JsonObject, at: string, strict: boolean, violations: string[]): void {
  if (response.end_turn === false) violations.push(`${at}: end_turn false`);
  checkUsage(response.usage, at, strict, violations);
  if (strict && !isNonEmptyString(response.id)) violations.push(`${at}: response.id missing`);
}

/**
 * Codex parses usage counts as integers inside optional detail objects:
 * `null` counts fail the whole event. Strict mode also rejects `null` objects (omit them instead).
 */
function checkUsage(usage: unknown, at: string, strict: boolean, violations: string[]): void {
  if (usage === undefined) return;
  if (usage === null) {
    if (strict) violations.push(`${at}: usage is null (omit it instead)`);
    return;
  }
  if (!isObject(usage)) {
    violations.push(`${at}: usage is not an object`);
    return;
  }
  for (const field of ['input_tokens', 'output_tokens', 'total_tokens']) {
    if (!isCount(usage[field])) violations.push(`${at}: usage.${field} is not a non-negative integer`);
  }
  const details: Array<[string, string]> = [
    ['input_tokens_details', 'cached_tokens'],
    ['output_tokens_details', 'reasoning_tokens'],
  ];
  for (const [objectName, field] of details) {
    const detail = usage[objectName];
    if (detail === undefined) continue;
    if (detail === null) {
      if (strict) violations.push(`${at}: usage.${objectName} is null (omit it instead)`);
      continue;
    }
    if (!isObject(detail) || !isCount(detail[field])) violations.push(`${at}: usage.${objectName}.${field} is not a non-negative integer`);
  }
}
