import type { GrammarEnforcement } from '../bridge-options.ts';
import type { PatternForm } from '../grammar/grammar-to-pattern.ts';
import { isPlainObject, parseJson } from '../parse-json.ts';
import { PROBE_TOOL_NAME } from './probe-requests.ts';
import type { ChatProbeResult } from './read-probe-answer.ts';

/*
 * Whether an engine really keeps a tool argument inside a JSON-Schema `pattern`, and in which form
 * (grammar-to-pattern.ts), proven with one tiny request per form rather than assumed from the engine's
 * name: whether it is enforced depends on the engine, its version, the chat template's argument style
 * and flags (vLLM's strict tool calling, SGLang's strict level). The pattern admits exactly one patch,
 * one the model is not asked for (it is asked to create probe.txt): only an engine that enforces the
 * pattern makes it write this one, and only the right form leaves the call valid JSON with the value
 * intact (llama.cpp given the value form writes a raw newline: invalid JSON or an error).
 */

/** What the pattern forces: a patch with a newline in it, so a wrong form shows. */
export const SELF_TEST_PATCH = '*** Begin Patch\n*** Delete File: grammar-self-test.txt\n*** End Patch';

const SELF_TEST_PATTERNS: Readonly<Record<PatternForm, string>> = {
  'escaped-text': String.raw`^\*\*\* Begin Patch\\n\*\*\* Delete File: grammar-self-test[.]txt\\n\*\*\* End Patch$`,
  value: String.raw`^\*\*\* Begin Patch\x0a\*\*\* Delete File: grammar-self-test[.]txt\x0a\*\*\* End Patch$`,
};

/** The patch is about 20 tokens; room for any engine's call syntax around it, and no more. */
const SELF_TEST_MAX_TOKENS = 96;

export function buildGrammarSelfTestRequest(model: string, form: PatternForm): Record<string, unknown> {
  return {
    model,
    messages: [
      { role: 'system', content: 'You are a coding agent. Make file changes only with the apply_patch tool.' },
      { role: 'user', content: 'Create an empty file named probe.txt.' },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: PROBE_TOOL_NAME,
          description: 'Edits files. The input is a patch in the apply_patch format.',
          // `strict`: vLLM and SGLang constrain `auto` tool calls only for strict functions; llama.cpp accepts and ignores it.
          strict: true,
          parameters: {
            type: 'object',
            properties: { input: { type: 'string', pattern: SELF_TEST_PATTERNS[form] } },
            required: ['input'],
            additionalProperties: false,
          },
        },
      },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    max_tokens: SELF_TEST_MAX_TOKENS,
    temperature: 0,
    stream: false,
  };
}

export type GrammarSelfTestVerdict = { obeyed: true } | { obeyed: false; reason: string };

/** The first call must be the probe tool with valid JSON arguments whose `input` is exactly the forced patch. */
export function judgeGrammarSelfTest(result: ChatProbeResult): GrammarSelfTestVerdict {
  if (result.outcome === 'unreachable') return { obeyed: false, reason: `no answer (${result.reason})` };
  if (result.outcome === 'refused') return { obeyed: false, reason: `refused the pattern: HTTP ${result.status} ${result.message.slice(0, 200)}` };
  const call = result.toolCalls[0];
  if (call === undefined) return { obeyed: false, reason: 'answered without a tool call' };
  const parsed = parseJson(call.arguments);
  if (!parsed.success || !isPlainObject(parsed.value)) return { obeyed: false, reason: 'the call under the pattern was not valid JSON' };
  const input = parsed.value.input;
  if (input === SELF_TEST_PATCH || input === `${SELF_TEST_PATCH}\n`) return { obeyed: true };
  return { obeyed: false, reason: 'the engine ignored the pattern (the model wrote its own patch)' };
}

/** Forms to try, in order: the escaped text first (JSON-argument templates, the common case). */
export const SELF_TEST_FORMS: readonly PatternForm[] = ['escaped-text', 'value'];

/** The decision from each form's verdict, in the order tried. */
export function decideGrammarEnforcement(verdicts: ReadonlyArray<{ form: PatternForm; verdict: GrammarSelfTestVerdict }>): GrammarEnforcement {
  const passed = verdicts.find((entry) => entry.verdict.obeyed);
  if (passed !== undefined) return { enforced: true, form: passed.form, strict: true, reason: `the engine self-test passed in the ${passed.form} form` };
  const reasons = verdicts.map((entry) => `${entry.form}: ${entry.verdict.obeyed ? 'obeyed' : entry.verdict.reason}`).join('; ');
  return { enforced: false, reason: `the engine self-test found the pattern not enforced (${reasons})` };
}
