import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as z from '../../../src/core/schema/zod.ts';
import { chatCompletionChunkSchema, chatCompletionSchema } from '../../../src/core/chat/chat-completions-api.ts';
import { responsesRequestSchema } from '../../../src/core/responses/responses-request.ts';
import { CHECK_FAILED, createCheckedParser } from '../../../src/core/schema/compiled-check.ts';
import { createRandom } from '../../support/deterministic-random.ts';
import { fixturePath } from '../../support/fixtures.ts';

/*
 * The compiled check must accept exactly what zod accepts and produce the same data. Every capture of
 * a real Codex request, and thousands of mutations of them (a field removed, a value of another type,
 * an unknown kind), go through both; wherever they disagree the test names the mutation.
 */

function readCaptures(): Array<{ name: string; body: unknown }> {
  const directory = fixturePath('captures');
  return readdirSync(directory)
    .filter((name) => name.endsWith('.json'))
    .map((name) => {
      const capture = JSON.parse(readFileSync(`${directory}/${name}`, 'utf8')) as { body?: unknown };
      return { name, body: capture.body ?? capture };
    });
}

type Path = Array<string | number>;

/** Every path to a value inside `root`, objects and arrays included. */
function listPaths(root: unknown, prefix: Path = [], paths: Path[] = []): Path[] {
  paths.push(prefix);
  if (Array.isArray(root)) root.forEach((item, index) => listPaths(item, [...prefix, index], paths));
  else if (root !== null && typeof root === 'object') for (const [key, value] of Object.entries(root)) listPaths(value, [...prefix, key], paths);
  return paths;
}

const REPLACEMENTS: readonly unknown[] = [null, 7, -1, 1.5, '', 'text', true, [], {}, { type: 'made_up_kind' }, ['x'], undefined];

/** A deep copy of `root` with the value at `path` replaced (undefined: the key removed). */
function mutate(root: unknown, path: Path, replacement: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  if (path.length === 0) return replacement;
  let parent: Record<string | number, unknown> = copy;
  for (const segment of path.slice(0, -1)) parent = parent[segment] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (replacement === undefined && !Array.isArray(parent)) delete parent[last];
  else parent[last] = replacement;
  return copy;
}

function assertSameVerdict(schema: z.ZodMiniType, parse: (value: unknown) => { success: boolean; data?: unknown }, value: unknown, what: string): void {
  const expected = schema.safeParse(value);
  const actual = parse(value);
  assert.equal(actual.success, expected.success, `${what}: zod says ${expected.success ? 'valid' : 'invalid'}`);
  if (expected.success) assert.deepStrictEqual(actual.data, expected.data, `${what}: the data differs from zod's`);
}

describe('compiled schema checks agree with zod', () => {
  const parseRequest = createCheckedParser(responsesRequestSchema);

  it('on every captured Codex request, with the same data', () => {
    const captures = readCaptures();
    assert.ok(captures.length >= 10, 'the captures are in test/fixtures/captures');
    let accepted = 0;
    for (const { name, body } of captures) {
      assertSameVerdict(responsesRequestSchema, parseRequest, body, name);
      if (parseRequest(body).success) accepted += 1;
    }
    // A few captures hold a different kind of body (a compaction request); the rest are turns.
    assert.ok(accepted >= captures.length - 3, `${accepted} of ${captures.length} captures are accepted`);
  });

  it('on thousands of mutated requests (removed fields, wrong types, unknown kinds)', () => {
    const random = createRandom(19);
    let invalid = 0;
    let valid = 0;
    for (const { name, body } of readCaptures()) {
      const paths = listPaths(body);
      for (let round = 0; round < 150; round++) {
        const path = paths[Math.floor(random() * paths.length)] as Path;
        const replacement = REPLACEMENTS[Math.floor(random() * REPLACEMENTS.length)];
        const mutated = mutate(body, path, replacement);
        assertSameVerdict(responsesRequestSchema, parseRequest, mutated, `${name} with ${JSON.stringify(path)} = ${JSON.stringify(replacement) ?? 'removed'}`);
        if (responsesRequestSchema.safeParse(mutated).success) valid += 1;
        else invalid += 1;
      }
    }
    // Both verdicts must have been exercised many times, or the comparison proves little.
    assert.ok(invalid > 300 && valid > 300, `valid ${valid}, invalid ${invalid}`);
  });

  it('returns the very same object for a valid request with nothing to normalise, and a copy only where zod changes something', () => {
    const body = { model: 'm', input: [{ type: 'message', role: 'user', content: 'hi' }], tools: [{ type: 'function', name: 'f' }] };
    const result = parseRequest(body);
    assert.ok(result.success);
    assert.equal(result.data, body, 'nothing was copied');
    // A message without `type` gets one, and an unknown kind is wrapped: only those branches copy.
    const withNormalised = { model: 'm', input: [{ role: 'user', content: 'hi' }, { type: 'web_search_call', id: 'ws' }], tools: body.tools };
    const normalised = parseRequest(withNormalised);
    assert.ok(normalised.success);
    assert.notEqual(normalised.data, withNormalised);
    assert.equal(normalised.data.tools, body.tools, 'the unchanged tool list is shared');
    assert.deepStrictEqual(normalised.data.input, [
      { role: 'user', content: 'hi', type: 'message' },
      { type: 'unknown', originalType: 'web_search_call', value: { type: 'web_search_call', id: 'ws' } },
    ]);
    assert.deepStrictEqual(withNormalised.input[0], { role: 'user', content: 'hi' }, 'the input itself is never changed');
  });

  it('gives zod\'s own issues for an invalid value', () => {
    const result = parseRequest({ model: '', input: [] });
    assert.equal(result.success, false);
    assert.ok(!result.success);
    assert.deepStrictEqual(result.error.issues, responsesRequestSchema.safeParse({ model: '', input: [] }).error?.issues);
  });

  it('on streamed chunks and completions, valid and mutated', () => {
    const parseChunk = createCheckedParser(chatCompletionChunkSchema);
    const parseCompletion = createCheckedParser(chatCompletionSchema);
    const chunk = {
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: { role: 'assistant', content: 'x', tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: null }],
      usage: { prompt_tokens: 1, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 0 } },
    };
    const completion = { id: 'c2', choices: [{ index: 0, message: { role: 'assistant', content: 'y', refusal: null }, finish_reason: 'stop' }], usage: { prompt_tokens: 3 } };
    const random = createRandom(5);
    for (const [schema, parse, value] of [
      [chatCompletionChunkSchema, parseChunk, chunk],
      [chatCompletionSchema, parseCompletion, completion],
    ] as const) {
      assertSameVerdict(schema, parse, value, 'the value itself');
      const paths = listPaths(value);
      for (let round = 0; round < 400; round++) {
        const path = paths[Math.floor(random() * paths.length)] as Path;
        const replacement = REPLACEMENTS[Math.floor(random() * REPLACEMENTS.length)];
        assertSameVerdict(schema, parse, mutate(value, path, replacement), `${JSON.stringify(path)} = ${JSON.stringify(replacement) ?? 'removed'}`);
      }
    }
  });

  it('handles every kind of schema the bridge uses, including stripping and strict objects', () => {
    const schema = z.object({
      name: z.string().check(z.minLength(2), z.maxLength(4)),
      count: z.nullish(z.number().check(z.int(), z.positive())),
      ratio: z.optional(z.number().check(z.gte(0), z.lte(1))),
      kind: z.enum(['a', 'b']),
      flag: z.nullable(z.boolean()),
      tags: z.optional(z.array(z.literal('t')).check(z.minLength(1))),
      extra: z.optional(z.strictObject({ only: z.null() })),
      map: z.optional(z.record(z.string(), z.number())),
    });
    const parse = createCheckedParser(schema);
    const samples: unknown[] = [
      { name: 'abc', kind: 'a', flag: null },
      { name: 'abc', kind: 'a', flag: null, dropped: 1 },
      { name: 'a', kind: 'a', flag: null },
      { name: 'abcde', kind: 'a', flag: null },
      { name: 'abc', count: 0, kind: 'a', flag: true },
      { name: 'abc', count: 2.5, kind: 'a', flag: true },
      { name: 'abc', count: 3, ratio: 1, kind: 'b', flag: false },
      { name: 'abc', ratio: 1.1, kind: 'b', flag: false },
      { name: 'abc', kind: 'c', flag: false },
      { name: 'abc', kind: 'a', flag: false, tags: [] },
      { name: 'abc', kind: 'a', flag: false, tags: ['t', 't'] },
      { name: 'abc', kind: 'a', flag: false, extra: { only: null } },
      { name: 'abc', kind: 'a', flag: false, extra: { only: null, more: 1 } },
      { name: 'abc', kind: 'a', flag: false, map: { x: 1, y: 2 } },
      { name: 'abc', kind: 'a', flag: false, map: { x: 'no' } },
      { name: 'abc', kind: 'a', flag: false, map: [] },
      [],
      null,
    ];
    for (const sample of samples) assertSameVerdict(schema, parse, sample, JSON.stringify(sample));
    const stripped = parse({ name: 'abc', kind: 'a', flag: null, dropped: 1 });
    assert.ok(stripped.success);
    assert.deepStrictEqual(stripped.data, { name: 'abc', kind: 'a', flag: null });
  });

  it('generates working code for empty shapes, plain unions, large enums, pipes, shared shapes and keys that need quoting', () => {
    const shared = z.object({ id: z.string() });
    const schema = z.object({
      'odd-key': z.optional(z.string()),
      "it's \u2028 \"quoted\"": z.optional(z.number()),
      empty: z.optional(z.object({})),
      none: z.optional(z.strictObject({})),
      either: z.optional(z.union([z.string(), z.number().check(z.int()), shared])),
      letter: z.optional(z.enum(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'])),
      wrapped: z.optional(z.preprocess((value) => (typeof value === 'string' ? { id: value } : value), shared)),
      first: z.optional(shared),
      second: z.optional(shared),
    });
    const parse = createCheckedParser(schema);
    const samples: unknown[] = [
      {},
      { 'odd-key': 'x', "it's \u2028 \"quoted\"": 2 },
      { 'odd-key': 1 },
      { "it's \u2028 \"quoted\"": 'no' },
      { empty: {} },
      { empty: { dropped: true } },
      { none: {} },
      { none: { refused: true } },
      { either: 'text' },
      { either: 3 },
      { either: 3.5 },
      { either: { id: 'i', dropped: 1 } },
      { either: { id: 7 } },
      { letter: 'j' },
      { letter: 'k' },
      { wrapped: 'w' },
      { wrapped: { id: 'w', dropped: 1 } },
      { wrapped: 5 },
      { first: { id: 'a' }, second: { id: 'b', dropped: 2 } },
      { first: { id: 'a' }, second: { id: null } },
    ];
    for (const sample of samples) assertSameVerdict(schema, parse, sample, JSON.stringify(sample));
    const normalised = parse({ wrapped: 'w', empty: { dropped: true } });
    assert.ok(normalised.success);
    assert.deepStrictEqual(normalised.data, { wrapped: { id: 'w' }, empty: {} });
  });

  it('refuses, when it is built, a schema it cannot check', () => {
    assert.throws(() => createCheckedParser(z.string().check(z.email())), /refinement 'string_format' is not supported/);
    assert.throws(() => createCheckedParser(z.date()), /schema type 'date' is not supported/);
    assert.throws(() => createCheckedParser(z.pipe(z.string(), z.transform((value: string, context) => (context ? value : value)))), /one-argument transforms/);
    assert.equal(typeof CHECK_FAILED, 'symbol');
  });
});
