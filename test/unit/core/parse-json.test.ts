import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exceedsJsonNestingDepth } from '../../../src/core/parse-json.ts';

function nestedArrays(depth: number): unknown {
  let value: unknown = [];
  for (let level = 1; level < depth; level++) value = [value];
  return value;
}

describe('exceedsJsonNestingDepth', () => {
  it('counts arrays and objects as levels, scalars as none', () => {
    assert.equal(exceedsJsonNestingDepth('text', 0), false);
    assert.equal(exceedsJsonNestingDepth({ a: 1 }, 1), false);
    assert.equal(exceedsJsonNestingDepth({ a: [1] }, 1), true);
    assert.equal(exceedsJsonNestingDepth({ a: [{ b: null }] }, 3), false);
    assert.equal(exceedsJsonNestingDepth({ a: [{ b: {} }] }, 3), true);
  });
  it('finds the deep branch among wide siblings', () => {
    const body = { input: [{ content: 'x' }, { content: [{ deep: nestedArrays(600) }] }], tools: Array.from({ length: 50 }, () => ({ type: 'function' })) };
    assert.equal(exceedsJsonNestingDepth(body, 512), true);
    assert.equal(exceedsJsonNestingDepth(body, 700), false);
  });
});
