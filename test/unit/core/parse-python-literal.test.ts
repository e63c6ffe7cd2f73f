import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parsePythonStringDict } from '../../../src/core/parse-python-literal.ts';

describe('parsePythonStringDict', () => {
  it('reads plain strings with the escapes whose meaning is not in doubt', () => {
    assert.deepEqual(parsePythonStringDict(`{'a': 'x\\ny', "b": "it's", 'c': '\\x41\\u00e9\\U0001F600\\\\\\'\\"\\t\\r',}`), { a: 'x\ny', b: "it's", c: 'A\u00e9\u{1F600}\\\'"\t\r' });
    assert.deepEqual(parsePythonStringDict(' {}\n'), {});
  });

  it('gives null for every form with another reading or another meaning', () => {
    for (const text of [
      "{'a': 'x', 'a': 'y'}", // a repeated key: Python keeps the last, silently
      "{'a': 'x' 'y'}", // adjacent literals are joined
      "{'a': r'x'}",
      "{'a': b'x'}",
      "{'a': '''x'''}",
      "{'a': 'x\\d'}", // an unknown escape stays a backslash in Python, a JSON habit elsewhere
      "{'a': '\\101'}", // octal
      "{'a': '\\ud83d\\ude00'}", // two characters in Python, one in JavaScript
      "{'a': 'x\ny'}",
      "{'a': 1}",
      "{'a': 'x'} extra",
      "{'a': 'x'",
      "['a']",
    ]) {
      assert.equal(parsePythonStringDict(text), null, text);
    }
  });
});
