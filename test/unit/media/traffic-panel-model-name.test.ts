import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shortModelName, shortModelNames } from '../../../media/traffic-panel-model-name.ts';

describe('the panel\'s short model names', () => {
  it('keeps what tells GGUF models apart: the file name without folder and .gguf, the quantisation tag, without the -GGUF repository suffix', () => {
    assert.equal(shortModelName('/models/Qwen3-Coder-30B-A3B-Instruct-Q4_K_M.gguf'), 'Qwen3-Coder-30B-A3B-Instruct-Q4_K_M');
    assert.equal(shortModelName('unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M'), 'Qwen3-Coder-30B-A3B-Instruct:Q4_K_M');
    assert.equal(shortModelName('hf.co/unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M'), 'Qwen3-Coder-30B-A3B-Instruct:Q4_K_M');
    assert.equal(shortModelName('/srv/llm/Qwen3-Coder-480B-A35B-Instruct-Q4_K_M-00001-of-00006.gguf'), 'Qwen3-Coder-480B-A35B-Instruct-Q4_K_M');
    assert.equal(shortModelName('C:\\Users\\me\\models\\gemma-3-27b-it-Q8_0.GGUF'), 'gemma-3-27b-it-Q8_0');
  });

  it('drops the organisation of a hub id and the folder of a served directory', () => {
    assert.equal(shortModelName('Qwen/Qwen3-Coder-30B-A3B-Instruct'), 'Qwen3-Coder-30B-A3B-Instruct');
    assert.equal(shortModelName('qwen/qwen3-coder-30b'), 'qwen3-coder-30b');
    assert.equal(shortModelName('/data/models/Qwen3-Coder-30B-A3B-Instruct-FP8/'), 'Qwen3-Coder-30B-A3B-Instruct-FP8');
  });

  it('leaves plain names as they are', () => {
    for (const name of ['qwen3-coder', 'qwen3-coder:30b', 'gpt-oss-20b', 'gpt-oss:120b', 'gguf', '']) assert.equal(shortModelName(name), name);
  });

  it('keeps the full id of models whose short names would read alike', () => {
    const names = shortModelNames([
      'unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M',
      'bartowski/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M',
      '/models/gpt-oss-20b-mxfp4.gguf',
      '/models/gpt-oss-20b-mxfp4.gguf',
      'qwen3-coder',
    ]);
    assert.deepEqual(
      [...names],
      [
        ['unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M', 'unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M'],
        ['bartowski/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M', 'bartowski/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M'],
        ['/models/gpt-oss-20b-mxfp4.gguf', 'gpt-oss-20b-mxfp4'],
        ['qwen3-coder', 'qwen3-coder'],
      ],
    );
  });
});
