import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import {
  isUnterminatedJsonPrefix,
  liftCustomToolArguments,
  MAX_PARSED_ARGUMENTS_BYTES,
  type LiftedCustomInput,
} from '../../../../src/core/lift/lift-custom-tool-arguments.ts';
import { isPlainObject, parseJson } from '../../../../src/core/parse-json.ts';
import { fixturePath } from '../../../support/fixtures.ts';

const examplesFolder = fixturePath('backend-examples');
const context = { tool: 'apply_patch', callId: 'call_1', finishReason: 'tool_calls' };

function lift(argumentsText: string, finishReason: string | null = 'tool_calls'): LiftedCustomInput {
  return liftCustomToolArguments(argumentsText, { ...context, finishReason });
}

/** Input and warning kinds only; the detail wording is checked where it matters. */
function summarise(result: LiftedCustomInput): { input: string | null; kinds: string[] } {
  return { input: result.truncated ? null : result.input, kinds: result.warnings.map((warning) => warning.kind) };
}

function readJsonObject(fileName: string): Record<string, unknown> {
  const parsed = parseJson(readFileSync(path.join(examplesFolder, fileName), 'utf8'));
  assert.ok(parsed.success && isPlainObject(parsed.value), `${fileName} is a JSON object`);
  return parsed.value;
}

describe('liftCustomToolArguments: byte forms from arguments-matrix.json', () => {
  const matrix = readJsonObject('arguments-matrix.json');
  const tricky = readFileSync(path.join(examplesFolder, 'tricky-input.txt'), 'utf8');
  const forms = Object.entries(matrix).filter(
    (entry): entry is [string, string] =>
      typeof entry[1] === 'string' && entry[1].trimStart().startsWith('{') && !entry[0].endsWith('_note'),
  );

  it('finds the argument forms (prose keys skipped)', () => {
    assert.deepEqual(
      forms.map(([key]) => key),
      [
        'vllm_hermes_nonstream',
        'vllm_qwen3coder_nonstream_and_stream_concat',
        'vllm_gptoss_nonstream',
        'vllm_gptoss_stream_concat',
        'sglang_qwen3coder',
        'ollama_any_parser',
        'llamacpp_compact',
      ],
    );
  });

  for (const [key, form] of forms) {
    it(`${key} lifts to exactly the parsed input, without warnings`, () => {
      const parsed = parseJson(form);
      assert.ok(parsed.success && isPlainObject(parsed.value) && typeof parsed.value.input === 'string');
      const expected = parsed.value.input;
      assert.deepEqual(lift(form), { truncated: false, input: expected, warnings: [] });
      // XML-parser forms lose the final newline (the engine's trim); the rest is the fixture.
      assert.ok(expected === tricky || expected === tricky.slice(0, -1), `${key} carries the tricky input`);
    });
  }
});

describe('liftCustomToolArguments: each malformed-arguments case', () => {
  const rows: Array<{ name: string; argumentsText: string; input: string; kinds: string[] }> = [
    { name: 'spaced', argumentsText: '{"input": "X\\nY"}', input: 'X\nY', kinds: [] },
    { name: 'compact', argumentsText: '{"input":"X\\nY"}', input: 'X\nY', kinds: [] },
    { name: '\\uXXXX escapes', argumentsText: '{"input": "H\\u00e9 \\ud83d\\udc4b"}', input: 'Hé 👋', kinds: [] },
    { name: 'Go HTML escapes', argumentsText: '{"input":"\\u003cb\\u003e\\u0026"}', input: '<b>&', kinds: [] },
    { name: 'surrounding whitespace', argumentsText: '\n {"input": "X"} \n', input: 'X', kinds: [] },
    { name: 'extra keys', argumentsText: '{"input": "X", "explanation": "why", "n": 1}', input: 'X', kinds: ['extra_keys'] },
    { name: 'object payload', argumentsText: '{"input": {"patch": "X"}}', input: '{"patch":"X"}', kinds: ['non_string_payload'] },
    { name: 'number payload', argumentsText: '{"input": 42}', input: '42', kinds: ['non_string_payload'] },
    { name: 'boolean payload', argumentsText: '{"input": true}', input: 'true', kinds: ['non_string_payload'] },
    { name: 'array payload', argumentsText: '{"input": ["a", 1]}', input: '["a",1]', kinds: ['non_string_payload'] },
    { name: 'null payload (Qwen coercion)', argumentsText: '{"input": null}', input: 'null', kinds: ['non_string_payload'] },
    { name: 'one other string property', argumentsText: '{"patch": "X"}', input: 'X', kinds: ['missing_key'] },
    { name: 'differently cased key', argumentsText: '{"Input": "X"}', input: 'X', kinds: ['missing_key'] },
    { name: 'several properties', argumentsText: '{"a": "X", "b": "Y"}', input: '{"a": "X", "b": "Y"}', kinds: ['missing_key'] },
    { name: 'one non-string property', argumentsText: '{"patch": 7}', input: '{"patch": 7}', kinds: ['missing_key'] },
    { name: 'empty object', argumentsText: '{}', input: '', kinds: ['missing_key'] },
    { name: 'empty arguments', argumentsText: '', input: '', kinds: ['empty_arguments'] },
    { name: 'whitespace-only arguments', argumentsText: ' \n', input: '', kinds: ['empty_arguments'] },
    { name: 'not JSON', argumentsText: '*** Begin Patch\n*** End Patch', input: '*** Begin Patch\n*** End Patch', kinds: ['not_json'] },
    {
      name: 'raw newline inside the JSON string (small models)',
      argumentsText: '{"input": "line1\nline2"}',
      input: 'line1\nline2',
      kinds: ['grammar_repaired'],
    },
    {
      name: 'a backslash before a letter that is no JSON escape (a regular expression)',
      argumentsText: '{"input": "+x = /\\d+/\\n"}',
      input: '+x = /\\d+/\n',
      kinds: ['grammar_repaired'],
    },
    { name: 'trailing garbage', argumentsText: '{"input": "X"}}', input: '{"input": "X"}}', kinds: ['not_json'] },
    { name: 'JSON string literal', argumentsText: '"*** Begin Patch\\n*** End Patch"', input: '*** Begin Patch\n*** End Patch', kinds: ['not_object'] },
    { name: 'string literal holding a number', argumentsText: '"42"', input: '42', kinds: ['not_object'] },
    { name: 'double-encoded', argumentsText: '"{\\"input\\": \\"X\\"}"', input: 'X', kinds: ['double_encoded'] },
    {
      name: 'double-encoded with extra keys',
      argumentsText: '"{\\"input\\": \\"X\\", \\"why\\": \\"y\\"}"',
      input: 'X',
      kinds: ['double_encoded', 'extra_keys'],
    },
    {
      name: 'double-encoded with several properties delivers the unwrapped text',
      argumentsText: '"{\\"a\\": \\"X\\", \\"b\\": \\"Y\\"}"',
      input: '{"a": "X", "b": "Y"}',
      kinds: ['double_encoded', 'missing_key'],
    },
    { name: 'array', argumentsText: '["X"]', input: '["X"]', kinds: ['not_object'] },
    { name: 'number', argumentsText: '7', input: '7', kinds: ['not_object'] },
    { name: 'top-level null', argumentsText: 'null', input: 'null', kinds: ['not_object'] },
  ];

  for (const row of rows) {
    it(row.name, () => {
      assert.deepEqual(summarise(lift(row.argumentsText)), { input: row.input, kinds: row.kinds });
    });
  }

  it('fills every warning with tool, call id, detail and the raw arguments', () => {
    const argumentsText = '{"input": "X", "explanation": "why", "n": 1}';
    const result = lift(argumentsText);
    assert.deepEqual(result, {
      truncated: false,
      input: 'X',
      warnings: [
        {
          kind: 'extra_keys',
          tool: 'apply_patch',
          callId: 'call_1',
          detail: 'ignored extra argument keys next to input: "explanation", "n"',
          raw: argumentsText,
        },
      ],
    });
  });

  it('names the Qwen null coercion in the detail', () => {
    const [warning] = lift('{"input": null}').warnings;
    assert.match(warning?.detail ?? '', /Qwen/);
  });

  it('keeps "null" spelled by newer parsers as a string, without warnings', () => {
    assert.deepEqual(lift('{"input": "null"}'), { truncated: false, input: 'null', warnings: [] });
  });

  it('reports both extra keys and a non-string payload', () => {
    assert.deepEqual(summarise(lift('{"input": 1, "x": 2}')), { input: '1', kinds: ['non_string_payload', 'extra_keys'] });
  });
});

describe('liftCustomToolArguments: truncation', () => {
  const truncatedWarning = (argumentsText: string) => ({ kind: 'truncated', tool: 'apply_patch', callId: 'call_1', raw: argumentsText });

  it('treats an unterminated prefix as truncated even when the engine says tool_calls (vLLM)', () => {
    const argumentsText = '{"input": "*** Begin Patch\\n*** Update File: a.py\\n@@';
    const result = lift(argumentsText, 'tool_calls');
    assert.equal(result.truncated, true);
    assert.equal(result.warnings.length, 1);
    assert.deepEqual({ ...result.warnings[0], detail: undefined }, { ...truncatedWarning(argumentsText), detail: undefined });
  });

  it('treats any unparsable arguments as truncated when the finish reason is length', () => {
    for (const argumentsText of ['*** Begin Patch\n*** Upd', '{"input": "a\nb', '', '{"input": "X"}}']) {
      const result = lift(argumentsText, 'length');
      assert.deepEqual(summarise(result), { input: null, kinds: ['truncated'] }, JSON.stringify(argumentsText));
    }
  });

  it('delivers arguments that parse even when the finish reason is length', () => {
    assert.deepEqual(lift('{"input": "X"}', 'length'), { truncated: false, input: 'X', warnings: [] });
  });

  it('treats an unterminated string literal as truncated', () => {
    assert.equal(lift('"*** Begin Patch\\n', null).truncated, true);
  });
});

describe('liftCustomToolArguments: size limit', () => {
  it('delivers text above the parse limit raw, with a warning', () => {
    const argumentsText = `{"input": "${'a'.repeat(MAX_PARSED_ARGUMENTS_BYTES)}"}`;
    const result = lift(argumentsText);
    assert.equal(result.truncated, false);
    assert.equal(result.truncated === false && result.input === argumentsText, true);
    assert.deepEqual(
      result.warnings.map((warning) => warning.kind),
      ['not_json'],
    );
    assert.match(result.warnings[0]?.detail ?? '', /not parsed/);
  });

  it('treats text above the limit as truncated when the backend stopped for length', () => {
    const argumentsText = `{"input": "${'a'.repeat(MAX_PARSED_ARGUMENTS_BYTES)}`;
    assert.equal(lift(argumentsText, 'length').truncated, true);
  });

  it('treats an unterminated prefix above the limit as truncated', () => {
    const argumentsText = `{"input": "${'a'.repeat(MAX_PARSED_ARGUMENTS_BYTES)}`;
    assert.deepEqual(summarise(lift(argumentsText, 'tool_calls')), { input: null, kinds: ['truncated'] });
  });
});

describe('isUnterminatedJsonPrefix', () => {
  const prefixes = [
    '{',
    '{"',
    '{"inp',
    '{"input"',
    '{"input":',
    '{"input": "abc',
    '{"input": "abc\\',
    '{"input": "abc\\u00',
    '{"input": "abc"',
    '{"input": "abc",',
    '{"input": "abc", "b": [1, {"c": tr',
    '{"a": nul',
    '{"a": -',
    '{"a": 1.',
    '{"a": 1e',
    '{"a": 1e+',
    '{"a": 12',
    '[',
    '[1, 2',
    '"abc',
    '-',
    '  {"input": "x',
  ];
  for (const text of prefixes) {
    it(`accepts ${JSON.stringify(text)}`, () => assert.equal(isUnterminatedJsonPrefix(text), true));
  }

  const notPrefixes = [
    '',
    '   ',
    '{"input": "abc"}',
    '[1, 2]',
    '12',
    '"abc"',
    'null',
    '{"input": "abc"}}',
    '{"input": "a\nb',
    '{"input": "\\x',
    '{"input": "\\u00g',
    '{input',
    '{"a" 1',
    '{"a": 01',
    '{"a": tx',
    '{"a": 1,}',
    '[1 2',
    '*** Begin Patch',
    '{"a": 1]',
  ];
  for (const text of notPrefixes) {
    it(`rejects ${JSON.stringify(text)}`, () => assert.equal(isUnterminatedJsonPrefix(text), false));
  }

  it('accepts every proper prefix of a nested document and rejects the whole', () => {
    const documentText = '{"input": "a\\"b\\\\c\\u00e9\\ud83d\\udc4b", "n": [-1.5e+3, true, false, null, {}], "o": {"k": []}}';
    for (let length = 1; length < documentText.length; length += 1) {
      assert.equal(isUnterminatedJsonPrefix(documentText.slice(0, length)), true, documentText.slice(0, length));
    }
    assert.equal(isUnterminatedJsonPrefix(documentText), false);
  });
});

describe('liftCustomToolArguments: property — every byte form round-trips', () => {
  const fragments = ['\n', '\r\n', '"', '\\', '\t', '</parameter>', '*** Begin Patch\n', '*** End Patch', 'é', '—', '👋', '<b>&amp;</b>', '\u2028', '\u0000', '{"input": "x"}'];
  const payload = fc
    .array(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.constantFrom(...fragments)), { maxLength: 20 })
    .map((parts) => parts.join(''));

  const asciiEscape = (jsonText: string): string =>
    jsonText.replace(/[\u0080-\uffff]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const goHtmlEscape = (jsonText: string): string =>
    jsonText.replace(/[<>&]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);

  it('lower-style, compact, ASCII-escaped and Go HTML-escaped forms lift byte-exact with no warnings', () => {
    fc.assert(
      fc.property(payload, (text) => {
        const forms = [
          '{"input": ' + JSON.stringify(text) + '}',
          JSON.stringify({ input: text }),
          asciiEscape(JSON.stringify({ input: text })),
          goHtmlEscape(JSON.stringify({ input: text })),
          asciiEscape(goHtmlEscape('{"input": ' + JSON.stringify(text) + '}')),
        ];
        for (const form of forms) {
          assert.deepEqual(lift(form), { truncated: false, input: text, warnings: [] });
        }
      }),
      { numRuns: 500 },
    );
  });

  it('every proper prefix of a lowered form is recognised as unterminated', () => {
    fc.assert(
      fc.property(payload, fc.nat(), (text, cut) => {
        const form = '{"input": ' + JSON.stringify(text) + '}';
        const prefix = form.slice(0, 1 + (cut % (form.length - 1)));
        assert.equal(isUnterminatedJsonPrefix(prefix), true, prefix);
        assert.equal(lift(prefix).truncated, true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('liftCustomToolArguments: never unwraps input when another key could change what it does', () => {
  const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+world\n*** End Patch\n';
  const deliveredAsWritten = (argumentsText: string, named: RegExp): void => {
    const result = lift(argumentsText);
    assert.ok(!result.truncated);
    assert.equal(result.input, argumentsText, 'delivered as written');
    const warning = result.warnings.find((candidate) => candidate.kind === 'extra_keys');
    assert.ok(warning !== undefined, argumentsText);
    assert.match(warning.detail, named);
    assert.equal(warning.raw, argumentsText);
  };

  it('keeps a directory beside the patch: workdir, cwd, path', () => {
    deliveredAsWritten(JSON.stringify({ input: patch, workdir: 'dir' }), /"workdir"/);
    deliveredAsWritten(JSON.stringify({ cwd: 'dir', input: patch }), /"cwd"/);
    deliveredAsWritten(JSON.stringify({ input: patch, path: 'src' }), /"path"/);
    deliveredAsWritten(JSON.stringify({ input: patch, working_directory: 'src', explanation: 'x' }), /"working_directory"/);
  });

  it('keeps a second patch under another key', () => {
    deliveredAsWritten(JSON.stringify({ input: patch, patch: patch.replace('world', 'earth') }), /"patch"/);
  });

  it('keeps a duplicated key, which JSON.parse would settle silently by keeping the last', () => {
    deliveredAsWritten(`{"input": ${JSON.stringify(patch)}, "input": ${JSON.stringify(patch.replace('world', 'earth'))}}`, /"input".*twice/);
    deliveredAsWritten(`{"patch": ${JSON.stringify(patch)}, "patch": "*** Begin Patch\\n*** Delete File: a.txt\\n*** End Patch"}`, /"patch".*twice/);
  });

  it('still ignores a key that only comments, and a duplicated key nested deeper', () => {
    assert.deepEqual(summarise(lift(JSON.stringify({ input: patch, explanation: 'why' }))), { input: patch, kinds: ['extra_keys'] });
    assert.deepEqual(summarise(lift(`{"input": ${JSON.stringify(patch)}, "meta": {"a": 1, "a": 2}}`)), { input: patch, kinds: ['extra_keys'] });
  });
});
