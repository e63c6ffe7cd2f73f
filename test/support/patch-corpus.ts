import { readFileSync } from 'node:fs';
import { isPlainObject, parseJson } from '../../src/core/parse-json.ts';
import type { ResponsesStreamEvent } from '../../src/core/responses/responses-output.ts';
import { ChatStreamTranslator } from '../../src/core/stream/chat-stream-to-responses-events.ts';
import type { ToolMap } from '../../src/core/tool-map.ts';
import type { BridgeWarning } from '../../src/core/warnings.ts';
import { fixturePath } from './fixtures.ts';

/*
 * The malformed apply_patch corpus (test/fixtures/patch-corpus/corpus.json) and one way to run a case
 * through the bridge's stream translator as a mock engine would stream it: the call's arguments in
 * two fragments, then the finish chunk with the case's finish reason.
 */

export type CorpusClass = 'safe' | 'risky' | 'never' | 'as_written';

export interface CorpusCase {
  id: string;
  source: string;
  class: CorpusClass;
  /** `exec`: the text is a code-mode exec body; absent: an apply_patch call. */
  tool?: 'exec';
  note: string;
  finish_reason: string;
  arguments: string;
  files: Record<string, string>;
  expected_files: Record<string, string> | null;
}

export interface CorpusRun {
  /**
   * The patch text Codex's apply_patch receives, or null when the call was refused. For an exec body
   * that became the apply_patch helper call, the helper's argument; any other exec body is delivered
   * as JavaScript, which no patch parser accepts.
   */
  delivered: string | null;
  /** What the streamed deltas spelt before the done event. */
  streamed: string;
  warnings: readonly BridgeWarning[];
}

export function readPatchCorpus(): CorpusCase[] {
  const parsed = parseJson(readFileSync(fixturePath('patch-corpus', 'corpus.json'), 'utf8'));
  if (!parsed.success || !isPlainObject(parsed.value) || !Array.isArray(parsed.value.cases)) throw new Error('corpus.json is malformed');
  return parsed.value.cases as CorpusCase[];
}

function readApplyPatchGrammar(): { syntax: string; definition: string } {
  const parsed = parseJson(readFileSync(fixturePath('captures', 'b_freeform_apply_patch_gpt-5.5_v0.171.req1.json'), 'utf8'));
  if (!parsed.success || !isPlainObject(parsed.value) || !Array.isArray(parsed.value.tools)) throw new Error('capture is malformed');
  const tool = parsed.value.tools.find((candidate) => isPlainObject(candidate) && candidate.name === 'apply_patch');
  if (!isPlainObject(tool) || !isPlainObject(tool.format)) throw new Error('the capture declares no apply_patch grammar');
  return { syntax: String(tool.format.syntax), definition: String(tool.format.definition) };
}

const TOOL_MAP: ToolMap = new Map([
  ['apply_patch', { wireName: 'apply_patch', name: 'apply_patch', namespace: null, kind: 'custom', grammar: readApplyPatchGrammar() }],
  // Code mode's exec grammar accepts any text (a pragma line, then anything), so it is left out here.
  ['functions__exec', { wireName: 'functions__exec', name: 'exec', namespace: 'functions', kind: 'custom', grammar: null, execAppliesPatches: true }],
]);
/** What the bridge writes when an exec body was a patch: the helper call with the patch as a JSON string literal. */
const HELPER_CALL = /^text\(await tools\.apply_patch\(("(?:[^"\\]|\\.)*")\)\);\n$/s;

export function runCorpusCase(corpusCase: CorpusCase, grammarRepair: boolean): CorpusRun {
  const translator = new ChatStreamTranslator({ responseId: 'resp_corpus', model: 'mock-engine', createdAt: 1779158289, toolMap: TOOL_MAP, grammarRepair });
  const half = Math.floor(corpusCase.arguments.length / 2);
  const chunk = (delta: Record<string, unknown>, finishReason: string | null) => ({
    id: 'chatcmpl-corpus',
    object: 'chat.completion.chunk' as const,
    created: 1779158289,
    model: 'mock-engine',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const wireName = corpusCase.tool === 'exec' ? 'functions__exec' : 'apply_patch';
  const events: ResponsesStreamEvent[] = [...translator.start()];
  events.push(...translator.push(chunk({ tool_calls: [{ index: 0, id: 'call_corpus', type: 'function', function: { name: wireName, arguments: corpusCase.arguments.slice(0, half) } }] }, null)));
  events.push(...translator.push(chunk({ tool_calls: [{ index: 0, function: { arguments: corpusCase.arguments.slice(half) } }] }, null)));
  events.push(...translator.push(chunk({}, corpusCase.finish_reason)));
  events.push(...translator.finish());
  let delivered: string | null = null;
  let streamed = '';
  for (const event of events) {
    if (event.type === 'response.custom_tool_call_input.delta') streamed += event.delta;
    if (event.type === 'response.output_item.done' && event.item.type === 'custom_tool_call') delivered = event.item.input;
  }
  const helperArgument = corpusCase.tool === 'exec' && delivered !== null ? HELPER_CALL.exec(delivered)?.[1] : undefined;
  if (helperArgument !== undefined) delivered = JSON.parse(helperArgument) as string;
  return { delivered, streamed, warnings: translator.warnings };
}

/**
 * The bridge changed the payload into something Codex accepts and said so: `grammar_repaired`, or the
 * lift's own one-reading fixes (a renamed key such as {"patch": …}, a JSON string holding the object).
 * A change that still ends in a `grammar_mismatch` rescued nothing.
 */
export function isRepairReported(run: CorpusRun): boolean {
  const kinds = run.warnings.map((warning) => warning.kind);
  if (kinds.includes('grammar_mismatch')) return false;
  return kinds.includes('grammar_repaired') || kinds.includes('missing_key') || kinds.includes('double_encoded');
}
