import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exceedsJsonNestingDepth, findDuplicateTopLevelKeys, isSameJsonValue } from '../../../src/core/parse-json.ts';

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

describe('isSameJsonValue', () => {
  it('is equality of parsed JSON with keys in the same order', () => {
    assert.ok(isSameJsonValue({ a: [1, 'x', null, { b: true }] }, { a: [1, 'x', null, { b: true }] }));
    assert.ok(isSameJsonValue('', ''));
    assert.ok(!isSameJsonValue({ a: 1, b: 2 }, { b: 2, a: 1 }), 'key order is part of the value');
    assert.ok(!isSameJsonValue({ a: 1 }, { a: 1, b: undefined }));
    assert.ok(!isSameJsonValue({ a: undefined }, { b: undefined }));
    assert.ok(!isSameJsonValue([1, 2], [1, 2, 3]));
    assert.ok(!isSameJsonValue([], {}));
    assert.ok(!isSameJsonValue({}, []));
    assert.ok(!isSameJsonValue({ a: null }, { a: {} }));
    assert.ok(!isSameJsonValue({ a: '1' }, { a: 1 }));
    assert.ok(!isSameJsonValue({ deep: [{ x: [0] }] }, { deep: [{ x: [1] }] }));
  });
});

describe('findDuplicateTopLevelKeys', () => {
  it('names each key the outermost object repeats, however it is escaped', () => {
    assert.deepEqual(findDuplicateTopLevelKeys('{"input": "a", "x": 1, "input": "b", "\\u0078": 2}'), ['input', 'x']);
  });
  it('ignores nested objects, strings that look like keys, and arrays', () => {
    assert.deepEqual(findDuplicateTopLevelKeys('{"a": {"b": 1, "b": 2}, "c": "\\", \\"a\\": 1", "d": ["a", "a"]}'), []);
    assert.deepEqual(findDuplicateTopLevelKeys('["a", "a"]'), []);
    assert.deepEqual(findDuplicateTopLevelKeys('{"a": 1}'), []);
  });
});
