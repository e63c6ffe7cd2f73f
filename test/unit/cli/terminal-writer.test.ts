import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTerminalWriter, shouldUseColour } from '../../../src/cli/terminal-writer.ts';
import { styled } from '../../../src/core/terminal-text.ts';

function capture(isTTY: boolean, env: NodeJS.ProcessEnv = {}): { written: string[]; write: ReturnType<typeof createTerminalWriter> } {
  const written: string[] = [];
  return { written, write: createTerminalWriter({ isTTY, write: (text: string) => written.push(text) }, env) };
}

describe('createTerminalWriter', () => {
  it('makes foreign control characters visible on a pipe and on a terminal', () => {
    for (const isTTY of [false, true]) {
      const { written, write } = capture(isTTY);
      write('model \u001b]52;c;ZWNobyBQV05FRAo=\u0007 \u009b2J\n');
      write(['a ', styled('b\u001b[1A', 'red'), '\n']);
      assert.deepEqual(written, ['model \\x1b]52;c;ZWNobyBQV05FRAo=\\x07 \\x9b2J\n', isTTY ? 'a \u001b[31mb\\x1b[1A\u001b[0m\n' : 'a b\\x1b[1A\n']);
    }
  });

  it('adds its own colours only on a terminal that shows them', () => {
    const { written, write } = capture(true, { NO_COLOR: '1' });
    write([styled('12:00:01', 'dim')]);
    assert.deepEqual(written, ['12:00:01']);
  });
});

describe('shouldUseColour', () => {
  it('colours a terminal only, and never with NO_COLOR set or a dumb terminal', () => {
    assert.equal(shouldUseColour({ isTTY: true }, {}), true);
    assert.equal(shouldUseColour({ isTTY: false }, {}), false);
    assert.equal(shouldUseColour({}, {}), false);
    assert.equal(shouldUseColour({ isTTY: true }, { NO_COLOR: '1' }), false);
    assert.equal(shouldUseColour({ isTTY: true }, { NO_COLOR: '' }), true, 'an empty NO_COLOR is unset (no-color.org)');
    assert.equal(shouldUseColour({ isTTY: true }, { TERM: 'dumb' }), false);
  });
});
