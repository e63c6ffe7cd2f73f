import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { InputStringDecoder } from '../../../../src/core/stream/input-string-decoder.ts';
import { isPlainObject, parseJson } from '../../../../src/core/parse-json.ts';
import { fixturePath } from '../../../support/fixtures.ts';

const examplesFolder = fixturePath('backend-examples');

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Feeds `fragments` and returns every piece `push` returned. */
function decodePieces(fragments: readonly string[]): { pieces: string[]; decoder: InputStringDecoder } {
  const decoder = new InputStringDecoder();
  return { pieces: fragments.map((fragment) => decoder.push(fragment)), decoder };
}

function cutAt(text: string, cuts: readonly number[]): string[] {
  const positions = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((left, right) => left - right);
  const fragments: string[] = [];
  let start = 0;
  for (const position of positions) {
    fragments.push(text.slice(start, position));
    start = position;
  }
  fragments.push(text.slice(start));
  return fragments;
}

function assertDecodes(fragments: readonly string[], expected: string, label: string): void {
  const { pieces, decoder } = decodePieces(fragments);
  assert.equal(pieces.join(''), expected, label);
  assert.equal(decoder.decoded, expected, label);
  assert.equal(decoder.state, 'done', label);
  for (const piece of pieces) assert.ok(!LONE_SURROGATE.test(piece), `${label}: lone surrogate in ${JSON.stringify(piece)}`);
}

/** Python's `json.dumps` default (ensure_ascii): vLLM's gpt-oss path and its error frames. */
function escapeNonAscii(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Go's encoding/json HTML escaping (Ollama). */
function escapeHtmlLikeGo(json: string): string {
  return json.replace(/[<>&]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const matrix = ((): Array<[string, string, string]> => {
  const parsed = parseJson(readFileSync(path.join(examplesFolder, 'arguments-matrix.json'), 'utf8'));
  assert.ok(parsed.success && isPlainObject(parsed.value));
  const cases: Array<[string, string, string]> = [];
  for (const [name, value] of Object.entries(parsed.value)) {
    if (typeof value !== 'string') continue;
    const argumentsJson = parseJson(value);
    // Some entries are notes, not argument strings.
    if (argumentsJson.success && isPlainObject(argumentsJson.value) && typeof argumentsJson.value.input === 'string') {
      cases.push([name, value, argumentsJson.value.input]);
    }
  }
  return cases;
})();

describe('InputStringDecoder on the engines\' argument strings', () => {
  it('has the argument matrix', () => {
    assert.ok(matrix.length >= 6);
  });

  for (const [name, argumentsText, expected] of matrix) {
    it(`${name}: split at every position`, () => {
      for (let position = 0; position <= argumentsText.length; position += 1) {
        assertDecodes([argumentsText.slice(0, position), argumentsText.slice(position)], expected, `split at ${position}`);
      }
      assertDecodes(Array.from(argumentsText), expected, 'code point by code point');
      assertDecodes(argumentsText.split(''), expected, 'UTF-16 unit by unit');
    });

    it(`${name}: random pieces`, () => {
      fc.assert(
        fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
          assertDecodes(cutAt(argumentsText, cuts), expected, `cuts ${cuts.join(',')}`);
        }),
        { numRuns: 300 },
      );
    });
  }

  it('follows each engine\'s granularity', () => {
    const tricky = readFileSync(path.join(examplesFolder, 'tricky-input.txt'), 'utf8');
    const body = JSON.stringify(tricky);
    // llama.cpp: the first fragment already opens the value, then diffs cut anywhere.
    assertDecodes(['{"input":"', ...cutAt(body.slice(1) + '}', [3, 17, 18, 40, 41, 42, 77])], tricky, 'llama.cpp');
    // Legacy qwen3_coder / SGLang: empty header, `{`, the whole member, `}`.
    assertDecodes(['', '{', `"input": ${body}`, '}'], tricky, 'qwen3_coder');
    // hermes: raw model text with spaces.
    assertDecodes(['{"input": "', body.slice(1, 30), body.slice(30), '}'], tricky, 'hermes');
    // Ollama: the whole call at once, HTML-escaped.
    assertDecodes([escapeHtmlLikeGo(`{"input":${body}}`)], tricky, 'ollama');
  });
});

describe('InputStringDecoder escapes', () => {
  it('holds an escape cut by the fragment end', () => {
    const decoder = new InputStringDecoder();
    assert.equal(decoder.push('{"input":"ab\\'), 'ab');
    assert.equal(decoder.push('n'), '\n');
    assert.equal(decoder.push('\\u00'), '');
    assert.equal(decoder.push('e'), '');
    assert.equal(decoder.push('9x'), 'éx');
    assert.equal(decoder.state, 'in_value');
  });

  it('waits for the low surrogate before emitting an escaped astral character', () => {
    const decoder = new InputStringDecoder();
    assert.equal(decoder.push('{"input":"a\\ud83d'), 'a');
    assert.equal(decoder.push('\\udc4b"}'), '👋');
    assert.equal(decoder.state, 'done');
  });

  it('waits for the low half of a raw surrogate pair cut between fragments', () => {
    const decoder = new InputStringDecoder();
    assert.equal(decoder.push('{"input":"a\ud83d'), 'a');
    assert.equal(decoder.push('\udc4bb'), '👋b');
  });

  it('emits an unpaired surrogate as JSON.parse does', () => {
    for (const argumentsText of ['{"input":"\\ud83dx"}', '{"input":"\\ud83d"}', '{"input":"\\udc4b!"}', '{"input":"\\ud83d\\n"}']) {
      const parsed = parseJson(argumentsText);
      assert.ok(parsed.success && isPlainObject(parsed.value));
      assert.equal(decodePieces([argumentsText]).pieces.join(''), parsed.value.input, argumentsText);
    }
  });

  it('decodes every JSON escape, including Go\'s HTML escapes', () => {
    const argumentsText = '{"input":"\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u003cb\\u003e \\u0026 \\u00E9"}';
    assertDecodes([argumentsText], '" \\ / \b \f \n \r \t <b> & é', 'escapes');
  });

  it('passes raw control characters and invalid escapes through as written', () => {
    assertDecodes(['{"input":"a\nb\tc"}'], 'a\nb\tc', 'raw control characters');
    assertDecodes(['{"input":"C:\\x\\u12G4"}'], 'C:\\x\\u12G4', 'invalid escapes');
  });

  it('accepts an escaped spelling of the key and whitespace around the colon', () => {
    assertDecodes(['{ \n "\\u0069n', 'put" \t:\r\n "x"}'], 'x', 'escaped key');
  });
});

describe('InputStringDecoder states', () => {
  it('seeks until the value opens, then stops at the closing quote', () => {
    const decoder = new InputStringDecoder();
    assert.equal(decoder.state, 'seeking');
    assert.equal(decoder.push(' {"inp'), '');
    assert.equal(decoder.state, 'seeking');
    assert.equal(decoder.push('ut" : '), '');
    assert.equal(decoder.state, 'seeking');
    assert.equal(decoder.push('"patch'), 'patch');
    assert.equal(decoder.state, 'in_value');
    assert.equal(decoder.push(' text", "explanation": "more"'), ' text');
    assert.equal(decoder.state, 'done');
    assert.equal(decoder.push('}'), '');
    assert.equal(decoder.decoded, 'patch text');
  });

  const abandoned: Array<[string, string[]]> = [
    ['another single key', ['{"patch": "*** Begin Patch"}']],
    ['input as the second key', ['{"explanation": "x", ', '"input": "y"}']],
    ['a key that merely starts with input', ['{"input', '_text": "y"}']],
    ['null', ['{"input": null}']],
    ['a number', ['{"input": 42}']],
    ['an object', ['{"input": {"patch": "x"}}']],
    ['an empty object', ['{}']],
    ['not JSON', ['*** Begin Patch\n']],
    ['a double-encoded string', ['"{\\"input\\": \\"x\\"}"']],
    ['an array', ['["x"]']],
    ['a colon missing', ['{"input" "x"}']],
    ['a very long first key', ['{"', 'k'.repeat(20), 'k'.repeat(20), '": "x"}']],
  ];
  for (const [label, fragments] of abandoned) {
    it(`abandons ${label} and stays silent afterwards`, () => {
      const { pieces, decoder } = decodePieces(fragments);
      assert.deepEqual(new Set(pieces), new Set(['']));
      assert.equal(decoder.state, 'abandoned');
      assert.equal(decoder.push('{"input":"late"}'), '');
      assert.equal(decoder.decoded, '');
    });
  }

  it('stays seeking on empty fragments', () => {
    const { pieces, decoder } = decodePieces(['', '', '']);
    assert.deepEqual(pieces, ['', '', '']);
    assert.equal(decoder.state, 'seeking');
  });
});

describe('InputStringDecoder property', () => {
  const special = fc.constantFrom('\n', '\r\n', '"', '\\', '\\n', '</parameter>', '👋', '\u2028', '\t', '\u0000', 'é', '—', '<', '&', '\ud83d\ude00');
  const text = fc.array(fc.oneof(fc.string({ unit: 'binary' }), special), { maxLength: 12 }).map((parts) => parts.join(''));
  const serialisation = fc.constantFrom(
    (value: string) => JSON.stringify({ input: value }),
    (value: string) => `{"input": ${JSON.stringify(value)}}`,
    (value: string) => escapeNonAscii(`{"input": ${JSON.stringify(value)}, "extra": 1}`),
    (value: string) => escapeHtmlLikeGo(`{"input":${JSON.stringify(value)}}\n`),
  );

  it('decodes any string, serialised any way and cut anywhere, to exactly that string', () => {
    fc.assert(
      fc.property(text, serialisation, fc.array(fc.nat(), { maxLength: 30 }), (value, serialise, cuts) => {
        assertDecodes(cutAt(serialise(value), cuts), value, JSON.stringify(value));
      }),
      { numRuns: 2000 },
    );
  });
});
