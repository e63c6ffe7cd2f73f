import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  applyQwenXmlParameterRules,
  renderArgumentBytes,
  splitIntoParameterMembers,
  splitLlamacppDiffs,
  truncatePieces,
} from '../../../mock-backend/argument-bytes.ts';
import { renderPythonJsonDumps } from '../../../mock-backend/python-text.ts';
import { fixturePath } from '../../support/fixtures.ts';

const examplesFolder = fixturePath('backend-examples');
const trickyInput = readFileSync(`${examplesFolder}/tricky-input.txt`, 'utf8');
const matrix = JSON.parse(readFileSync(`${examplesFolder}/arguments-matrix.json`, 'utf8')) as Record<string, string>;
const coercion = JSON.parse(readFileSync(`${examplesFolder}/qwen3coder-coercion-cases.json`, 'utf8')) as {
  cases: Array<{ raw: string; schema: { type?: string }; legacy: unknown }>;
};

describe('renderArgumentBytes: the byte forms of arguments-matrix.json', () => {
  const trimmed = { input: applyQwenXmlParameterRules(trickyInput) };

  it('Python json.dumps, spaced, raw UTF-8 (vLLM hermes non-stream)', () => {
    assert.equal(renderArgumentBytes({ input: trickyInput }, 'python-spaced'), matrix.vllm_hermes_nonstream);
  });

  it('Python json.dumps, ASCII-escaped with surrogate pairs (gpt-oss non-stream)', () => {
    assert.equal(renderArgumentBytes({ input: trickyInput }, 'python-ascii'), matrix.vllm_gptoss_nonstream);
  });

  it('compact raw (gpt-oss stream concatenation, llama.cpp)', () => {
    assert.equal(renderArgumentBytes({ input: trickyInput }, 'compact'), matrix.vllm_gptoss_stream_concat);
    assert.equal(renderArgumentBytes(trimmed, 'compact'), matrix.llamacpp_compact);
  });

  it('Go compact with HTML escapes (Ollama)', () => {
    assert.equal(renderArgumentBytes(trimmed, 'go-compact'), matrix.ollama_any_parser);
  });

  it('XML-parser profiles: value without its final newline (vLLM qwen3_coder, SGLang)', () => {
    assert.equal(renderArgumentBytes(trimmed, 'python-spaced'), matrix.vllm_qwen3coder_nonstream_and_stream_concat);
    assert.equal(renderArgumentBytes(trimmed, 'python-spaced'), matrix.sglang_qwen3coder);
  });

  it('all forms parse to the same object', () => {
    const forms = ['python-spaced', 'python-ascii', 'go-compact', 'compact'] as const;
    for (const form of forms) assert.deepEqual(JSON.parse(renderArgumentBytes({ input: trickyInput }, form)), { input: trickyInput });
  });
});

describe('applyQwenXmlParameterRules', () => {
  it('matches the legacy column of qwen3coder-coercion-cases.json for string-typed parameters', () => {
    const stringCases = coercion.cases.filter((testCase) => testCase.schema.type === 'string' || testCase.schema.type === undefined);
    assert.ok(stringCases.length >= 6);
    for (const testCase of stringCases) {
      assert.deepEqual(applyQwenXmlParameterRules(testCase.raw), testCase.legacy, JSON.stringify(testCase.raw));
    }
  });

  it('cuts the value at an embedded </parameter>', () => {
    assert.equal(applyQwenXmlParameterRules('\n+ a </parameter> tag\n'), '+ a ');
  });

  it('keeps the text null when the coercion is off (llama.cpp)', () => {
    assert.equal(applyQwenXmlParameterRules('null\n', { nullCoercion: false }), 'null');
  });
});

describe('stream fragmentation', () => {
  it('qwen3_coder members: {, one whole "name": value member, }', () => {
    const pieces = splitIntoParameterMembers({ input: 'a\nb', count: 2 });
    assert.deepEqual(pieces, ['{', '"input": "a\\nb"', ', "count": 2', '}']);
    assert.equal(pieces.join(''), renderPythonJsonDumps({ input: 'a\nb', count: 2 }, { ensureAscii: false }));
  });

  it('llama.cpp diffs: {, the key prefix, escape-safe pieces with every newline opening one, then " and }', () => {
    const pieces = splitLlamacppDiffs(matrix.llamacpp_compact ?? '');
    assert.deepEqual(pieces.slice(0, 2), ['{', '"input":"']);
    assert.deepEqual(pieces.slice(-2), ['"', '}']);
    assert.equal(pieces.join(''), matrix.llamacpp_compact);
    assert.ok(!pieces.some((piece) => /(^|[^\\])(\\\\)*\\$/.test(piece)), `a piece ends inside an escape: ${JSON.stringify(pieces)}`);
    assert.ok(!pieces.slice(0, -2).some((piece) => /(^|[^\\])(\\\\)*\\n$/.test(piece)), `a piece ends with a newline: ${JSON.stringify(pieces)}`);
    assert.ok(pieces.some((piece) => piece.startsWith('\\n')), 'no piece opens with a held-back newline');
  });

  it('truncatePieces keeps whole pieces and cuts the last one by code points', () => {
    assert.deepEqual(truncatePieces(['', '{', '"a": "👋👋"', '}'], 7), ['', '{', '"a": "']);
    assert.deepEqual(truncatePieces(['ab', '👋c'], 3), ['ab', '👋']);
  });
});
