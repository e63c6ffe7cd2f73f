import { SOAK_PATCH, type SoakScenario } from './soak-backend.ts';

/*
 * The soak's requests: which scenarios come up how often, and the Codex-shaped body each turn sends.
 * Shared by the soak test (test/load/soak.test.ts) and the benchmark's memory phase under the same
 * load (bench/soak-memory.ts), so both measure the same mix.
 */

export type Scenario = SoakScenario | 'malformed-json';

/** How often each scenario comes up (out of the sum); most turns are healthy, as in real use. */
export const SCENARIO_WEIGHTS: ReadonlyArray<readonly [Scenario, number]> = [
  ['text', 14],
  ['custom-call', 10],
  ['parallel-calls', 6],
  ['slow-chunks', 4],
  ['silent-prefill', 2],
  ['truncated-call', 2],
  ['midstream-error', 2],
  ['socket-cut', 2],
  ['rate-limited', 2],
  ['unavailable', 2],
  ['context-overflow', 2],
  ['headers-never', 1],
  ['client-abort', 2],
  ['malformed-json', 2],
];

/** A scenario drawn with `weights` (by default the soak's). */
export function pickScenario(random: () => number, weights: ReadonlyArray<readonly [Scenario, number]> = SCENARIO_WEIGHTS): Scenario {
  const total = weights.reduce((sum, [, weight]) => sum + weight, 0);
  let point = random() * total;
  for (const [scenario, weight] of weights) {
    point -= weight;
    if (point < 0) return scenario;
  }
  return 'text';
}

/** A small Codex-shaped request: a bridged custom tool and a function tool, a short history. */
export function createRequestBody(scenario: Scenario, stream: boolean, session: number, turn: number): string {
  if (scenario === 'malformed-json') return `{"model":"qwen3-coder","input":[{"type":"message","role":"user","content":"soak:${scenario}"`;
  return JSON.stringify({
    model: 'qwen3-coder',
    instructions: 'You are a soak-test assistant.',
    input: [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: `session ${session} turn ${turn}` }] },
      { type: 'custom_tool_call', call_id: `call_${session}_${turn}`, name: 'apply_patch', input: SOAK_PATCH },
      { type: 'custom_tool_call_output', call_id: `call_${session}_${turn}`, output: 'Success.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: `soak:${scenario}` }] },
    ],
    tools: [
      { type: 'custom', name: 'apply_patch', description: 'Apply a patch.', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)*/' } },
      { type: 'function', name: 'exec_command', description: 'Run a command.', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    stream,
    store: false,
    prompt_cache_key: `soak-session-${session}`,
  });
}
