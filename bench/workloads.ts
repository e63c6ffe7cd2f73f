/**
 * The requests the benchmark sends: a realistic Codex turn (~50 kB: base prompt, the real tool list
 * with apply_patch's Lark grammar, a few turns of history) and long sessions of 2 MB and 10 MB built
 * from the same kind of turns. Everything is deterministic so runs compare.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createRandom } from '../harness/deterministic-random.ts';
import { encodeAnswerMarker, type AnswerName } from './answers.ts';

/** Codex 0.171 with apply_patch as a free-form tool: real tools, grammar and metadata (a recording under test/fixtures/captures). */
const BASE_CAPTURE = resolve(__dirname, '../test/fixtures/captures/b_freeform_apply_patch_qwen3-coder_via_model_catalog_json_v0.171.req2.json');
/** The captured base prompt was replaced by a placeholder naming its length. */
const BASE_PROMPT_CHARACTERS = 16_979;

type JsonObject = Record<string, unknown>;


const WORDS = (
  'the a of to in is for on with that by this be are from as it at an or file tool patch model request ' +
  'response stream history function call input output token user assistant shell command workspace test ' +
  'build error warning change update read write line code run check type value option config server client'
).split(' ');

function pick<T>(random: () => number, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)] as T;
}

/** Markdown-ish prose, like the base prompt and reasoning. */
function createProse(random: () => number, characters: number): string {
  const lines: string[] = [];
  let length = 0;
  while (length < characters) {
    const words = Array.from({ length: 8 + Math.floor(random() * 14) }, () => pick(random, WORDS));
    const sentence = `${random() < 0.2 ? '- ' : ''}${words.join(' ')}.`;
    lines.push(sentence);
    length += sentence.length + 1;
  }
  return lines.join('\n').slice(0, characters);
}

/** Source-code-like text: quotes, backslashes, tabs and some non-ASCII, so JSON escaping is exercised. */
function createSource(random: () => number, characters: number): string {
  const templates = [
    (word: string, number: number) => `export function ${word}Handler${number}(input: string): string {`,
    (word: string) => `  const value = "${word} \\"quoted\\" — café";`,
    (word: string, number: number) => `\tif (value.length > ${number}) return '${word}\\n';`,
    (word: string) => `  // ${word}: naïve résumé → ✓ handled`,
    () => '  return value.replace(/\\s+/g, " ");',
    () => '}',
  ];
  const lines: string[] = [];
  let length = 0;
  for (let index = 0; length < characters; index++) {
    const line = (templates[index % templates.length] as (word: string, number: number) => string)(pick(random, WORDS), Math.floor(random() * 1000));
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join('\n').slice(0, characters);
}

function message(role: 'user' | 'assistant' | 'developer', text: string, id: string): JsonObject {
  return { type: 'message', id, role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }] };
}

/**
 * One agent turn as Codex replays it: user ask, reasoning, an exec_command call and its output (a file
 * read), an apply_patch call and its output, the assistant's reply.
 */
function createHistoryTurn(random: () => number, turnNumber: number, fileCharacters: number): JsonObject[] {
  const callId = `call_bench_${turnNumber}`;
  const patchCallId = `call_bench_patch_${turnNumber}`;
  const fileName = `src/module-${turnNumber}.ts`;
  const patchLines = createSource(random, Math.min(1_500, Math.floor(fileCharacters / 6)))
    .split('\n')
    .map((line) => `+${line}`)
    .join('\n');
  return [
    message('user', `Please look at ${fileName} and fix the failing test (${createProse(random, 120)})`, `msg_bench_user_${turnNumber}`),
    {
      type: 'reasoning',
      id: `rs_bench_${turnNumber}`,
      summary: [],
      content: [{ type: 'reasoning_text', text: createProse(random, 600) }],
      encrypted_content: null,
    },
    {
      type: 'function_call',
      id: `fc_bench_${turnNumber}`,
      status: 'completed',
      name: 'exec_command',
      arguments: JSON.stringify({ cmd: `sed -n 1,400p ${fileName}`, yield_time_ms: 1000 }),
      call_id: callId,
    },
    {
      type: 'function_call_output',
      id: `fco_bench_${turnNumber}`,
      call_id: callId,
      output: `Chunk ID: ${turnNumber.toString(16)}\nWall time: 0.0012 seconds\nProcess exited with code 0\nOutput:\n${createSource(random, fileCharacters)}\n`,
    },
    {
      type: 'custom_tool_call',
      id: `ctc_bench_${turnNumber}`,
      status: 'completed',
      call_id: patchCallId,
      name: 'apply_patch',
      input: `*** Begin Patch\n*** Add File: src/generated-${turnNumber}.ts\n${patchLines}\n*** End Patch`,
    },
    {
      type: 'custom_tool_call_output',
      id: `ctco_bench_${turnNumber}`,
      call_id: patchCallId,
      output: `Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA src/generated-${turnNumber}.ts\n`,
    },
    message('assistant', `I fixed ${fileName}: ${createProse(random, 300)}`, `msg_bench_assistant_${turnNumber}`),
  ];
}

export interface BenchRequest {
  /** Label in the report (`50 kB`, `2 MB`, `10 MB`). */
  label: string;
  /** The Responses request body, as an object (for the in-process core benchmark). */
  body: JsonObject;
  /** Its JSON text. */
  text: string;
  bytes: number;
}

function finish(label: string, body: JsonObject): BenchRequest {
  const text = JSON.stringify(body);
  return { label, body, text, bytes: Buffer.byteLength(text) };
}

/**
 * The realistic Codex request: the captured tool list and context messages, the base prompt restored
 * to its real length, three turns of history and the new user message carrying the answer marker.
 */
export function createCodexRequest(options: { targetBytes: number; label: string; answer: AnswerName; stream: boolean }): BenchRequest {
  const capture = JSON.parse(readFileSync(BASE_CAPTURE, 'utf8')) as JsonObject;
  const random = createRandom(7);
  const captured = capture.input as JsonObject[];
  const [, ...contextMessages] = captured.filter((item) => item.type === 'message');
  const basePrompt = `You are a coding agent running in the Codex CLI, a terminal-based coding assistant.\n${createProse(random, BASE_PROMPT_CHARACTERS)}`;
  const head: JsonObject[] = [message('developer', basePrompt, 'msg_bench_base'), ...contextMessages];
  const ask = message('user', `Now add a changelog entry for the fix. ${encodeAnswerMarker(options.answer)}`, 'msg_bench_ask');
  const body: JsonObject = { ...capture, stream: options.stream, input: [...head, ask] };

  // Turns of ~3 kB for the realistic request (a few of them), ~20 kB for long sessions.
  const fileCharacters = options.targetBytes > 200_000 ? 16_000 : 600;
  const history: JsonObject[] = [];
  // Sizes add up item by item (plus a comma each), so building 10 MB stays linear.
  let size = Buffer.byteLength(JSON.stringify({ ...body, input: [...head, ask] }));
  for (let turnNumber = 1; size < options.targetBytes * 0.97; turnNumber++) {
    const turn = createHistoryTurn(random, turnNumber, Math.min(fileCharacters, Math.max(200, Math.floor((options.targetBytes - size) * 0.8))));
    for (const item of turn) size += Buffer.byteLength(JSON.stringify(item)) + 1;
    history.push(...turn);
  }
  return finish(options.label, { ...body, input: [...head, ...history, ask] });
}

export const KILOBYTE = 1_000;
export const MEGABYTE = 1_000_000;
