import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { makeControlCharactersVisible, renderTerminalText, stringifyJsonForTerminal, styled } from '../../../src/core/terminal-text.ts';

describe('makeControlCharactersVisible', () => {
  it('keeps tab, line feed and CR LF, and names every other C0 control, DEL and C1 control', () => {
    assert.equal(makeControlCharactersVisible('a\tb\nc\r\nd'), 'a\tb\nc\r\nd');
    for (let code = 0; code <= 0x9f; code += 1) {
      if (code === 0x09 || code === 0x0a || (code >= 0x20 && code < 0x7f)) continue;
      assert.equal(makeControlCharactersVisible(`<${String.fromCharCode(code)}>`), `<\\x${code.toString(16).padStart(2, '0')}>`, `U+${code.toString(16)}`);
    }
  });

  it('names a lone carriage return, which would let a line overwrite itself', () => {
    assert.equal(makeControlCharactersVisible('FAIL\rok  '), 'FAIL\\x0dok  ');
    assert.equal(makeControlCharactersVisible('end\r'), 'end\\x0d');
  });

  it('writes the escape sequences of a clipboard write, a title and a line erase as text', () => {
    assert.equal(makeControlCharactersVisible('\u001b]52;c;ZWNobyBQV05FRAo=\u0007\u001b]0;t\u001b\\\u001b[1A\u001b[2K'), '\\x1b]52;c;ZWNobyBQV05FRAo=\\x07\\x1b]0;t\\x1b\\\\x1b[1A\\x1b[2K');
  });

  it('leaves printable text alone: accents, CJK, emoji, lone surrogates, U+00A0 and above', () => {
    const text = 'café 模型 🦀 \ud800 \u00a0 \u2028 x';
    assert.equal(makeControlCharactersVisible(text), text);
  });
});

describe('renderTerminalText', () => {
  it('colours styled pieces only when asked, after making their text visible', () => {
    const line = ['time ', styled('200 completed\u001b[2K', 'green'), ' \u009b'];
    assert.equal(renderTerminalText(line, { colour: false }), 'time 200 completed\\x1b[2K \\x9b');
    assert.equal(renderTerminalText(line, { colour: true }), 'time \u001b[32m200 completed\\x1b[2K\u001b[0m \\x9b');
  });
});

describe('stringifyJsonForTerminal', () => {
  it('escapes DEL and C1 as JSON does C0, so the text parses back unchanged', () => {
    const value = { model: 'm\u001b\u007f\u009b\u0085 🦀' };
    const text = stringifyJsonForTerminal(value);
    assert.equal(makeControlCharactersVisible(text), text);
    assert.deepEqual(JSON.parse(text), value);
  });
});
